package profile

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
)

// ReadBuildID returns the GNU build-id of an ELF file (the descriptor of
// its NT_GNU_BUILD_ID note, as ld --build-id writes it and perf and
// debuginfod look files up by), or nil when it has none or is not ELF.
// It reads the PT_NOTE segments, else the SHT_NOTE sections.
func ReadBuildID(r io.ReaderAt) []byte {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			continue
		}
		if id := BuildIDNote(data, f.ByteOrder); id != nil {
			return id
		}
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 1<<20 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id := BuildIDNote(data, f.ByteOrder); id != nil {
			return id
		}
	}
	return nil
}

// BuildIDNote finds the NT_GNU_BUILD_ID note (name "GNU", type 3) in a
// run of ELF notes and returns its descriptor (nil: none; a note that
// runs past the data ends the search):
//
//	u32 namesz, descsz, type; name (padded to 4); desc (padded to 4)
func BuildIDNote(data []byte, order binary.ByteOrder) []byte {
	const ntGNUBuildID = 3
	for len(data) >= 12 {
		namesz, descsz, typ := uint64(order.Uint32(data)), uint64(order.Uint32(data[4:])), order.Uint32(data[8:])
		data = data[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := nameEnd + (descsz+3)&^3
		if nameEnd > uint64(len(data)) || descEnd > uint64(len(data)) || nameEnd+descsz > uint64(len(data)) {
			return nil
		}
		name := bytes.TrimRight(data[:namesz], "\x00")
		if typ == ntGNUBuildID && string(name) == "GNU" && descsz > 0 {
			return bytes.Clone(data[nameEnd : nameEnd+descsz])
		}
		data = data[descEnd:]
	}
	return nil
}
