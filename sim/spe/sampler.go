package spe

import "math/rand/v2"

// sampler is the interval counter (Arm ARM D17.3; pseudocode
// SPEStartSample, SPEResetSampleCounter): PMSICR.COUNT counts
// population members down from PMSIRR.INTERVAL x 256; with PMSIRR.RND the
// interval gets random jitter, either in COUNT[7:0] at reload or, with
// FEAT_SPE_ERnd, through PMSICR.ECOUNT after COUNT expires. The counters
// live in PMSICR so software can save and restore them.
type sampler struct {
	f   *Features
	r   *Regs
	rng *rand.Rand
}

func (s *sampler) count() uint32 { return uint32(s.r.v[PMSICR]) }
func (s *sampler) ecount() uint8 { return uint8(s.r.v[PMSICR] >> 56) }
func (s *sampler) rnd() bool     { return s.r.v[PMSIRR]&1 == 1 }
func (s *sampler) rand8() uint32 { return uint32(s.rng.Uint32() & 0xff) }
func (s *sampler) set(c uint32, e uint8) {
	v := uint64(c)
	if s.f.ERnd {
		v |= uint64(e) << 56
	}
	s.r.v[PMSICR] = v
}

func (s *sampler) reload() uint32 {
	c := uint32(s.r.v[PMSIRR]) &^ 0xff // INTERVAL in bits 31:8
	if c == 0 {
		// INTERVAL = 0: "an UNKNOWN sampling interval is used" (Arm ARM
		// D24.7.15); simrun's choice is the unit's minimum interval
		// (PMSIDR.Interval), documented with Choices. (Reloading 0 would
		// select nothing, ever.)
		c = s.f.MinInterval()
	}
	if s.rnd() && !s.f.ERnd {
		c |= s.rand8()
	}
	return c
}

// member counts one population member and reports whether it is
// selected (SPEToCollectSample).
func (s *sampler) member() bool {
	c, e := s.count(), s.ecount()
	ernd := s.rnd() && s.f.ERnd
	sel := false
	if c == 0 {
		c = s.reload()
	} else {
		c--
		if c == 0 {
			if ernd {
				e = uint8(s.rand8())
				s.set(c, e)
				return e == 0
			}
			s.set(c, e)
			return true
		}
	}
	if ernd && e != 0 {
		e--
		sel = e == 0
	}
	s.set(c, e)
	return sel
}

// next counts members up to and including the next selected one and
// returns how many that was (>= 1). Long runs where nothing can happen
// are skipped in one step.
func (s *sampler) next() uint64 {
	var n uint64
	for {
		if c, e := s.count(), s.ecount(); c > 1 && (e == 0 || !(s.rnd() && s.f.ERnd)) {
			// members that only decrement COUNT
			s.set(1, e)
			n += uint64(c - 1)
		}
		n++
		if s.member() {
			return n
		}
	}
}
