package cfi

import (
	"encoding/binary"
	"fmt"
)

// Error is a problem at a byte offset of a CFI section.
type Error struct {
	Section string // ".eh_frame" or ".debug_frame"
	Offset  int    // byte offset in the section
	Field   string // what was being read, e.g. "FDE pc_begin"
	Msg     string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s offset %#x: %s: %s", e.Section, e.Offset, e.Field, e.Msg)
}

// reader reads little pieces of a section with bounds checks.  The first
// failure sticks in err; later reads return zeros, so callers check err
// once after a group of reads.
type reader struct {
	sec   string
	b     []byte // the whole section
	pos   int    // next byte to read
	end   int    // reads stop here (end of the current record)
	order binary.ByteOrder
	err   error
}

func (r *reader) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = &Error{Section: r.sec, Offset: r.pos, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *reader) need(n int, field string) bool {
	if r.err != nil {
		return false
	}
	if n > r.end-r.pos || n < 0 {
		r.fail(field, "truncated (need %d bytes, %d left in the record)", n, r.end-r.pos)
		return false
	}
	return true
}

func (r *reader) u8(field string) uint8 {
	if !r.need(1, field) {
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

func (r *reader) u16(field string) uint16 {
	if !r.need(2, field) {
		return 0
	}
	v := r.order.Uint16(r.b[r.pos:])
	r.pos += 2
	return v
}

func (r *reader) u32(field string) uint32 {
	if !r.need(4, field) {
		return 0
	}
	v := r.order.Uint32(r.b[r.pos:])
	r.pos += 4
	return v
}

func (r *reader) u64(field string) uint64 {
	if !r.need(8, field) {
		return 0
	}
	v := r.order.Uint64(r.b[r.pos:])
	r.pos += 8
	return v
}

func (r *reader) bytes(n uint64, field string) []byte {
	if n > uint64(r.end-r.pos) {
		r.fail(field, "length %d runs past the end of the record (%d bytes left)", n, r.end-r.pos)
		return nil
	}
	if !r.need(int(n), field) {
		return nil
	}
	v := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return v
}

func (r *reader) uleb(field string) uint64 {
	var v uint64
	var shift uint
	start := r.pos
	for {
		if !r.need(1, field) {
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		} else if c&0x7f != 0 {
			r.pos = start
			r.fail(field, "ULEB128 value does not fit 64 bits")
			return 0
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb(field string) int64 {
	var v int64
	var shift uint
	start := r.pos
	for {
		if !r.need(1, field) {
			return 0
		}
		c := r.b[r.pos]
		r.pos++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		} else if c&0x7f != 0 && c&0x7f != 0x7f {
			r.pos = start
			r.fail(field, "SLEB128 value does not fit 64 bits")
			return 0
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *reader) cstring(field string) string {
	for i := r.pos; i < r.end; i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.pos:i])
			r.pos = i + 1
			return s
		}
	}
	r.fail(field, "string not terminated within the record")
	return ""
}

// ULEB128 and SLEB128 decode one LEB128 number from the start of b and
// return it with its length; n is 0 if b ends first.
func ULEB128(b []byte) (v uint64, n int) {
	r := reader{b: b, end: len(b)}
	v = r.uleb("")
	if r.err != nil {
		return 0, 0
	}
	return v, r.pos
}

// SLEB128 is the signed form of ULEB128.
func SLEB128(b []byte) (v int64, n int) {
	r := reader{b: b, end: len(b)}
	v = r.sleb("")
	if r.err != nil {
		return 0, 0
	}
	return v, r.pos
}
