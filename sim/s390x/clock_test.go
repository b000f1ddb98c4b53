package s390x

import (
	"encoding/binary"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/timing"
)

// TestTODEpochs derives the clock's epochs from the calendar: the TOD
// clock counts 4096 units a microsecond from 1900-01-01T00:00:00Z.
func TestTODEpochs(t *testing.T) {
	tod := func(tm time.Time) uint64 {
		return uint64(tm.Sub(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)).Microseconds()) * 4096
	}
	require.Equal(t, uint64(todUnixEpoch), tod(time.Unix(0, 0).UTC()))
	require.Equal(t, uint64(todGuestEpoch), tod(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	for _, tt := range []struct{ ns, want uint64 }{
		{0, 0}, {1, 4}, {125, 512}, {1000, 4096}, {1e9, 4096e6}, {3, 12},
	} {
		require.Equal(t, tt.want, nanosToTOD(tt.ns), "%d ns", tt.ns)
	}
	// Large values (up to 2^55, where the clock has 2^64 units) round
	// down as ns * 512 / 125 computed exactly.
	for _, ns := range []uint64{1<<54 + 123, 1<<55 - 1, 1767225600e9 + 999} {
		want := new(big.Int).Div(new(big.Int).Mul(new(big.Int).SetUint64(ns), big.NewInt(512)), big.NewInt(125))
		require.Equal(t, want.Uint64(), nanosToTOD(ns), "%d ns", ns)
	}
}

// TestStoreClock runs the clock instructions without the timing model,
// where the virtual clock is one nanosecond per retired instruction: an
// instruction preceded by k others reads 2026-01-01 plus k ns.
func TestStoreClock(t *testing.T) {
	const e = todGuestEpoch
	be := binary.BigEndian
	// lghi x3; stck 0(%r2); stckf 8(%r2); stcke 16(%r2); stck 32(%r2)
	c := machine(t, regs(map[int]uint64{2: dataAddr, 7: 5}), nil,
		"a7090000", "a7090000", "a7090000", "b2052000", "b27c2008", "b2782010", "b2052020")
	d, err := c.mem.ReadBytes(dataAddr, 40)
	require.NoError(t, err)
	require.Equal(t, uint64(e+12), be.Uint64(d[0:]), "stck after 3 instructions: 3 ns")
	require.Equal(t, uint64(e+16), be.Uint64(d[8:]), "stckf after 4")
	// stcke after 5 (20 units): epoch index 0, the clock, bit 103 set,
	// programmable field 0.
	want := make([]byte, 16)
	be.PutUint64(want[1:], e+20)
	want[13] = 1
	require.Equal(t, want, d[16:32], "stcke")
	require.Equal(t, uint64(e+24), be.Uint64(d[32:]), "stck after 6")
	require.Equal(t, uint8(0), c.cc)

	// stck's values are unique: never below or equal to the last stored.
	c = machine(t, func(c *Core) { c.r[2] = dataAddr; c.lastTOD = e + 1000 }, nil, "b2052000", "b27c2008", "b2052010")
	d, err = c.mem.ReadBytes(dataAddr, 24)
	require.NoError(t, err)
	require.Equal(t, uint64(e+1001), be.Uint64(d[0:]))
	require.Equal(t, uint64(e+4), be.Uint64(d[8:]), "stckf need not be unique")
	require.Equal(t, uint64(e+1002), be.Uint64(d[16:]))
}

// TestStoreClockExecuted: stck as the target of exrl, after another
// instruction, still reads the clock at its place (2 ns: lghi and exrl
// retired) and the program goes on after the exrl.
func TestStoreClockExecuted(t *testing.T) {
	// 0: lghi; 4: exrl %r0,.+10 (the stck at 0xe); a: j 0x12; e: stck 0(%r2); 12: svc
	c := machine(t, regs(map[int]uint64{2: dataAddr}), nil, "a7090000", "c60000000005", "a7f40004", "b2052000")
	d, err := c.mem.ReadBytes(dataAddr, 8)
	require.NoError(t, err)
	require.Equal(t, uint64(todGuestEpoch+8), binary.BigEndian.Uint64(d))
	require.Equal(t, uint64(5), c.m.Insns, "lghi, exrl, stck, j, svc")
}

// TestECAG: every attribute reads as all ones (no information), as qemu.
func TestECAG(t *testing.T) {
	for _, code := range []string{rsyEnc(0x4c, 7, 0, 0, 0), rsyEnc(0x4c, 7, 0, 0, 0x101), rsyEnc(0x4c, 7, 3, 2, 0x21)} {
		c := machine(t, regs(map[int]uint64{2: 2, 7: 5}), nil, code)
		require.Equal(t, ^uint64(0), c.r[7], code)
	}
}

// TestStoreClockTiming: with the timing model the clock is its cycles at
// the preset's frequency; an stck at the end of a long run reads the same
// time as the machine shows after the instructions before it, run on
// their own.
func TestStoreClockTiming(t *testing.T) {
	p, err := timing.PresetByName("neoverse-n1")
	require.NoError(t, err)
	// lghi %r1,1000; 0: ahi %r3,1; brct %r1,0b; stck 0(%r2)
	code := mustHex("a71903e8", "a73a0001", "a716fffe", "b2052000", "0af8")
	run := func(n uint64) (*cpu.Machine, *Core) {
		m, err := linux.New("unit", prog(code, make([]byte, 4096)), linux.Config{})
		require.NoError(t, err)
		_, err = timing.Enable(m, p)
		require.NoError(t, err)
		c := m.Core.(*Core)
		c.r[2] = dataAddr
		if n == 0 {
			_, err = m.Run()
		} else {
			_, err = m.RunFor(n)
		}
		require.NoError(t, err)
		return m, c
	}
	before, _ := run(2001) // up to the stck
	require.Equal(t, uint64(0x40000c), before.Core.PC())
	want := todGuestEpoch + nanosToTOD(before.VirtualNanos())
	_, c := run(0)
	d, err := c.mem.ReadBytes(dataAddr, 8)
	require.NoError(t, err)
	require.NotEqual(t, uint64(2001), before.VirtualNanos(), "the model's time, not the instruction count")
	require.Equal(t, want, binary.BigEndian.Uint64(d))
}
