package linux_test

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"

	"simrun/internal/elftest"
	"simrun/programs"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
)

// FuzzLoadELF feeds arbitrary files to the loader and runs whatever loads
// for a few thousand instructions: every outcome must be an error or a
// fault value, never a panic, and never a simulator-internal fault.
func FuzzLoadELF(f *testing.F) {
	for _, b := range programs.Binaries("") {
		if b.Name == "hello" || b.Name == "fib" {
			data, err := os.ReadFile(b.Path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
			f.Add(data[:len(data)/2])
		}
	}
	f.Add(elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, 0xd2800bc8, 0xd4000001), nil))
	f.Add(elftest.Code(elf.EM_S390, binary.BigEndian, []byte{0x0a, 0xf8}, nil))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := linux.New("fuzz.elf", data, linux.Config{MaxInsns: 5000})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		exit, err := m.Run()
		if err != nil {
			t.Fatalf("run error: %v", err)
		}
		if exit.Fault != nil && exit.Fault.Kind == cpu.FaultInternal {
			t.Fatalf("internal fault: %v", exit.Fault)
		}
	})
}
