package s390x

import (
	"encoding/binary"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"simrun/internal/difftest"
	"simrun/programs"
	"simrun/sim/cpu"
)

// The random differential tests go beyond what the bundled programs
// execute: programs of random encodings of every implemented instruction
// (random register fields, masks, immediates, element sizes and rounding
// modes, kept only where simrun's decoder and x/arch both accept them),
// with registers full of edge values, run in lockstep with qemu.
// Relative branches jump over the next instruction. SIMRUN_RANDOM_PROGRAMS
// and SIMRUN_RANDOM_INSNS scale them.

const (
	codeAddr = 0x400000
	dataAddr = 0x410000
	bufAddr  = dataAddr + 0x1000
	bufSize  = 0x5000
	bufMid   = bufAddr + 0x2000 // r13 in the memory programs
)

// notRandom are instructions the generator leaves out: the supervisor
// call, branches to register addresses, pc-relative storage operands (they
// would address the code page), vcksm, whose end-around-carry sum qemu
// 7.2 gets wrong (words 1, 2, 3, 4 sum to 26 there), ex and exrl (random
// targets), the string instructions (their operands are registers that
// random values would send out of memory), efpc, sfpc, srnm, srnmb, lfpc
// and stfpc (random values in the FPC would enable traps or other
// rounding modes; TestQemuFPCControl runs them), lam, lamy, stam and
// stamy (a0:a1 hold the thread pointer; TestQemuFPCControl runs them): TestQemuStringAndExecute has
// the string instructions and ex; fpcProbe reads the FPC after every
// floating-point and vector instruction. mxdbr and mxdb: qemu 7.2 takes
// their first operand as an extended pair (testdata/bfp128.s).
var notRandom = map[op]bool{
	opVCKSM: true, opEX: true, opEXRL: true, opSRST: true, opCLST: true, opMVST: true, opEFPC: true, opSFPC: true,
	opSRNM: true, opSRNMB: true, opLFPC: true, opSTFPC: true, opLAM: true, opLAMY: true, opSTAM: true, opSTAMY: true,
	opSVC: true, opBCR: true, opBC: true, opBASR: true, opBAS: true, opBCTR: true, opBCTGR: true,
	opBCT: true, opBCTG: true, opCRB: true, opCGRB: true, opCLRB: true, opCLGRB: true, opCIB: true,
	opCGIB: true, opCLIB: true, opCLGIB: true, opMXDBR: true, opMXDB: true,
	opLGRL: true, opLRL: true, opLGFRL: true, opLLGFRL: true, opLHRL: true, opLGHRL: true, opLLHRL: true,
	opLLGHRL: true, opSTRL: true, opSTGRL: true, opSTHRL: true, opCRL: true, opCGRL: true, opCGFRL: true,
	opCLRL: true, opCLGRL: true, opCLGFRL: true, opCHRL: true, opCGHRL: true, opCLHRL: true, opCLGHRL: true,
}

// relBranch reports the relative branches, whose offset field (bits 16 on,
// 16 or 32 bits wide) the generator sets to skip one instruction.
func relBranch(o op) bool {
	switch o {
	case opJ, opBRC, opBRCL, opBRAS, opBRASL, opBRCT, opBRCTG, opBRXH, opBRXLE, opBRXHG, opBRXLG,
		opCRJ, opCGRJ, opCLRJ, opCLGRJ, opCIJ, opCGIJ, opCLIJ, opCLGIJ:
		return true
	}
	return false
}

func hasIndex(f uint8) bool {
	return f == fmtRX || f == fmtRXm || f == fmtRXE || f == fmtRXF || f == fmtRXY || f == fmtRXYm || f == fmtVRX
}

func hasBase(f uint8) bool {
	switch f {
	case fmtRS, fmtRSm, fmtRSY, fmtRSYm, fmtSI, fmtSIY, fmtSIL, fmtSSa, fmtVRSa, fmtVRSb, fmtVRSc:
		return true
	}
	return hasIndex(f)
}

// Divides get a divisor that cannot fault (random dividends would end
// most programs with a divide exception): the divisor register is loaded
// with a large positive value, or the storage divisor is one in the data
// image, and the high half of the dividend is zeroed where it has one.
func isDivide(o op) bool {
	switch o {
	case opD, opDR, opDL, opDLR, opDLG, opDLGR, opDSG, opDSGR, opDSGF, opDSGFR:
		return true
	}
	return false
}

