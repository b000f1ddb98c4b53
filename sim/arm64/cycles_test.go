package arm64_test

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/internal/timingtest"
)

// TestHandDerivedCycles times small instruction sequences on every preset
// and compares the cycle count with one derived by hand from the model's
// rules (sim/timing/model.go), not from the model itself:
//
//   - one operation dispatches per cycle; it issues when the cycle has
//     come and its source registers are ready; its results are ready
//     Lat[unit] cycles after issue (at least 1); the next operation
//     dispatches the cycle after this one issues;
//   - a load's latency is Lat[load] (0) + the TLB latency (+ Walk on a
//     miss) + the latency of the level that holds the line (L1D, L2, LLC,
//     DRAM; all cold at the start); a store's is Lat[store] + the
//     translation, and the cache level's too where the preset has no
//     store buffer (slow-memory);
//   - a mispredicted branch makes the next operation dispatch Mispred
//     cycles after the branch completes; the bimodal counters start at
//     "strongly not taken"; an indirect branch mispredicts unless the
//     target buffer holds it with this target (it starts empty); a
//     return mispredicts unless the top of the return stack, which calls
//     push, is its target; direct jumps and calls never mispredict;
//   - the caches are set-associative with least-recently-used
//     replacement (sets = Size/Line/Ways, the set of an address is
//     (addr/Line) mod sets); a miss fills every level it missed;
//   - the run's cycles are the dispatch cycle after the last operation,
//     which is the exit sequence "mov x8, #94; svc #0": the mov issues at
//     cycle c and the svc, which reads x8 (and x0-x2, ready here), at c+1,
//     so every total is c+2.
//
// Each case's want is written out per preset (N1, V2, slow) next to the
// arithmetic that gives it.
func TestHandDerivedCycles(t *testing.T) {
	const dataBase = 0x500000 // a zeroed data segment of 320 KiB
	const (
		addX4X5    = 0x910004a4 // add x4, x5, #1
		addX4X4    = 0x91000484 // add x4, x4, #1
		mulX4X4X4  = 0x9b047c84 // mul x4, x4, x4
		mulX4X5X6  = 0x9b067ca4 // mul x4, x5, x6
		udivX4X4X5 = 0x9ac50884 // udiv x4, x4, x5
		ldrX4Sp    = 0xf94003e4 // ldr x4, [sp]
		ldrX5Sp8   = 0xf94007e5 // ldr x5, [sp, #8]
		ldrX6Sp64  = 0xf94023e6 // ldr x6, [sp, #64]
		ldrX6Sp16  = 0xf9400be6 // ldr x6, [sp, #16]
		strX5Sp16  = 0xf9000be5 // str x5, [sp, #16]
		addX9X4    = 0x91000489 // add x9, x4, #1
		addX9X5    = 0x910004a9 // add x9, x5, #1
		addX9X6    = 0x910004c9 // add x9, x6, #1
		movX5_7    = 0xd28000e5 // mov x5, #7
		movX5_3    = 0xd2800065 // mov x5, #3
		cbnzX5P8   = 0xb5000045 // cbnz x5, .+8
		nop        = 0xd503201f
		subX5X5    = 0xd10004a5 // sub x5, x5, #1
		cbnzX5M4   = 0xb5ffffe5 // cbnz x5, .-4
		faddD4D5D6 = 0x1e6628a4 // fadd d4, d5, d6
		fmulD4D4D4 = 0x1e640884 // fmul d4, d4, d4
		fdivD4D4D5 = 0x1e651884 // fdiv d4, d4, d5
		faddD7D4D4 = 0x1e642887 // fadd d7, d4, d4
		addV0V0V0  = 0x4ee08400 // add v0.2d, v0.2d, v0.2d
		adrX5P16   = 0x10000085 // adr x5, .+16
		adrX30P12  = 0x1000007e // adr x30, .+12
		blrX5      = 0xd63f00a0 // blr x5
		bP12       = 0x14000003 // b .+12
		ret        = 0xd65f03c0
		ldrX4X10   = 0xf9400144 // ldr x4, [x10]
		ldrX4X11   = 0xf9400164 // ldr x4, [x11]
		ldrX4X12   = 0xf9400184 // ldr x4, [x12]
		ldrX4X13   = 0xf94001a4 // ldr x4, [x13]
		ldrX4X14   = 0xf94001c4 // ldr x4, [x14]
	)
	rep := func(n int, w uint32) []uint32 {
		ws := make([]uint32, n)
		for i := range ws {
			ws[i] = w
		}
		return ws
	}
	cat := func(parts ...[]uint32) []uint32 {
		var ws []uint32
		for _, p := range parts {
			ws = append(ws, p...)
		}
		return ws
	}
	one := func(ws ...uint32) []uint32 { return ws }
	// movz x10..x14, #0x50..#0x54, lsl #16: x10+k = 0x500000 + k*64 KiB,
	// five lines of the data segment (dataBase) 64 KiB apart.
	movzBases := one(0xd2a00a0a, 0xd2a00a2b, 0xd2a00a4c, 0xd2a00a6d, 0xd2a00a8e)
	for _, tc := range []struct {
		name string
		code []uint32
		want [3]uint64 // neoverse-n1, neoverse-v2, slow-memory
	}{
		// 8 ALU operations, one a cycle whether they depend on each
		// other or not (ALU latency 1): c = 8, total 10.
		{"independent adds", rep(8, addX4X5), [3]uint64{10, 10, 10}},
		{"dependent adds", rep(8, addX4X4), [3]uint64{10, 10, 10}},
		// mul chain: issues at 0, L, 2L, 3L; c = 3L+1; total 3L+3 with
		// L = 3, 2, 4.
		{"mul chain", rep(4, mulX4X4X4), [3]uint64{12, 9, 15}},
		// independent multiplies issue one a cycle: 4 + 2.
		{"independent muls", rep(4, mulX4X5X6), [3]uint64{6, 6, 6}},
		// udiv chain: issues at 0, D, 2D; total 2D+3 with D = 12, 12, 30.
		{"div chain", rep(3, udivX4X4X5), [3]uint64{27, 27, 63}},
		// A cold load (TLB walk, every cache level missed: TLB+Walk+DRAM),
		// an add waiting for it, a load of the same line (TLB+L1D) and an
		// add waiting for that: TLB+Walk+DRAM + 1 + TLB+L1D + 1 + 2.
		//   N1: 1+30+240 + 1 + 1+4 + 1 + 2 = 280
		//   V2: 1+28+260 + 1 + 1+4 + 1 + 2 = 298
		//   slow: 2+200+800 + 1 + 2+8 + 1 + 2 = 1016
		{"cold load, then a hit", one(ldrX4Sp, addX9X4, ldrX5Sp8, addX9X5), [3]uint64{280, 298, 1016}},
		// The next line of the page: the TLB holds it, the caches do not:
		// 271|289|1002 + 1, then TLB+DRAM + 1 + 2.
		//   N1: 272 + 1+240 + 1 + 2 = 516
		//   V2: 290 + 1+260 + 1 + 2 = 554
		//   slow: 1003 + 2+800 + 1 + 2 = 1808
		{"cold line in a held page", one(ldrX4Sp, addX9X4, ldrX6Sp64, addX9X6), [3]uint64{516, 554, 1808}},
		// A store fills the TLB and the line (write-allocate); the load
		// of its address right after hits both: 1 (the store) + TLB+L1D
		// (issued at 1, ready at 1+TLB+L1D) + 1 (the add) + 2. Nothing
		// waits for the store, with or without a store buffer.
		//   N1, V2: 1 + 1+4 + 1 + 2 = 9; slow: 1 + 2+8 + 1 + 2 = 14
		{"store then load", one(strX5Sp16, ldrX6Sp16, addX9X6), [3]uint64{9, 9, 14}},
		// cbnz taken, predicted not taken (cold): mov at 0, cbnz issues
		// at 1 and completes at 2, the next dispatches at 2+Mispred:
		// total 2+M+2 with M = 11, 12, 20 (the nop is jumped over).
		{"mispredicted branch", one(movX5_7, cbnzX5P8, nop), [3]uint64{15, 16, 24}},
		// A 3-iteration countdown loop: taken (counter 0: miss), taken
		// (counter 1: miss), not taken (counter 2: miss); each iteration
		// is sub + cbnz + Mispred: 1 + 3*(2+M) + 2.
		{"countdown loop", one(movX5_3, subX5X5, cbnzX5M4), [3]uint64{42, 45, 69}},
		// fadd, fmul and fdiv in a chain, an fadd waiting for the fdiv:
		// issues at 0, F, 2F, 2F+FD; total 2F+FD+3 with F = 3, 2, 6 and
		// FD = 10, 10, 30.
		{"fp chain", one(faddD4D5D6, fmulD4D4D4, fdivD4D4D5, faddD7D4D4), [3]uint64{19, 17, 45}},
		// Vector adds in a chain (Lat[SIMD] = S): issues at 0, S, 2S,
		// 3S; total 3S+3 with S = 3, 2, 6.
		{"simd chain", rep(4, addV0V0V0), [3]uint64{12, 9, 21}},
		// A call through a register the target buffer does not hold
		// (cold: mispredicted) and the return the return stack predicts:
		// adr at 0 (x5 ready at 1); blr issues at 1, completes at 2, the
		// next dispatches at 2+M; ret (x30 ready at 2) issues at 2+M,
		// predicted; b (direct, never mispredicted) at 3+M; so c = 4+M
		// and the total is 6+M with M = 11, 12, 20.
		{"indirect call, predicted return", one(adrX5P16, blrX5, bP12, nop, ret), [3]uint64{17, 18, 26}},
		// A return with the return stack empty mispredicts: adr x30 at 0,
		// ret issues at 1 and completes at 2, the next dispatches at 2+M:
		// total 4+M (the nop is jumped over).
		{"return, empty return stack", one(adrX30P12, ret, nop), [3]uint64{15, 16, 24}},
		// Five loads 64 KiB apart fall in one L1D set on every preset (N1
		// and V2: 256 sets of 64-byte lines, 4 ways; slow: 32 sets, 2
		// ways), so the fifth evicts the first, least recently used. In
		// the L2 the first line survives on N1 (2048 sets: lines 0, 2
		// and 4 share one of 8 ways) and V2 (4096 sets); slow-memory's L2
		// (128 sets, 4 ways) loses it too, its LLC (512 sets, 8 ways)
		// keeps it. The loads do not wait for each other (no register
		// they write is read before the last): movz at 0-4, loads at
		// 5-10, the reload of the first line at 10 with the TLB holding
		// its page, the add waiting for it at 10+L; total 13+L with
		//   N1: L = TLB 1 + L2 11 = 12: 25
		//   V2: L = TLB 1 + L2 12 = 13: 26
		//   slow: L = TLB 2 + LLC 120 = 122: 135
		{"L1D eviction, reload from L2 or LLC", cat(movzBases, one(ldrX4X10, ldrX4X11, ldrX4X12, ldrX4X13, ldrX4X14, ldrX4X10, addX9X4)),
			[3]uint64{25, 26, 135}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := elftest.Words(binary.LittleEndian, cat(tc.code, one(0xd2800bc8, 0xd4000001))...) // mov x8, #94; svc #0
			f := &elftest.File{Machine: elf.EM_AARCH64, Entry: 0x400000, Segments: []elftest.Segment{
				{Vaddr: 0x400000, Data: code, Flags: elf.PF_R | elf.PF_X},
				{Vaddr: dataBase, Data: []byte{0}, Memsz: 5 << 16, Flags: elf.PF_R | elf.PF_W}}}
			path := filepath.Join(t.TempDir(), "seq")
			require.NoError(t, os.WriteFile(path, f.Bytes(), 0o755))
			timingtest.RequireCycles(t, path, tc.want)
		})
	}
}
