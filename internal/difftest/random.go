package difftest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"simrun/internal/oracle"
)

// Helpers for random-instruction differential tests: size knobs from the
// environment and register contents rich in edge values.

// EnvInt returns the positive integer in environment variable name, or def
// (e.g. SIMRUN_RANDOM_PROGRAMS, SIMRUN_RANDOM_INSNS).
func EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// RandomPrograms builds SIMRUN_RANDOM_PROGRAMS programs (default 12) of
// SIMRUN_RANDOM_INSNS random instructions (default 1500) for arch with
// build, the random source of program p seeded (p, stream), and compares
// each with qemu (as CPU model cpu, "" for qemu's default: the one simrun
// shows where instructions such as s390x's stfle depend on it) in lockstep (up to eight instructions per random one, for
// the set-up instructions a generator adds). It returns the number of
// instructions compared.
func RandomPrograms(t testing.TB, arch, cpu string, stream uint64, build func(r *rand.Rand, n int) []byte) uint64 {
	t.Helper()
	oracle.Require(t, arch)
	programs := EnvInt("SIMRUN_RANDOM_PROGRAMS", 12)
	insns := EnvInt("SIMRUN_RANDOM_INSNS", 1500)
	dir := t.TempDir()
	var total uint64
	for p := 0; p < programs; p++ {
		r := rand.New(rand.NewPCG(uint64(p), stream))
		path := filepath.Join(dir, fmt.Sprintf("random%d", p))
		if err := os.WriteFile(path, build(r, insns), 0o755); err != nil {
			t.Fatal(err)
		}
		res, err := Compare(context.Background(), path, Options{Lockstep: 8*insns + 200, FP: true, CPU: cpu})
		if err != nil {
			t.Fatalf("program %d (seed %d, stream %#x): %v", p, p, stream, err)
		}
		if res.Compared < res.Insns {
			t.Fatalf("program %d: compared %d of %d instructions", p, res.Compared, res.Insns)
		}
		if res.Fault != "" {
			t.Logf("program %d ends in a fault in both after %d instructions: %s", p, res.Insns, res.Fault)
		}
		total += res.Compared
	}
	t.Logf("%d programs x %d random instructions: %d instructions agree with qemu", programs, insns, total)
	return total
}

// Edge64 are integers at the boundaries of 8-, 16-, 32- and 64-bit ranges.
var Edge64 = []uint64{0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
	0x100000000, 0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff, 0xfffffffffffffffe}

// EdgeF32 and EdgeF64 are IEEE bit patterns: signed zeros, ones, infinities,
// quiet and signaling NaNs, subnormals, the largest finite values and
// integer-conversion limits.
var (
	EdgeF32 = []uint32{0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
		0xffc00001, 0x00000001, 0x807fffff, 0x7f7fffff, 0x4f000000, 0xcf000000, 0x5f000000, 0x3f000000, 0x4b400000}
	EdgeF64 = []uint64{0, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x7ff0000000000000,
		0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001, 0xfff8000000000001, 1, 0x000fffffffffffff,
		0x43e0000000000000, 0xc3e0000000000000, 0x41e0000000000000, 0x3fe0000000000000, 0x4338000000000000}
)

// RandReg is a general-register value: an edge value, a random value of
// random width, or a random value.
func RandReg(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return Edge64[r.IntN(len(Edge64))]
	case 1:
		return r.Uint64() >> r.IntN(64)
	}
	return r.Uint64()
}

// RandFPBits is 64 bits of a floating-point or vector register: two edge
// or ordinary single-precision values, an edge or ordinary double, or a
// general-register value.
func RandFPBits(r *rand.Rand) uint64 {
	switch r.IntN(5) {
	case 0:
		return uint64(EdgeF32[r.IntN(len(EdgeF32))])<<32 | uint64(EdgeF32[r.IntN(len(EdgeF32))])
	case 1:
		return EdgeF64[r.IntN(len(EdgeF64))]
	case 2:
		return uint64(math.Float32bits(float32(r.NormFloat64()*100)))<<32 | uint64(math.Float32bits(float32(r.NormFloat64())))
	case 3:
		return math.Float64bits(r.NormFloat64() * math.Pow(2, float64(r.IntN(80)-40)))
	}
	return RandReg(r)
}
