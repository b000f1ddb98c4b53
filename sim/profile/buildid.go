package profile

import (
	"debug/elf"
	"io"

	"simrun/sim/elfsym"
)

// ReadBuildID returns the GNU build-id of an ELF file (elfsym.BuildID),
// or nil when it has none or is not ELF.
func ReadBuildID(r io.ReaderAt) []byte {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil
	}
	defer f.Close()
	return elfsym.BuildID(f)
}
