package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"0", 0, false},
		{"4096", 4096, false},
		{"100B", 100, false},
		{"4G", 4 << 30, false},
		{"4g", 4 << 30, false},
		{"512MiB", 512 << 20, false},
		{"512 MB", 512 << 20, false},
		{"2k", 2048, false},
		{"16T", 16 << 40, false},
		{"16777215T", 16777215 << 40, false},
		{"16777216T", 0, true}, // 2^64: does not fit
		{"18446744073709551615", ^uint64(0), false},
		{"18446744073709551616", 0, true},
		{"", 0, true},
		{"G", 0, true},
		{"1.5G", 0, true},
		{"-1", 0, true},
		{"+1", 0, true},
		{"5iB", 0, true},
		{"4X", 0, true},
		{"4GG", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0 bytes", 100: "100 bytes", 4096: "4 KiB", 4 << 30: "4 GiB",
		1536 << 20: "1536 MiB", 1 << 40: "1 TiB", 4097: "4097 bytes",
	} {
		assert.Equal(t, want, FormatSize(n))
	}
}

// FuzzParseSize: any string is a size or an error, and a size printed by
// FormatSize reads back as itself.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"4G", "512MiB", "0", "1.5G", "18446744073709551615", "16777216T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		back, err := ParseSize(removeSpace(FormatSize(n)))
		if err != nil || back != n {
			t.Fatalf("%q = %d prints as %q, reads back as %d, %v", s, n, FormatSize(n), back, err)
		}
	})
}

func removeSpace(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			out = append(out, s[i])
		}
	}
	if len(out) > 5 && string(out[len(out)-5:]) == "bytes" {
		out = out[:len(out)-5]
	}
	return string(out)
}
