package s390x

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// encode builds the instruction bytes of an op with all operand fields
// zero except the opcode.
func encode(o op) []byte {
	info := o.info()
	b := make([]byte, info.length)
	b[0] = byte(info.key >> 8)
	ext := byte(info.key)
	switch extKinds[b[0]] {
	case ext8at8:
		b[1] = ext
	case ext4at12:
		b[1] = ext
	case ext8at40:
		b[5] = ext
	}
	return b
}

// TestOpTableAgreesWithXArch checks every generated op against x/arch's
// decoder: the opcode decodes to the same mnemonic, and back to the op.
func TestOpTableAgreesWithXArch(t *testing.T) {
	for o := opFirst; o < opEnd; o++ {
		b := encode(o)
		// Give register-pair instructions an even R1 and fields the
		// decoder checks valid values, so refine keeps the op.
		in := decode(b)
		name, ok := asmName(b)
		require.True(t, ok, "%v (% x): x/arch does not decode it", o, b)
		// x/arch names some opcodes by their newer mnemonic.
		alias := map[string]string{"vcfps": "vcdg", "vcfpl": "vcdlg", "vcsfp": "vcgd", "vclfp": "vclgd",
			"cdfbr": "cdfbra", "cdgbr": "cdgbra", "cefbr": "cefbra", "cegbr": "cegbra", "cfdbr": "cfdbra",
			"cgdbr": "cgdbra", "cfebr": "cfebra", "cgebr": "cgebra", "fidbr": "fidbra", "fiebr": "fiebra",
			"ledbr": "ledbra", "ldxbr": "ldxbra", "lexbr": "lexbra", "fixbr": "fixbra",
			"cxfbr": "cxfbra", "cxgbr": "cxgbra", "cfxbr": "cfxbra", "cgxbr": "cgxbra", "tml": "tmll", "tmh": "tmlh"}
		if a, ok := alias[strings.ToLower(name)]; ok {
			name = a
		}
		require.Equal(t, o.String(), strings.ToLower(name), "opcode % x", b)
		switch in.op {
		case o, opNop, opJ, opBR, opSpec:
		default:
			t.Errorf("%v (% x) decodes to %v", o, b, in.op)
		}
	}
}

func TestDecodeFields(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want inst
	}{
		{"lgr %r1,%r2", []byte{0xb9, 0x04, 0x00, 0x12}, inst{op: opLGR, ln: 4, r1: 1, r2: 2, b: rNone}},
		{"lg %r3,-8(%r4,%r15)", []byte{0xe3, 0x34, 0xff, 0xf8, 0xff, 0x04}, inst{op: opLG, ln: 6, r1: 3, r2: 4, b: 15, imm: -8}},
		{"l %r1,0(%r0,%r0): no base or index", []byte{0x58, 0x10, 0x00, 0x00}, inst{op: opL, ln: 4, r1: 1, r2: rNone, b: rNone}},
		{"aghi %r2,-1", []byte{0xa7, 0x2b, 0xff, 0xff}, inst{op: opAGHI, ln: 4, r1: 2, r2: rNone, b: rNone, imm: -1}},
		{"brasl %r14,.-4", []byte{0xc0, 0xe5, 0xff, 0xff, 0xff, 0xfe}, inst{op: opBRASL, ln: 6, r1: 14, r2: rNone, b: rNone, imm: -4}},
		{"j .+8 (brc 15)", []byte{0xa7, 0xf4, 0x00, 0x04}, inst{op: opJ, ln: 4, m: 15, r2: rNone, b: rNone, imm: 8}},
		{"br %r14 (bcr 15)", []byte{0x07, 0xfe}, inst{op: opBR, ln: 2, m: 15, r2: 14, b: rNone}},
		{"nopr (bcr 0)", []byte{0x07, 0x07}, inst{op: opNop, ln: 2, r2: 7, b: rNone}},
		{"cgij %r2,-3,8,.+10", []byte{0xec, 0x28, 0x00, 0x05, 0xfd, 0x7c}, inst{op: opCGIJ, ln: 6, r1: 2, m: 8, r2: 0xfd, b: rNone, imm: 10}},
		{"risbg %r1,%r2,48,191,16", []byte{0xec, 0x12, 0x30, 0xbf, 0x10, 0x55},
			inst{op: opRISBG, ln: 6, r1: 1, r2: 2, r3: 16, m: 0x40, b: rNone, imm: 0xffff}},
		{"mvc 8(4,%r15),0(%r2)", []byte{0xd2, 0x03, 0xf0, 0x08, 0x20, 0x00}, inst{op: opMVC, ln: 6, m: 3, b: 15, r2: 2, imm: 8}},
		{"mvhi 4(%r1),-2", []byte{0xe5, 0x4c, 0x10, 0x04, 0xff, 0xfe}, inst{op: opMVHI, ln: 6, b: 1, r2: rNone, imm: -2<<16 | 4}},
		{"vl %v17,0(%r2) (RXB)", []byte{0xe7, 0x10, 0x20, 0x00, 0x08, 0x06}, inst{op: opVL, ln: 6, r1: 17, r2: rNone, b: 2}},
		{"vaf %v1,%v18,%v3", []byte{0xe7, 0x12, 0x30, 0x00, 0x24, 0xf3}, inst{op: opVA, ln: 6, r1: 1, r2: 18, r3: 3, m: 2, b: 0}},
		{"dlgr %r3,%r4: odd pair", []byte{0xb9, 0x87, 0x00, 0x34}, inst{op: opSpec, ln: 4, r1: 3, r2: 4, b: rNone, imm: specOddPair}},
		{"undefined 0000", []byte{0x00, 0x00}, inst{op: opUndef, ln: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, decode(tt.code))
		})
	}
}

func TestRotMask(t *testing.T) {
	require.Equal(t, uint64(0xffff), rotMask(48, 63))
	require.Equal(t, uint64(1)<<63, rotMask(0, 0))
	require.Equal(t, uint64(0xc000000000000001), rotMask(63, 1)) // wraps
	require.Equal(t, ^uint64(0), rotMask(0, 63))
}
