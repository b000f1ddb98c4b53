package timing

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDivider: the divider's quotient is n / d for divisors of every
// size (the presets' clock rates among them) and dividends at the edges
// and at random.
func TestDivider(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	divisors := []uint64{1, 2, 3, 5, 7, 10, 641, 1000, 2600, 3000, 3100, 1 << 20, 1<<32 - 1, 1 << 32, 1<<32 + 1,
		1<<63 - 1, 1 << 63, 1<<63 + 1, math.MaxUint64 - 1, math.MaxUint64}
	for range 200 {
		divisors = append(divisors, rng.Uint64()>>rng.IntN(64)|1, rng.Uint64()>>rng.IntN(64)+1)
	}
	for _, d := range divisors {
		v := newDivider(d)
		ns := []uint64{0, 1, d - 1, d, d + 1, 2*d - 1, 2 * d, math.MaxUint64, math.MaxUint64 - 1, math.MaxUint64 / d * d, math.MaxUint64/d*d - 1}
		for range 2000 {
			ns = append(ns, rng.Uint64(), rng.Uint64()>>rng.IntN(64))
		}
		for _, n := range ns {
			if got, want := v.div(n), n/d; got != want {
				t.Fatalf("%d / %d: got %d, want %d", n, d, got, want)
			}
		}
	}
}
