// Package elftest builds small static ELF64 executables in memory, for
// tests that need a program with exact contents (bad input, single
// instructions) without a cross toolchain.
package elftest

import (
	"debug/elf"
	"encoding/binary"
)

// Segment is one PT_LOAD segment.
type Segment struct {
	Vaddr uint64
	Data  []byte
	Memsz uint64 // 0 means len(Data)
	Flags elf.ProgFlag
}

// File describes the executable.
type File struct {
	Machine  elf.Machine
	Order    binary.ByteOrder
	Type     elf.Type // 0 means ET_EXEC
	Entry    uint64
	Segments []Segment
}

// Bytes lays the file out: header, program headers, then each segment at
// a file offset congruent to its address modulo 4 KiB.
func (f *File) Bytes() []byte {
	const ehsize, phsize = 64, 56
	o := f.Order
	if o == nil {
		o = binary.LittleEndian
	}
	typ := f.Type
	if typ == 0 {
		typ = elf.ET_EXEC
	}
	off := uint64(ehsize + phsize*len(f.Segments))
	offs := make([]uint64, len(f.Segments))
	for i, s := range f.Segments {
		for off%4096 != s.Vaddr%4096 {
			off++
		}
		offs[i] = off
		off += uint64(len(s.Data))
	}
	b := make([]byte, off)
	copy(b, elf.ELFMAG)
	b[4] = byte(elf.ELFCLASS64)
	if o == binary.LittleEndian {
		b[5] = byte(elf.ELFDATA2LSB)
	} else {
		b[5] = byte(elf.ELFDATA2MSB)
	}
	b[6] = byte(elf.EV_CURRENT)
	o.PutUint16(b[16:], uint16(typ))
	o.PutUint16(b[18:], uint16(f.Machine))
	o.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	o.PutUint64(b[24:], f.Entry)
	o.PutUint64(b[32:], ehsize) // e_phoff
	o.PutUint16(b[52:], ehsize)
	o.PutUint16(b[54:], phsize)
	o.PutUint16(b[56:], uint16(len(f.Segments)))
	o.PutUint16(b[58:], 64) // e_shentsize
	for i, s := range f.Segments {
		p := b[ehsize+phsize*i:]
		memsz := s.Memsz
		if memsz == 0 {
			memsz = uint64(len(s.Data))
		}
		o.PutUint32(p[0:], uint32(elf.PT_LOAD))
		o.PutUint32(p[4:], uint32(s.Flags))
		o.PutUint64(p[8:], offs[i])
		o.PutUint64(p[16:], s.Vaddr)
		o.PutUint64(p[24:], s.Vaddr)
		o.PutUint64(p[32:], uint64(len(s.Data)))
		o.PutUint64(p[40:], memsz)
		o.PutUint64(p[48:], 4096)
		copy(b[offs[i]:], s.Data)
	}
	return b
}

// Code returns a file with one R+X segment at 0x400000 holding code, entry
// at its start, plus an optional RW data segment at 0x410000.
func Code(m elf.Machine, o binary.ByteOrder, code, data []byte) []byte {
	f := &File{Machine: m, Order: o, Entry: 0x400000,
		Segments: []Segment{{Vaddr: 0x400000, Data: code, Flags: elf.PF_R | elf.PF_X}}}
	if data != nil {
		f.Segments = append(f.Segments, Segment{Vaddr: 0x410000, Data: data, Flags: elf.PF_R | elf.PF_W})
	}
	return f.Bytes()
}

// Words encodes 32-bit instruction words in order o.
func Words(o binary.ByteOrder, ws ...uint32) []byte {
	b := make([]byte, 0, 4*len(ws))
	for _, w := range ws {
		b = o.(binary.AppendByteOrder).AppendUint32(b, w)
	}
	return b
}
