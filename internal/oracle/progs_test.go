package oracle

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// Hand-assembled minimal static ELF executables, so that the tests need no
// cross compiler.  One PT_LOAD segment (R+X) maps the whole file at
// elfBase; the code follows the ELF and program headers.

const (
	elfBase = 0x400000
	elfHdrs = 64 + 56
	codeVA  = elfBase + elfHdrs // address of the first instruction
)

// asm collects machine code.
type asm struct {
	arch string
	b    []byte
}

func (a *asm) order() interface {
	binary.ByteOrder
	binary.AppendByteOrder
} {
	if a.arch == "arm64" {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// w emits an arm64 instruction word.
func (a *asm) w(insn uint32) { a.b = binary.LittleEndian.AppendUint32(a.b, insn) }

// raw emits bytes (s390x instructions, data).
func (a *asm) raw(b ...byte) { a.b = append(a.b, b...) }

func (a *asm) u64(v ...uint64) {
	for _, x := range v {
		a.b = a.order().AppendUint64(a.b, x)
	}
}

func (a *asm) align(n int) {
	for len(a.b)%n != 0 {
		a.b = append(a.b, 0)
	}
}

// arm64 encodings
func a64movz(rd, imm uint32) uint32 { return 0xd2800000 | imm<<5 | rd }
func a64adr(rd uint32, off int) uint32 {
	return 0x10000000 | uint32(off&3)<<29 | uint32(off>>2&0x7ffff)<<5 | rd
}
func a64addi(rd, rn, imm uint32) uint32 { return 0x91000000 | imm<<10 | rn<<5 | rd }
func a64b(off int) uint32               { return 0x14000000 | uint32(off>>2)&0x3ffffff }

const (
	a64svc0     = 0xd4000001 // svc #0
	a64cmpx2_3  = 0xf1000c5f // cmp x2, #3
	a64fmovd0_1 = 0x1e6e1000 // fmov d0, #1.0
	a64insv1x2  = 0x4e181c41 // mov v1.d[1], x2
	a64ldrx0x0  = 0xf9400000 // ldr x0, [x0]
)

// s390x encodings
func s390lghi(r byte, imm uint16) []byte { return []byte{0xa7, r<<4 | 9, byte(imm >> 8), byte(imm)} }
func s390aghi(r byte, imm uint16) []byte { return []byte{0xa7, r<<4 | 0xb, byte(imm >> 8), byte(imm)} }
func s390larl(r byte, off int) []byte {
	h := uint32(off / 2)
	return []byte{0xc0, r << 4, byte(h >> 24), byte(h >> 16), byte(h >> 8), byte(h)}
}
func s390svc(n byte) []byte { return []byte{0x0a, n} }
func s390j(off int) []byte {
	h := uint16(off / 2)
	return []byte{0xa7, 0xf4, byte(h >> 8), byte(h)}
}

var (
	s390cghi4_4     = []byte{0xa7, 0x4f, 0x00, 0x04}             // cghi %r4,4
	s390llihh5      = []byte{0xa5, 0x5c, 0x3f, 0xf0}             // llihh %r5,0x3ff0
	s390ldgr0_5     = []byte{0xb3, 0xc1, 0x00, 0x05}             // ldgr %f0,%r5
	s390vlvgg1_4_1  = []byte{0xe7, 0x14, 0x00, 0x01, 0x30, 0x22} // vlvgg %v1,%r4,1
	s390lg2_0r1     = []byte{0xe3, 0x20, 0x10, 0x00, 0x00, 0x04} // lg %r2,0(%r1)
	itimer20ms      = []uint64{0, 0, 0, 20000}                   // struct itimerval: 20 ms, once
	sigSEGV, sigALR = 11, 14
)

// writeELF writes a static executable with the given code to dir/name.
func writeELF(t testing.TB, dir, name, arch string, code []byte) string {
	t.Helper()
	a := &asm{arch: arch}
	bo := a.order()
	b := make([]byte, elfHdrs, elfHdrs+len(code))
	copy(b, "\x7fELF")
	b[4] = 2 // ELFCLASS64
	b[5] = 1 // ELFDATA2LSB
	machine := uint16(183)
	if arch == "s390x" {
		b[5] = 2 // ELFDATA2MSB
		machine = 22
	}
	b[6] = 1                // EV_CURRENT
	bo.PutUint16(b[16:], 2) // ET_EXEC
	bo.PutUint16(b[18:], machine)
	bo.PutUint32(b[20:], 1)
	bo.PutUint64(b[24:], codeVA) // e_entry
	bo.PutUint64(b[32:], 64)     // e_phoff
	bo.PutUint16(b[52:], 64)     // e_ehsize
	bo.PutUint16(b[54:], 56)     // e_phentsize
	bo.PutUint16(b[56:], 1)      // e_phnum
	ph := b[64:]
	bo.PutUint32(ph[0:], 1) // PT_LOAD
	bo.PutUint32(ph[4:], 5) // PF_R|PF_X
	bo.PutUint64(ph[16:], elfBase)
	bo.PutUint64(ph[24:], elfBase)
	bo.PutUint64(ph[32:], uint64(elfHdrs+len(code)))
	bo.PutUint64(ph[40:], uint64(elfHdrs+len(code)))
	bo.PutUint64(ph[48:], 0x1000)
	b = append(b, code...)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// testProg is a hand-assembled guest program and what to expect from it.
type testProg struct {
	code  []byte
	insns uint64   // executed instructions (0 = not fixed)
	pcs   []uint64 // offsets from codeVA of the executed instructions, in order
}

// progHi writes "hi\n" to stdout, exercises the flags and two SIMD/FP
// registers, and exits with status 7.
func progHi(arch string) testProg {
	a := &asm{arch: arch}
	if arch == "arm64" {
		a.w(a64movz(0, 1))       // 00 x0 = 1 (stdout)
		a.w(a64adr(1, 0x2c-0x4)) // 04 x1 = msg
		a.w(a64movz(2, 3))       // 08 x2 = 3
		a.w(a64movz(8, 64))      // 0c write
		a.w(a64svc0)             // 10
		a.w(a64cmpx2_3)          // 14 NZCV = 0110
		a.w(a64fmovd0_1)         // 18 q0 = 1.0 in the low 64 bits
		a.w(a64insv1x2)          // 1c q1 high 64 bits = 3
		a.w(a64movz(0, 7))       // 20
		a.w(a64movz(8, 94))      // 24 exit_group
		a.w(a64svc0)             // 28
		a.raw('h', 'i', '\n')    // 2c msg
		return testProg{a.b, 11, []uint64{0, 4, 8, 0xc, 0x10, 0x14, 0x18, 0x1c, 0x20, 0x24, 0x28}}
	}
	a.raw(s390lghi(2, 1)...)        // 00 r2 = 1
	a.raw(s390larl(3, 0x28-0x4)...) // 04 r3 = msg
	a.raw(s390lghi(4, 3)...)        // 0a r4 = 3
	a.raw(s390svc(4)...)            // 0e write
	a.raw(s390cghi4_4...)           // 10 cc = 1 (3 < 4)
	a.raw(s390llihh5...)            // 14 r5 = 0x3ff0000000000000
	a.raw(s390ldgr0_5...)           // 18 f0 = 1.0
	a.raw(s390vlvgg1_4_1...)        // 1c v1 element 1 (low 64 bits) = 3
	a.raw(s390lghi(2, 7)...)        // 22
	a.raw(s390svc(248)...)          // 26 exit_group
	a.raw('h', 'i', '\n')           // 28 msg
	return testProg{a.b, 10, []uint64{0, 4, 0xa, 0xe, 0x10, 0x14, 0x18, 0x1c, 0x22, 0x26}}
}

// progSegv loads from address 0.
func progSegv(arch string) testProg {
	a := &asm{arch: arch}
	if arch == "arm64" {
		a.w(a64movz(0, 0))
		a.w(a64ldrx0x0)
	} else {
		a.raw(s390lghi(1, 0)...)
		a.raw(s390lg2_0r1...)
	}
	return testProg{a.b, 2, []uint64{0, 4}}
}

// progAlarm arms a 20 ms ITIMER_REAL and then counts in r3/x3 forever, so
// it dies of SIGALRM, delivered asynchronously.  The loop is at offset
// loopOff, its two instructions 4 bytes apart.
func progAlarm(arch string) (p testProg, loopOff uint64) {
	a := &asm{arch: arch}
	if arch == "arm64" {
		a.w(a64movz(0, 0))       // 00 ITIMER_REAL
		a.w(a64adr(1, 0x20-0x4)) // 04 x1 = &itv
		a.w(a64movz(2, 0))       // 08 no old value
		a.w(a64movz(8, 103))     // 0c setitimer
		a.w(a64svc0)             // 10
		a.w(a64addi(3, 3, 1))    // 14 loop: x3++
		a.w(a64b(-4))            // 18 b loop
		a.align(8)               // 1c
		a.u64(itimer20ms...)     // 20
		return testProg{code: a.b}, 0x14
	}
	a.raw(s390lghi(2, 0)...)        // 00 ITIMER_REAL
	a.raw(s390larl(3, 0x18-0x4)...) // 04 r3 = &itv
	a.raw(s390lghi(4, 0)...)        // 0a
	a.raw(s390svc(104)...)          // 0e setitimer
	a.raw(s390aghi(3, 1)...)        // 10 loop: r3++
	a.raw(s390j(-4)...)             // 14 j loop
	a.u64(itimer20ms...)            // 18
	return testProg{code: a.b}, 0x10
}

// progSpin loops forever.
func progSpin(arch string) testProg {
	a := &asm{arch: arch}
	if arch == "arm64" {
		a.w(a64b(0))
	} else {
		a.raw(s390j(0)...)
	}
	return testProg{code: a.b}
}

// progHandled installs a SIGALRM handler (which just returns), arms a
// periodic 2 ms ITIMER_REAL and runs a counting loop of handledIters
// iterations (three instructions each, at loopOff), then exits with status
// 0.  The timer signals arrive asynchronously in the middle of the loop.
const handledIters = 10000

func progHandled(arch string) (p testProg, loopOff, handlerOff uint64) {
	a := &asm{arch: arch}
	if arch == "arm64" {
		a.w(a64movz(0, 14))           // 00 SIGALRM
		a.w(a64adr(1, 0x50-0x4))      // 04 x1 = &act
		a.w(a64movz(2, 0))            // 08 no old action
		a.w(a64movz(3, 8))            // 0c sigsetsize
		a.w(a64movz(8, 134))          // 10 rt_sigaction
		a.w(a64svc0)                  // 14
		a.w(a64movz(0, 0))            // 18 ITIMER_REAL
		a.w(a64adr(1, 0x70-0x1c))     // 1c x1 = &itv
		a.w(a64movz(2, 0))            // 20
		a.w(a64movz(8, 103))          // 24 setitimer
		a.w(a64svc0)                  // 28
		a.w(a64movz(3, 0))            // 2c
		a.w(a64movz(4, handledIters)) // 30
		a.w(a64addi(3, 3, 1))         // 34 loop: x3++
		a.w(0xeb04007f)               // 38 cmp x3, x4
		a.w(0x54ffffc1)               // 3c b.ne loop
		a.w(a64movz(0, 0))            // 40
		a.w(a64movz(8, 94))           // 44 exit_group
		a.w(a64svc0)                  // 48
		a.w(0xd65f03c0)               // 4c handler: ret
		a.u64(codeVA+0x4c, 0, 0, 0)   // 50 act: handler, flags, restorer, mask
		a.u64(0, 2000, 0, 2000)       // 70 itv: every 2 ms
		return testProg{code: a.b}, 0x34, 0x4c
	}
	a.raw(s390lghi(2, 14)...)           // 00 SIGALRM
	a.raw(s390larl(3, 0x40-0x4)...)     // 04 r3 = &act
	a.raw(s390lghi(4, 0)...)            // 0a
	a.raw(s390lghi(5, 8)...)            // 0e sigsetsize
	a.raw(s390svc(174)...)              // 12 rt_sigaction
	a.raw(s390lghi(2, 0)...)            // 14 ITIMER_REAL
	a.raw(s390larl(3, 0x60-0x18)...)    // 18 r3 = &itv
	a.raw(s390lghi(4, 0)...)            // 1e
	a.raw(s390svc(104)...)              // 22 setitimer
	a.raw(s390lghi(3, 0)...)            // 24
	a.raw(s390lghi(4, handledIters)...) // 28
	a.raw(s390aghi(3, 1)...)            // 2c loop: r3++
	a.raw(0xb9, 0x20, 0x00, 0x34)       // 30 cgr %r3,%r4
	a.raw(0xa7, 0x74, 0xff, 0xfc)       // 34 jne loop
	a.raw(s390lghi(2, 0)...)            // 38
	a.raw(s390svc(248)...)              // 3c exit_group
	a.raw(0x07, 0xfe)                   // 3e handler: br %r14
	a.u64(codeVA+0x3e, 0, 0, 0)         // 40 act
	a.u64(0, 2000, 0, 2000)             // 60 itv
	return testProg{code: a.b}, 0x2c, 0x3e
}
