package s390x

import "simrun/sim/cpu"

// The TOD clock (stck, stckf, stcke) and ecag.
//
// The TOD clock counts from 1900-01-01T00:00:00Z with bit 51 one
// microsecond (Principles of Operation, "Time-of-Day Clock"): 4096 units
// a microsecond, 512/125 a nanosecond. simrun's guest time is the virtual
// clock that clock_gettime(CLOCK_REALTIME) reads (sim/cpu: 2026-01-01
// plus the machine's VirtualNanos), so stck agrees with the guest's
// gettimeofday and is reproducible from run to run. qemu-user stores the
// host's time instead, so the lockstep tests compare only the condition
// code and the registers of these instructions, not the stored value.

const (
	// todGuestEpoch is 2026-01-01T00:00:00Z on the TOD clock: the
	// 3,976,214,400 seconds since 1900 times 4,096,000,000 units.
	todGuestEpoch = 0xe20588edce000000
	// todUnixEpoch is 1970-01-01T00:00:00Z (2,208,988,800 seconds), for
	// the tests.
	todUnixEpoch = 0x7d91048bca000000
)

// nanosToTOD converts nanoseconds to TOD units, rounding down: ns * 512 /
// 125 without overflowing for ns below 2^64 / 512.
func nanosToTOD(ns uint64) uint64 { return ns/125*512 + ns%125*512/125 }

// todClock is the TOD clock now: the guest's realtime clock, less the
// virtual time that nanosleep adds to it (sim/cpu keeps that offset
// unexported, so a program that sleeps sees stck lag its
// clock_gettime by the time slept).
func (c *Core) todClock() uint64 { return todGuestEpoch + nanosToTOD(c.m.VirtualNanos()) }

// storeClock executes stck, stckf and stcke at their second-operand
// address; the condition code is 0 (clock in the set state). stck's
// values are unique (each greater than the last, as the architecture
// requires of the clock a program sees through stck); stckf's need not
// be. stcke stores 16 bytes: a zero epoch index, the 64 clock bits, then
// (as qemu) bits 64-103 zero but their last, which is one (the
// architecture makes them nonzero), and a zero programmable field.
func (c *Core) storeClock(in *inst) *cpu.Fault {
	a := c.r[in.b] + uint64(in.imm)
	t := c.todClock()
	if in.op != opSTCKF {
		if t <= c.lastTOD {
			t = c.lastTOD + 1
		}
		c.lastTOD = t
	}
	ok := true
	switch in.op {
	case opSTCK, opSTCKF:
		ok = c.mem.Store64BE(a, t)
	case opSTCKE:
		// bytes 0-7: epoch index, bits 0-55; 8-15: bits 56-63, bits
		// 64-103 = 1, programmable field 0.
		ok = c.probeWrite(a, 16) && c.mem.Store64BE(a, t>>8) && c.mem.Store64BE(a+8, t<<56|0x10000)
	}
	if !ok {
		return c.accessFault()
	}
	c.cc = 0
	return nil
}

// extractCacheAttribute is ecag: qemu 7.2 answers every request with all
// ones, the architecture's "no information" for an attribute or cache
// level that is not reported; simrun shows the same (glibc's sysconf then
// reports the cache sizes as unknown, 0).
func (c *Core) extractCacheAttribute(in *inst) { c.r[in.r1] = ^uint64(0) }
