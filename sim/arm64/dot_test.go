package arm64

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/elftest"
	"simrun/internal/oracle"
	"simrun/sim/linux"
)

// dotVector and dotElem encode sdot (u = 0) and udot (u = 1), 64-bit
// (q = 0) or 128-bit: vector 0 Q U 01110 10 0 Rm 100101 Rn Rd, by element
// 0 Q U 01111 10 L M Rm 1110 H 0 Rn Rd (Arm ARM C7.2, SDOT, UDOT).
func dotVector(q, u, rd, rn, rm uint32) uint32 {
	return q<<30 | u<<29 | 0x0e809400 | rm<<16 | rn<<5 | rd
}

func dotElem(q, u, rd, rn, rm, idx uint32) uint32 {
	return q<<30 | u<<29 | 0x0f80e000 | (idx&1)<<21 | rm<<16 | (idx>>1)<<11 | rn<<5 | rd
}

// w32 is the 32-bit lane of a negative sum.
func w32(x int32) uint64 { return uint64(uint32(x)) }

// TestDotProduct: each 32-bit lane adds the four byte products of its
// lane of Vn and of Vm's same lane (vector) or chosen lane (by element),
// signed or unsigned, wrapping; the 64-bit forms clear the upper half.
func TestDotProduct(t *testing.T) {
	n := vec{0x04030201_ff7f80fe, 0x01010101_00000000}
	m := vec{0x02020202_ffffffff, 0x80808080_01020304}
	tests := []struct {
		name string
		word uint32
		want vec
	}{
		// each lane starts at 100. lane 0: -2*-1 + -128*-1 + 127*-1 + -1*-1
		// = 4; lane 1: 2+4+6+8 = 20; lane 2: 0; lane 3: 4 * -128 = -512
		{"sdot 4s", dotVector(1, 0, 2, 0, 1), vec{(20+100)<<32 | 4 + 100, w32(-512+100)<<32 | (0 + 100)}},
		// lane 0: 254*255 + 128*255 + 127*255 + 255*255 = 194820
		{"udot 2s", dotVector(0, 1, 2, 0, 1), vec{(20+100)<<32 | 194820 + 100, 0}},
		// by element, lane 3 of m (0x80808080): lane 0 bytes of n sum to
		// -2+-128+127+-1 = -4, times -128 = 512; lane 1: 10 * -128; lane 3: 4 * -128
		{"sdot 4s by element 3", dotElem(1, 0, 2, 0, 1, 3), vec{w32(-1280+100)<<32 | 512 + 100, w32(-512+100)<<32 | 100}},
		{"udot 2s by element 1", dotElem(0, 1, 2, 0, 1, 1), vec{(20+100)<<32 | 2*(254+128+127+255) + 100, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, tt.word, 0xd2800bc8, 0xd4000001), nil)
			mach, err := linux.New("dot", img, linux.Config{})
			require.NoError(t, err)
			c := mach.Core.(*Core)
			c.v[0], c.v[1], c.v[2] = n, m, vec{100<<32 | 100, 100<<32 | 100}
			exit, err := mach.Run()
			require.NoError(t, err)
			require.Nil(t, exit.Fault)
			require.Equal(t, tt.want, c.v[2], "%#x", tt.word)
		})
	}
}

// TestQemuDotProduct runs every form of sdot and udot (FEAT_DotProd,
// which gcc -mcpu=neoverse-n1 emits for int8 reductions) on random
// registers in lockstep with qemu's max CPU. x/arch does not decode them,
// so TestQemuRandomInstructions never draws them.
func TestQemuDotProduct(t *testing.T) {
	oracle.Require(t, "arm64")
	const x30 = 30
	r := rand.New(rand.NewPCG(3, 5))
	code := []uint32{0xd2800000 | (dataAddr&0xffff)<<5 | x30, 0xf2a00000 | (dataAddr>>16)<<5 | x30}
	var data []byte
	for q := 0; q < 32; q += 2 { // ldp q, q, [x30], #32
		code = append(code, 0xacc10000|uint32(q+1)<<10|x30<<5|uint32(q))
		for i := 0; i < 4; i++ {
			data = binary.LittleEndian.AppendUint64(data, r.Uint64())
		}
	}
	for i := 0; i < 400; i++ {
		rd, rn, rm := uint32(r.IntN(32)), uint32(r.IntN(32)), uint32(r.IntN(32))
		q, u := uint32(r.IntN(2)), uint32(r.IntN(2))
		if i%2 == 0 {
			code = append(code, dotVector(q, u, rd, rn, rm))
		} else {
			code = append(code, dotElem(q, u, rd, rn, rm, uint32(r.IntN(4))))
		}
	}
	code = append(code, 0xd2800000, 0xd2800bc8, 0xd4000001) // mov x0, #0; mov x8, #94; svc #0
	path := filepath.Join(t.TempDir(), "dot")
	img := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, code...), data)
	require.NoError(t, os.WriteFile(path, img, 0o755))
	res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: 1000, FP: true})
	require.NoError(t, err)
	require.Equal(t, res.Insns, res.Compared)
	t.Logf("%d instructions compared", res.Compared)
}