func divisorSize(o op) int {
	if o == opDLG || o == opDSG {
		return 8
	}
	return 4
}

// randomEncoding returns random bytes for o with its opcode, zero reserved
// fields and, for memory programs, base r13, index r12 or none, and a
// displacement that stays inside the buffer.
func randomEncoding(r *rand.Rand, o op, memory bool) []byte {
	info := o.info()
	w := r.Uint64()
	if r.IntN(2) == 0 { // sparse fields: small masks, sizes and indexes are common
		w &= r.Uint64() & r.Uint64()
	}
	w &^= info.reserved
	first, ext := uint64(info.key>>8), uint64(info.key&0xff)
	w = w&^(0xff<<56) | first<<56
	switch extKinds[first] {
	case ext8at8:
		w = w&^(0xff<<48) | ext<<48
	case ext4at12:
		w = w&^(0xf<<48) | ext<<48
	case ext8at40:
		w = w&^(0xff<<16) | ext<<16
	}
	if memory && hasBase(info.format) {
		w = w&^(0xf<<44) | 13<<44 // B at bit 16
		if info.format == fmtSSa {
			w = w&^(0xf<<28) | 13<<28 // B2 at bit 32
		}
		if hasIndex(info.format) {
			w &^= 0xf << 48 // X at bit 12
			if r.IntN(2) == 0 {
				w |= 12 << 48
			}
		}
		switch info.format {
		case fmtRXY, fmtRXYm, fmtRSY, fmtRSYm, fmtSIY: // DH: 0 or -1
			w &^= 0xff << 24
			if r.IntN(2) == 0 {
				w |= 0xff << 24
			}
		}
		if atomicOp(o) {
			w &^= 7 << 32 // aligned displacement
		}
	}
	switch o {
	case opRNSBG, opROSBG, opRXSBG:
		w &^= 1 << 47 // qemu 7.2 crashes (SIGSEGV) on the test-only form
	}
	if info.format == fmtRILrel || info.format == fmtRILm {
		// qemu 7.2 adds 2*RI2 to the pc as a 32-bit value, wrongly for
		// offsets of 2 GiB and more: keep them below.
		w = w&^(0xffffffff<<16) | uint64(uint32(sext(w>>16&0xffffffff, 30)))<<16
	}
	b := make([]byte, info.length)
	for i := range b {
		b[i] = byte(w >> (56 - 8*i))
	}
	return b
}

func atomicOp(o op) bool {
	switch o {
	case opCS, opCSY, opCSG, opLAA, opLAAG, opLAAL, opLAALG, opLAN, opLANG, opLAO, opLAOG, opLAX, opLAXG:
		return true
	}
	return false
}

// pick draws an instruction simrun and x/arch both accept: a storage
// instruction for memory, else one without a storage operand.
func pick(r *rand.Rand, memory bool, drawn map[op]int) ([]byte, inst) {
	for {
		o := opFirst + op(r.IntN(int(opEnd-opFirst)))
		if notRandom[o] {
			continue
		}
		for try := 0; try < 200; try++ {
			b := randomEncoding(r, o, memory)
			in := decode(b)
			if in.op == opUndef || in.op == opSpec {
				continue
			}
			if cl, _ := memClass(&in); (cl != cpu.ClassOther) != memory {
				break
			}
			if _, ok := asmName(b); !ok {
				continue
			}
			drawn[o]++
			return b, in
		}
	}
}

// program lays out units (an instruction with the ones that prepare its
// operands) and points each relative branch past the unit after it.
type program struct {
	code    []byte
	pending int // offset of the branch waiting for the next unit, or -1
}

func (p *program) add(unit []byte) {
	p.code = append(p.code, unit...)
	if p.pending >= 0 {
		p.patch(p.pending, len(p.code))
		p.pending = -1
	}
}

// patch sets the relative offset of the branch at off to reach target.
func (p *program) patch(off, target int) {
	halfwords := uint64(target-off) / 2
	b := p.code[off:]
	if insnLen(b[0]) == 6 && (b[0] == 0xc0 || b[0] == 0xc4 || b[0] == 0xc6) { // RIL: 32 bits
		binary.BigEndian.PutUint32(b[2:], uint32(halfwords))
		return
	}
	binary.BigEndian.PutUint16(b[2:], uint16(halfwords))
}

func (p *program) branch(b []byte) {
	off := len(p.code)
	p.add(b)
	p.pending = off
}

