package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
)

// BuildID returns the GNU build-id of an ELF file (the descriptor of its
// NT_GNU_BUILD_ID note, as ld --build-id writes it and perf, gdb and
// debuginfod look files up by), or nil when it has none. It reads the
// PT_NOTE segments, else the SHT_NOTE sections.
func BuildID(f *elf.File) (id []byte) {
	defer func() {
		if recover() != nil { // debug/elf has had panics on hostile input
			id = nil
		}
	}()
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

// DebugFile finds the separate debug file of the stripped ELF file at
// path whose build-id is id: .build-id/XX/REST.debug (XX the id's first
// byte in hex, REST the others) under usr/lib/debug of the file's own
// root, where Debian's -dbg packages put them and gdb and perf (with
// --symfs) look. The root is the nearest directory above path that has
// one: a sysroot's for a file in it, the host's (/) for a host file. ""
// when there is none.
func DebugFile(path string, id []byte) string {
	if len(id) < 2 {
		return ""
	}
	h := hex.EncodeToString(id)
	rel := filepath.Join("usr", "lib", "debug", ".build-id", h[:2], h[2:]+".debug")
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, rel)
		if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
			return cand
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

// ReadFile is Read of f, the ELF file at path, looking further when f is
// stripped (no .symtab): the symbols of its separate debug file
// (DebugFile), which names the functions a stripped library does not
// export (libc's msort_with_tmp, say), as perf and gdb name them. A debug
// file that cannot be read, or is not the same build, is ignored.
func ReadFile(f *elf.File, path string) (Table, error) {
	if f.Section(".symtab") == nil {
		if id := BuildID(f); id != nil {
			if dbg := DebugFile(path, id); dbg != "" {
				if t, ok := readDebug(dbg, id, f.Machine); ok {
					return t, nil
				}
			}
		}
	}
	return Read(f)
}

// readDebug reads the .symtab of the debug file at path, if it is the
// build id for machine.
func readDebug(path string, id []byte, machine elf.Machine) (Table, bool) {
	d, err := elf.Open(path)
	if err != nil {
		return nil, false
	}
	defer d.Close()
	if d.Machine != machine || !bytes.Equal(BuildID(d), id) || d.Section(".symtab") == nil {
		return nil, false
	}
	t, err := Read(d)
	return t, err == nil && len(t) > 0
}
