package arm64

import (
	"debug/elf"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"simrun/internal/difftest"
	"simrun/internal/elftest"
)

// The random differential test goes beyond what the bundled programs
// execute: it generates programs of random data-processing, FP and AdvSIMD
// encodings (every word that both simrun's decoder and x/arch accept), with
// random register contents rich in edge values, and runs them in lockstep
// with qemu. SIMRUN_RANDOM_PROGRAMS and SIMRUN_RANDOM_INSNS scale it.

const (
	dataAddr = 0x410000
	codeAddr = 0x400000
)

// randomGroups are bit patterns (mask, value) of encoding groups to draw
// from; the rest of each word is random.
var randomGroups = []struct {
	name        string
	mask, value uint32
	weight      int
}{
	{"dp-imm", 0x1c000000, 0x10000000, 2},
	{"dp-reg", 0x0e000000, 0x0a000000, 3},
	{"fp-scalar", 0x5f000000, 0x1e000000, 3},
	{"fp-3src", 0x5f000000, 0x1f000000, 1},
	{"simd-vector", 0x9f000000, 0x0e000000, 6},
	{"simd-vector-u", 0x9f000000, 0x2e000000, 5},
	{"simd-imm/shift/elem", 0x9e000000, 0x0e000000 | 1<<24, 3},
	{"simd-scalar", 0xdf000000, 0x5e000000, 3},
	{"simd-scalar-u", 0xdf000000, 0x7e000000, 2},
	{"simd-scalar-shift/elem", 0xdf000000, 0x5f000000, 2},
	{"crypto-aes", 0xffffcc00, 0x4e284800, 1},
	{"crypto-sha-3reg", 0xffe08c00, 0x5e000000, 1},
	{"crypto-sha-2reg", 0xffffcc00, 0x5e280800, 1},
	{"pmull-1q", 0xbfe0fc00, 0x0ee0e000, 1},
}

// edge values for registers and lanes
var edge64 = []uint64{0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
	0x100000000, 0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff, 0xfffffffffffffffe}

var edgeF32 = []uint32{0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
	0xffc00001, 0x00000001, 0x807fffff, 0x7f7fffff, 0x4f000000, 0xcf000000, 0x5f000000, 0x3f000000, 0x4b400000}

var edgeF64 = []uint64{0, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x7ff0000000000000,
	0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001, 0xfff8000000000001, 1, 0x000fffffffffffff,
	0x43e0000000000000, 0xc3e0000000000000, 0x41e0000000000000, 0x3fe0000000000000, 0x4338000000000000}

func randReg(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return edge64[r.IntN(len(edge64))]
	case 1:
		return r.Uint64() >> r.IntN(64)
	}
	return r.Uint64()
}

func randVecHalf(r *rand.Rand) uint64 {
	if randomFPCR&fpcrFZ != 0 && r.IntN(4) == 0 { // values near and below the normal range
		if r.IntN(2) == 0 {
			return math.Float64bits(r.NormFloat64() * math.Pow(2, float64(-1022-r.IntN(60)+8)))
		}
		s := func() uint64 {
			return uint64(math.Float32bits(float32(r.NormFloat64() * math.Pow(2, float64(-126-r.IntN(30)+4)))))
		}
		return s() | s()<<32
	}
	switch r.IntN(5) {
	case 0:
		return uint64(edgeF32[r.IntN(len(edgeF32))]) | uint64(edgeF32[r.IntN(len(edgeF32))])<<32
	case 1:
		return edgeF64[r.IntN(len(edgeF64))]
	case 2: // small floats
		return uint64(math.Float32bits(float32(r.NormFloat64()*100))) | uint64(math.Float32bits(float32(r.NormFloat64())))<<32
	case 3:
		return math.Float64bits(r.NormFloat64() * math.Pow(2, float64(r.IntN(80)-40)))
	}
	return randReg(r)
}

// pickWord draws a word that simrun decodes, x/arch knows, and that is
// neither a load/store nor a branch or system instruction.
func pickWord(r *rand.Rand, skipped map[string]int) uint32 {
	total := 0
	for _, g := range randomGroups {
		total += g.weight
	}
	for {
		k := r.IntN(total)
		gi := 0
		for ; k >= randomGroups[gi].weight; gi++ {
			k -= randomGroups[gi].weight
		}
		g := randomGroups[gi]
		w := r.Uint32()&^g.mask | g.value
		in := decode(w, codeAddr)
		b := binary.LittleEndian.AppendUint32(nil, w)
		ai, err := asmDecode(b)
		if err != nil {
			continue
		}
		if in.op == opUndef {
			if !needsAbsentFeature(ai) {
				skipped[ai.Op.String()]++
			}
			continue
		}
		switch in.op {
		case opMrs, opMsr, opSvc, opBrk, opClrex, opSysNop, opLdSt, opLdStP, opVLdSt, opDcZva:
			continue
		}
		switch opTable[in.op].group {
		case grpBranch, grpTestBranch, grpIndirect, grpLdStHot, grpPair, grpLoadEx, grpStoreEx, grpAtomic:
			continue
		}
		return w
	}
}