// randomProgram loads random vector, general registers and condition code
// from its data segment, runs n random instructions and exits.
func randomProgram(r *rand.Rand, n int, memory bool, drawn map[op]int) []byte {
	data := make([]byte, bufAddr-dataAddr+bufSize)
	for i := 0; i < 512; i += 8 {
		binary.BigEndian.PutUint64(data[i:], difftest.RandFPBits(r))
	}
	for i := 512; i < 640; i += 8 {
		binary.BigEndian.PutUint64(data[i:], difftest.RandReg(r))
	}
	binary.BigEndian.PutUint64(data[640:], uint64(r.IntN(4))) // becomes the cc
	for i := bufAddr - dataAddr; i < len(data); i += 8 {
		binary.BigEndian.PutUint64(data[i:], difftest.RandFPBits(r))
	}
	p := &program{pending: -1}
	p.add(mustHex("c01000008000", // larl %r1,data
		"e70f10000036", "e70f11000c36", // vlm %v0,%v15,0(%r1); vlm %v16,%v31,256(%r1)
		"e30012800004", "a7010003", // lg %r0,640(%r1); tmll %r0,3 (cc = r0 & 3)
		"eb0f12000004")) // lmg %r0,%r15,512(%r1)
	for i := 0; i < n; i++ {
		mem := memory && r.IntN(5) < 2
		b, in := pick(r, mem, drawn)
		if relBranch(in.op) {
			p.branch(b)
			continue
		}
		if isDivide(in.op) && in.r2 < 16 && in.r2&^1 == in.r1 { // divisor in the pair
			i--
			continue
		}
		var unit []byte
		index := uint64(r.IntN(256))
		if mem { // larl %r13,bufMid; lghi %r12,index
			larl := []byte{0xc0, 0xd0, 0, 0, 0, 0}
			binary.BigEndian.PutUint32(larl[2:], uint32((bufMid-codeAddr-len(p.code))/2))
			unit = append(larl, 0xa7, 0xc9, 0, byte(index))
		}
		if isDivide(in.op) {
			divisor := uint32(0x10000 + r.IntN(0x7fff0000))
			if mem { // the storage divisor
				a := bufMid + int(in.imm)
				if in.r2 == 12 {
					a += int(index)
				}
				d := data[a-dataAddr:]
				if divisorSize(in.op) == 8 {
					binary.BigEndian.PutUint64(d, uint64(divisor))
				} else {
					binary.BigEndian.PutUint32(d, divisor)
				}
			} else { // llilf R2,divisor
				unit = append(unit, 0xc0, in.r2<<4|0xf)
				unit = binary.BigEndian.AppendUint32(unit, divisor)
			}
			switch in.op {
			case opD, opDR, opDL, opDLR, opDLG, opDLGR: // lghi R1,0
				unit = append(unit, 0xa7, in.r1<<4|9, 0, 0)
			}
		}
		unit = append(unit, b...)
		if in.op >= opLD { // floating point and vector: check and clear the IEEE flags
			unit = append(unit, fpcProbe...)
		}
		p.add(unit)
	}
	p.add([]byte{0x07, 0x07}) // nopr, skipped by a last branch
	p.add([]byte{0x0a, 0xf8}) // svc 248 (exit_group)
	return prog(p.code, data)
}

// fpcProbe follows every floating-point and vector instruction: the FPC
// into r0 (the lockstep compares it), its flags cleared (nilh sets the
// condition code, as it does in qemu), back into the FPC.
var fpcProbe = mustHex("b38c0000", "a506ff00", "b3840000") // efpc %r0; nilh %r0,0xff00; sfpc %r0

func runRandom(t *testing.T, memory bool, stream uint64) {
	drawn := map[op]int{}
	difftest.RandomPrograms(t, "s390x", programs.S390xQemuCPU, stream, func(r *rand.Rand, n int) []byte {
		return randomProgram(r, n, memory, drawn)
	})
	var missing []string
	for o := opFirst; o < opEnd; o++ {
		if drawn[o] == 0 && !notRandom[o] {
			missing = append(missing, o.String())
		}
	}
	sort.Strings(missing)
	t.Logf("%d different ops; never drawn: %s", len(drawn), strings.Join(missing, " "))
}

func TestQemuRandomInstructions(t *testing.T) { runRandom(t, false, 0x5eed) }

func TestQemuRandomMemory(t *testing.T) { runRandom(t, true, 0x3e3) }
