package linux

import "encoding/binary"

// guestRandom is where AT_RANDOM and getrandom bytes come from. With
// --seed S it produces the bytes qemu-user produces with -seed S, so that
// programs which read them (glibc's stack guard and pointer guard, malloc's
// tcache key) run identically under both: a Mersenne Twister (MT19937)
// seeded with S as two 32-bit words, low first, by the reference
// init_by_array; bytes are taken four at a time from each 32-bit output,
// least significant first, and a final partial word supplies its low
// bytes.
type guestRandom struct {
	mt [624]uint32
	i  int
}

func newGuestRandom(seed uint64) *guestRandom {
	g := &guestRandom{}
	g.seedArray([]uint32{uint32(seed), uint32(seed >> 32)})
	return g
}

func (g *guestRandom) seed(s uint32) {
	g.mt[0] = s
	for i := 1; i < len(g.mt); i++ {
		g.mt[i] = 1812433253*(g.mt[i-1]^g.mt[i-1]>>30) + uint32(i)
	}
	g.i = len(g.mt)
}

func (g *guestRandom) seedArray(key []uint32) {
	const n = len(g.mt)
	g.seed(19650218)
	i, j := 1, 0
	for k := max(n, len(key)); k > 0; k-- {
		g.mt[i] = (g.mt[i] ^ (g.mt[i-1]^g.mt[i-1]>>30)*1664525) + key[j] + uint32(j)
		i, j = i+1, j+1
		if i >= n {
			g.mt[0], i = g.mt[n-1], 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := n - 1; k > 0; k-- {
		g.mt[i] = (g.mt[i] ^ (g.mt[i-1]^g.mt[i-1]>>30)*1566083941) - uint32(i)
		i++
		if i >= n {
			g.mt[0], i = g.mt[n-1], 1
		}
	}
	g.mt[0] = 0x80000000
}

func (g *guestRandom) uint32() uint32 {
	const n, m = 624, 397
	if g.i >= n {
		for k := 0; k < n; k++ {
			y := g.mt[k]&0x80000000 | g.mt[(k+1)%n]&0x7fffffff
			v := g.mt[(k+m)%n] ^ y>>1
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			g.mt[k] = v
		}
		g.i = 0
	}
	y := g.mt[g.i]
	g.i++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// fill fills b with the next bytes.
func (g *guestRandom) fill(b []byte) {
	for len(b) >= 4 {
		binary.LittleEndian.PutUint32(b, g.uint32())
		b = b[4:]
	}
	if len(b) > 0 {
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], g.uint32())
		copy(b, w[:])
	}
}