// randomProgram returns an ELF that loads random registers and flags from
// its data segment, runs n random instructions and exits.
func randomProgram(r *rand.Rand, n int, skipped map[string]int) []byte {
	const x30 = 30
	var code []uint32
	code = append(code, 0xd2800000|(dataAddr&0xffff)<<5|x30, 0xf2a00000|(dataAddr>>16)<<5|x30)
	var data []byte
	put := func(v uint64) { data = binary.LittleEndian.AppendUint64(data, v) }
	for q := 0; q < 32; q += 2 { // ldp q, q, [x30], #32
		code = append(code, 0xacc10000|uint32(q+1)<<10|x30<<5|uint32(q))
		for i := 0; i < 4; i++ {
			put(randVecHalf(r))
		}
	}
	code = append(code, 0xa8c10000|1<<10|x30<<5, 0xd51b4200) // ldp x0, x1, [x30], #16; msr nzcv, x0
	if randomFPCR != 0 {
		code = append(code, 0xd51b4401) // msr fpcr, x1
	}
	put(uint64(r.IntN(16)) << 28)
	put(randomFPCR)
	for x := 0; x < 30; x += 2 { // ldp x, x, [x30], #16
		code = append(code, 0xa8c10000|uint32(x+1)<<10|x30<<5|uint32(x))
		put(randReg(r))
		put(randReg(r))
	}
	code = append(code, 0xf94003de) // ldr x30, [x30]
	put(randReg(r))
	for i := 0; i < n; i++ {
		code = append(code, pickWord(r, skipped))
	}
	code = append(code, 0xd2800bc8, 0xd4000001) // mov x8, #94; svc #0
	return elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, code...), data)
}

// randomFPCR, if not 0, is the FPCR the random programs run with.
var randomFPCR uint64

// TestQemuRandomFlushToZero runs the random programs with FPCR.FZ set
// (as gcc's -ffast-math start-up sets it), with and without DN, their
// vector registers often holding values near and below the normal range.
func TestQemuRandomFlushToZero(t *testing.T) {
	defer func() { randomFPCR = 0 }()
	for _, fpcr := range []uint64{fpcrFZ, fpcrFZ | fpcrDN} {
		randomFPCR = fpcr
		skipped := map[string]int{}
		difftest.RandomPrograms(t, "arm64", "", 0xf20+fpcr>>25, func(r *rand.Rand, n int) []byte { return randomProgram(r, n, skipped) })
	}
}

func TestQemuRandomInstructions(t *testing.T) {
	skipped := map[string]int{}
	difftest.RandomPrograms(t, "arm64", "", 0x5eed, func(r *rand.Rand, n int) []byte { return randomProgram(r, n, skipped) })
	// Encodings x/arch accepts that simrun treats as undefined: features
	// this CPU does not have (FP16, ...) and a few
	// encodings the architecture reserves but x/arch decodes anyway (e.g.
	// extended-register shifts above 4).
	var names []string
	for k := range skipped {
		names = append(names, k)
	}
	sort.Strings(names)
	t.Logf("drawn but undefined in simrun: %s", strings.Join(names, " "))
}

// Memory programs: random loads and stores of every form (single, pair,
// pre/post-index, register offset, literal, exclusive, atomic, AdvSIMD
// structures) based on x30, which points into a 80 KiB buffer and is reset
// every few instructions; x28 holds a small index for register offsets.
// Other instructions may not write x28, x30 or sp.

const (
	memBufSize = 80 << 10
	memBase    = dataAddr + 0x1000 // x30: room below for negative offsets
)

