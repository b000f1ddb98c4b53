package gdbstub

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadEvent(t *testing.T) {
	long := "$" + strings.Repeat("a", maxPacket+1) + "#00"
	tests := []struct {
		name string
		in   string
		want []event
		err  error // after the events
	}{
		{"packet", "$g#67", []event{{kind: evPacket, data: "g"}}, io.EOF},
		{"upper-case checksum", "$qC#B4", []event{{kind: evPacket, data: "qC"}}, io.EOF},
		{"bad checksum", "$g#68", []event{{kind: evBadPacket, data: "g"}}, io.EOF},
		{"non-hex checksum", "$g#zz", []event{{kind: evBadPacket, data: "g"}}, io.EOF},
		{"acks and interrupt", "+-\x03", []event{{kind: evAck}, {kind: evNack}, {kind: evInterrupt}}, io.EOF},
		{"noise skipped", "xyz\n$?#3f", []event{{kind: evPacket, data: "?"}}, io.EOF},
		{"restarted packet", "$g$?#3f", []event{{kind: evPacket, data: "?"}}, io.EOF},
		{"empty packet", "$#00", []event{{kind: evPacket, data: ""}}, io.EOF},
		{"cut in data", "$qSupp", nil, io.ErrUnexpectedEOF},
		{"cut in checksum", "$g#6", nil, io.ErrUnexpectedEOF},
		{"too long", long, nil, errTooLong},
		{"binary kept escaped", "$X0,1:}]#" + checksum("X0,1:}]"), []event{{kind: evPacket, data: "X0,1:}]"}}, io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.in))
			var got []event
			var err error
			for {
				var ev event
				if ev, err = readEvent(r); err != nil {
					break
				}
				got = append(got, ev)
			}
			require.Equal(t, tc.want, got)
			require.True(t, errors.Is(err, tc.err), "error %v, want %v", err, tc.err)
		})
	}
}

func checksum(s string) string {
	f := frame([]byte(s))
	return string(f[len(f)-2:])
}

func TestFrame(t *testing.T) {
	tests := []struct{ data, want string }{
		{"", "$#00"},
		{"OK", "$OK#9a"},
		{"g", "$g#67"},
		{"qSupported", "$qSupported#37"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, string(frame([]byte(tc.data))))
	}
}

func TestEscape(t *testing.T) {
	tests := []struct{ raw, esc string }{
		{"abc", "abc"},
		{"#", "}\x03"},
		{"$", "}\x04"},
		{"}", "}]"},
		{"*", "}\x0a"},
		{"a#b}c", "a}\x03b}]c"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.esc, string(escape(nil, []byte(tc.raw))), tc.raw)
		back, err := unescape(tc.esc)
		require.NoError(t, err)
		require.Equal(t, tc.raw, string(back))
	}
	_, err := unescape("ab}")
	require.Error(t, err, "an escape at the end")
}

func TestHex(t *testing.T) {
	b, err := decodeHex("00ff7F")
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0xff, 0x7f}, b)
	require.Equal(t, "00ff7f", string(appendHex(nil, b)))
	for _, bad := range []string{"0", "0g", "zz"} {
		_, err := decodeHex(bad)
		require.Error(t, err, bad)
	}
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"ffffffffffffffff", ^uint64(0), true}, {"1ffffffffffffffff", 0, false},
		{"", 0, false}, {"-1", 0, false}, {"4000f0", 0x4000f0, true},
	} {
		v, err := parseHexU64(tc.in)
		require.Equal(t, tc.ok, err == nil, tc.in)
		require.Equal(t, tc.want, v, tc.in)
	}
	a, n, err := parseAddrLen("4000f0,10")
	require.NoError(t, err)
	require.Equal(t, [2]uint64{0x4000f0, 0x10}, [2]uint64{a, n})
	for _, bad := range []string{"", "10", "x,1", "1,", ",1"} {
		_, _, err := parseAddrLen(bad)
		require.Error(t, err, bad)
	}
}

func TestSignals(t *testing.T) {
	// gdb's numbers for the signals whose Linux numbers differ.
	for linux, gdb := range map[int]int{11: 11, 5: 5, 7: 10, 10: 30, 12: 31, 17: 20, 19: 17, 31: 12, 32: 77, 33: 45, 64: 78} {
		require.Equal(t, gdb, gdbSignal(linux), "Linux signal %d", linux)
		require.Equal(t, linux, linuxSignal(gdb), "gdb signal %d", gdb)
	}
	require.Equal(t, 0, gdbSignal(0))
	require.Equal(t, 0, linuxSignal(0))
	require.Equal(t, 0, linuxSignal(200))
}

// FuzzPacket: any bytes from the peer are framed into events without a
// panic, each packet's data is at most maxPacket bytes, and a good
// packet's data framed again reads back the same.
func FuzzPacket(f *testing.F) {
	for _, s := range []string{"$g#67", "+$qSupported:multiprocess+;swbreak+#00", "\x03", "$X0,2:}]}\x03#00", "-$", "$#00$m0,4#fd"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		for {
			ev, err := readEvent(r)
			if err != nil {
				return
			}
			if len(ev.data) > maxPacket {
				t.Fatalf("packet of %d bytes", len(ev.data))
			}
			if ev.kind == evPacket {
				again, err := readEvent(bufio.NewReader(bytes.NewReader(frame([]byte(ev.data)))))
				if err != nil || again != ev {
					t.Fatalf("%q framed again reads %v, %v", ev.data, again, err)
				}
			}
		}
	})
}
