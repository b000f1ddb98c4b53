package profile

import (
	"bytes"
	"testing"
)

// FuzzReadRecording: simrun report's reader never panics on a file, and
// what it accepts decodes to samples.
func FuzzReadRecording(f *testing.F) {
	sec, err := EncodeSection(&Summary{Program: "p", Arch: "arm64"}, Section{})
	if err != nil {
		f.Fatal(err)
	}
	pd := &PerfData{Comm: "x", PID: 1, Simrun: sec, Chunks: []AuxChunk{{Data: []byte{0xb0, 0x54, 0x12, 0x40, 0, 0, 0, 0, 0x80, 0x49, 0x00, 0x01}}}}
	var b bytes.Buffer
	if _, err := pd.WriteTo(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	// A run of several processes names their programs (here a device and
	// a missing file: neither is read whole).
	sec, err = EncodeSection(&Summary{Program: "p", Arch: "arm64"}, Section{
		Processes: []ProcessImage{{Pid: 1000, Comm: "a", Program: "/dev/zero"}, {Pid: 1001, Comm: "b", Program: "/nonexistent", Objects: []LoadedObject{{Path: "/dev/zero", Bias: 0x1000}}}},
		Tags:      []int{1, 0}, CPURecords: []int{1, 5}})
	if err != nil {
		f.Fatal(err)
	}
	pd.Simrun = sec
	b.Reset()
	if _, err := pd.WriteTo(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte("PERFILE2"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := ReadRecording(data, nil)
		if err == nil && rec == nil {
			t.Fatal("nil recording without an error")
		}
		_, _ = ReadFeature(data, FeatSimrun)
	})
}

// FuzzParseWeight: any --weight argument is one of the weights, whose
// name reads back, or an error.
func FuzzParseWeight(f *testing.F) {
	for _, s := range []string{"samples", "total", "issue", "xlat", "", "Total", "lat"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWeight(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if w.String() != s {
			t.Fatalf("%q parses to %v", s, w)
		}
	})
}
