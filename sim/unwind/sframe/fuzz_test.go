package sframe_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"simrun/sim/unwind/internal/shared"
	"simrun/sim/unwind/sframe"
)

// FuzzSFrameDecode: no input makes the decoder, dumper, lookup or
// encoder panic, and what decodes and re-encodes decodes again.
func FuzzSFrameDecode(f *testing.F) {
	s := sample()
	if b, err := sframe.Encode(s, sframe.EncodeOptions{}); err == nil {
		f.Add(b)
	}
	s.Version = 2
	s.FDEs = s.FDEs[:1]
	if b, err := sframe.Encode(s, sframe.EncodeOptions{}); err == nil {
		f.Add(b)
	}
	if dir := sharedDir(); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "sframe", "libsframe-decode", "*.bin"))
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
		hexes, _ := filepath.Glob(filepath.Join(dir, "sframe", "golden", "gas-cfi-sframe", "*.sframe.hex"))
		for _, h := range hexes {
			text, _ := os.ReadFile(h)
			if b, err := shared.Xxd(string(text)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := sframe.Decode(b)
		if err != nil {
			return
		}
		if err := sframe.Dump(io.Discard, s, ".sframe", 0x1000); err != nil {
			t.Fatalf("dump: %v", err)
		}
		if s.Flags&sframe.SFRAME_F_FDE_SORTED != 0 {
			for _, f := range s.FDEs {
				s.Find(f.Start)
				s.Find(f.Start + int64(f.Size) - 1)
			}
		}
		if s.Version == sframe.SFRAME_VERSION_1 {
			return
		}
		out, err := sframe.Encode(s, sframe.EncodeOptions{})
		if err != nil {
			return // a decodable rule the encoder refuses (e.g. RA = CFA+0)
		}
		if _, err := sframe.Decode(out); err != nil {
			t.Fatalf("re-encoded section does not decode: %v", err)
		}
	})
}

// sharedDir returns ../shared if it is there (fuzz seeds only).
func sharedDir() string {
	for d, _ := os.Getwd(); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(s); err == nil {
				return s
			}
			return ""
		}
	}
	return ""
}