// writesProtected reports whether in writes x28, x30 or sp other than as
// the base register of a load/store.
func writesProtected(in inst) bool {
	prot := func(r uint8) bool { return r == 28 || r == 30 || r == rSP }
	spec := opTable[in.op]
	switch {
	case in.op == opLdSt:
		intLoad := !lsTypes[in.a].store && !lsTypes[in.a].fp && in.a != lsPrfm
		return intLoad && prot(in.rd) || (in.b != amOff && in.rn != 30)
	case in.op == opLdStP:
		intLoad := in.a == lpLdW || in.a == lpLdX || in.a == lpLdSW
		return intLoad && (prot(in.rd) || prot(in.ra)) || (in.b != amOff && in.rn != 30)
	case spec.group == grpLdStHot:
		return spec.flags&opfLoad != 0 && prot(in.rd)
	case spec.group == grpPair:
		return spec.flags&opfLoad != 0 && (prot(in.rd) || prot(in.ra))
	case in.op == opLdxr || in.op == opLdar || in.op == opAtom || in.op == opSwp:
		return prot(in.rd)
	case in.op == opLdxp:
		return prot(in.rd) || prot(in.ra)
	case in.op == opStxr || in.op == opStxp:
		return prot(in.rm)
	case in.op == opCas:
		return prot(in.rm)
	case in.op == opCasp:
		return in.rm == 28 || in.rm+1 == 28 || in.rm == 30 || in.rm+1 == 30
	case in.op == opVLdSt:
		return in.b&lsvPost != 0 && in.rn != 30
	case !groupExecFP[spec.group] && spec.group != grpPAuth && spec.group != grpMarker:
		return prot(in.rd)
	case in.op == opFmovToGP || in.op == opFcvtToInt:
		return prot(in.rd)
	case in.op == opSimd:
		sub := int(in.imm & 0xffff)
		return (sub == vSmov || sub == vUmov) && prot(in.rd)
	}
	return false
}

func pairLoad(in inst) bool {
	switch in.op {
	case opLdpXo, opLdpXpre, opLdpXpost, opLdxp:
		return true
	case opLdStP:
		return !lpTypes[in.a].store
	}
	return false
}

func isMemOp(o op) bool {
	switch opTable[o].group {
	case grpLdStHot, grpLdSt, grpPair, grpLoadEx, grpStoreEx, grpAtomic, grpVLdSt:
		return true
	}
	return false
}

// pickMemWord draws a load/store on x30 (index register x28).
func pickMemWord(r *rand.Rand, skipped map[string]int) uint32 {
	for {
		w := r.Uint32()&^0x0a000000 | 0x08000000
		w = w&^(31<<5) | 30<<5   // Rn = x30
		w = w&^(31<<16) | 28<<16 // Rm (or immediate bits) = 28
		in := decode(w, codeAddr)
		if _, err := asmDecode(binary.LittleEndian.AppendUint32(nil, w)); err != nil {
			continue
		}
		if in.op == opUndef {
			if ai, err := asmDecode(binary.LittleEndian.AppendUint32(nil, w)); err == nil && !needsAbsentFeature(ai) {
				skipped[ai.Op.String()]++
			}
			continue
		}
		if !isMemOp(in.op) || in.op == opDcZva || writesProtected(in) {
			continue
		}
		if pairLoad(in) && in.rd == in.ra { // ldp with Rt == Rt2: CONSTRAINED UNPREDICTABLE
			continue
		}
		if field(w, 27, 3) == 0b011 && field(w, 24, 2) == 0 { // literal: pc-relative, outside the buffer
			continue
		}
		return w
	}
}

func randomMemProgram(r *rand.Rand, n int, skipped map[string]int) []byte {
	const x30 = 30
	movBase := []uint32{0xd2800000 | (memBase&0xffff)<<5 | x30, 0xf2a00000 | (memBase>>16)<<5 | x30}
	var code []uint32
	code = append(code, movBase...)
	data := make([]byte, memBufSize)
	for i := 0; i < len(data); i += 8 {
		binary.LittleEndian.PutUint64(data[i:], randVecHalf(r))
	}
	code = append(code, 0xd2800000|uint32(r.IntN(16))<<5, 0xd3648c00, 0xd51b4200) // mov x0, #f; lsl x0, x0, #28; msr nzcv, x0
	code = append(code, 0xd2800000|uint32(r.IntN(256))<<5|28)                     // mov x28, #small
	for i := 0; i < n; i++ {
		if i%12 == 0 {
			code = append(code, movBase...)
		}
		if r.IntN(5) < 2 {
			w := pickMemWord(r, skipped)
			if o := decode(w, codeAddr).op; r.IntN(2) == 0 || isExclusiveOrAtomic(o) {
				code = append(code, movBase...) // exclusives and atomics need alignment
			}
			code = append(code, w)
			continue
		}
		for {
			w := pickWord(r, skipped)
			if !writesProtected(decode(w, codeAddr)) {
				code = append(code, w)
				break
			}
		}
	}
	code = append(code, 0xd2800bc8, 0xd4000001)
	return elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, code...), data)
}

func TestQemuRandomMemory(t *testing.T) {
	skipped := map[string]int{}
	difftest.RandomPrograms(t, "arm64", "", 0x3e3, func(r *rand.Rand, n int) []byte { return randomMemProgram(r, n, skipped) })
}

// isExclusiveOrAtomic: the exclusives, ordered accesses and atomics, which
// need an aligned address.
func isExclusiveOrAtomic(o op) bool {
	switch opTable[o].group {
	case grpLoadEx, grpStoreEx, grpAtomic:
		return true
	}
	return false
}
