package spe

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

// driveUnit runs n selections through a unit programmed by its driver:
// each selected operation completes 100 cycles after the previous one
// (no collisions), with a load's worth of packets.
func driveUnit(u *Unit, n int) {
	for i := 0; i < n && u.Enabled(); i++ {
		u.NextSelection()
		c := uint64(i) * 100
		if u.Start(c) {
			u.Complete(&Sample{Op: cpu.Op{PC: 0x400000 + uint64(4*i), Class: cpu.ClassLoad, Access: 8, VA: 0x410000},
				Lat: [3]uint32{20, 2, 1}, XlatOK: true, Events: codes.EvRetired | codes.EvL1DAccess}, c+30, c)
		}
	}
}

// TestRegisterRanges walks every writable SPE register of every preset
// through 0, 1, each field's lowest bit, highest bit and all-ones value,
// and all-ones, behind the Linux-like driver: each write is either
// refused as RES0 (or absent) with a message naming the register, or
// runs 200 selections within a time bound, with the driver's AUX output
// within the AUX area and no panic.
func TestRegisterRanges(t *testing.T) {
	for _, preset := range []string{"neoverse-n1", "neoverse-v2", "spe-max"} {
		f := Presets[preset]
		for _, ri := range Registers {
			if ri.ReadOnly {
				continue
			}
			vals := []uint64{0, 1, ^uint64(0)}
			for _, fl := range ri.Fields {
				vals = append(vals, 1<<fl.Lo, 1<<fl.Hi, fl.mask())
				if fl.Hi < 63 {
					vals = append(vals, 1<<(fl.Hi+1))
				}
			}
			for _, v := range vals {
				name := fmt.Sprintf("%s/%s=%#x", preset, ri.Name, v)
				t.Run(name, func(t *testing.T) {
					u, err := NewUnit(f, 1)
					require.NoError(t, err)
					c, err := ParseEvent("arm_spe//", &u.Features)
					require.NoError(t, err)
					c.Period = 256
					d, err := NewDriver(u, c, 4, nil)
					require.NoError(t, err)
					err = u.WriteReg(ri.Reg, v)
					if err != nil {
						assert.Contains(t, err.Error(), ri.Name)
						assert.True(t, v&^ri.WritableMask(&u.Features) != 0 || (ri.Present != nil && !ri.Present(&u.Features)),
							"%s: refused a value with no RES0 bit: %v", name, err)
						return
					}
					var before runtime.MemStats
					runtime.ReadMemStats(&before)
					done := make(chan struct{})
					go func() {
						defer close(done)
						driveUnit(u, 200)
						d.Stop()
					}()
					select {
					case <-done:
					case <-time.After(20 * time.Second):
						t.Fatalf("%s: 200 selections did not finish in 20s", name)
					}
					var after runtime.MemStats
					runtime.ReadMemStats(&after)
					assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "%s: allocations", name)
					var total uint64
					for _, e := range d.Events {
						assert.LessOrEqual(t, e.Size, d.Size, "%s: an AUX record larger than the area", name)
						assert.EqualValues(t, e.Size, len(e.Data))
						total += e.Size
					}
					assert.LessOrEqual(t, total, 200*uint64(1)<<u.Features.MaxSize+d.Size, "%s: AUX bytes", name)
				})
			}
		}
	}
}

// TestBufferSyndromes: values of the buffer registers outside the
// buffer the driver set up give the management event the architecture
// (or simrun's documented choice) names, and the driver contains it.
func TestBufferSyndromes(t *testing.T) {
	const base = auxBase
	const size = 4 * cpu.PageSize
	lim := uint64(base + size)
	for _, c := range []struct {
		preset string
		writes map[Reg]uint64
		bsr    uint64 // the first management event's PMBSR
		ptr    uint64 // PMBPTR with it
		err    string // the driver's error ("" none)
	}{
		// Below the buffer, top byte differs from LIMIT's: translated as
		// it stands, unmapped: stage 1 translation fault at address 0.
		{"neoverse-n1", map[Reg]uint64{PMBPTR: 0}, ecStage1<<pmbsrECSh | pmbsrS | fscXlateL3, 0, "Unexpected buffer fault"},
		// Below the buffer, same top byte: unmapped page, same fault.
		{"neoverse-n1", map[Reg]uint64{PMBPTR: base - 0x1000}, ecStage1<<pmbsrECSh | pmbsrS | fscXlateL3, base - 0x1000, "Unexpected buffer fault"},
		// Beyond the limit, all ones: buffer full before writing
		// (Choices.BadPointer); the pointer is outside the driver's
		// transaction, which it reports and stops.
		{"neoverse-n1", map[Reg]uint64{PMBPTR: lim + 1}, pmbsrS | bscFull, lim + 1, "Buffer pointer outside the AUX transaction"},
		{"neoverse-n1", map[Reg]uint64{PMBPTR: ^uint64(0)}, pmbsrS | bscFull, ^uint64(0), "Buffer pointer outside the AUX transaction"},
		// At the limit or within 2^MaxSize of it: buffer full, and the
		// driver, finding its transaction full, restarts.
		{"neoverse-n1", map[Reg]uint64{PMBPTR: lim}, pmbsrS | bscFull, lim, ""},
		{"neoverse-n1", map[Reg]uint64{PMBPTR: lim - 1}, pmbsrS | bscFull, lim - 1, ""},
		// A limit of 0 (E=1): no room at all: buffer full, restart.
		{"neoverse-n1", map[Reg]uint64{PMBLIMITR: 1}, pmbsrS | bscFull, base, ""},
		// Misaligned pointer with 64-byte alignment: alignment fault.
		{"spe-max", map[Reg]uint64{PMBPTR: base + 1}, ecStage1<<pmbsrECSh | pmbsrS | fscAlign, base + 1, "Unexpected buffer fault"},
		// A limit past the AUX area: the write runs off the mapping.
		{"neoverse-n1", map[Reg]uint64{PMBPTR: lim - 8, PMBLIMITR: (lim + 0x10000) | 1}, ecStage1<<pmbsrECSh | pmbsrS | pmbsrDL | fscXlateL3, lim, "Unexpected buffer fault"},
		// Software sets S: the interrupt comes at once.
		{"neoverse-n1", map[Reg]uint64{PMBSR: pmbsrS}, pmbsrS, base, "Unknown buffer status code"},
		{"neoverse-n1", map[Reg]uint64{PMBSR: ^uint64(0) & Info(PMBSR).WritableMask(features("neoverse-n1"))}, 0, base, "Unknown error code"},
	} {
		name := fmt.Sprintf("%s/%v", c.preset, c.writes)
		u := newTestUnit(t, c.preset)
		cfg, _ := ParseEvent("arm_spe//", &u.Features)
		cfg.Period = 256
		d, err := NewDriver(u, cfg, 4, nil)
		require.NoError(t, err)
		var got []uint64
		irq := u.OnManagement
		u.OnManagement = func() {
			got = append(got, u.Regs.Get(PMBSR), u.Regs.Get(PMBPTR))
			irq()
		}
		for _, reg := range []Reg{PMBLIMITR, PMBPTR, PMBSR} {
			if v, ok := c.writes[reg]; ok {
				require.NoError(t, u.WriteReg(reg, v), name)
			}
		}
		driveUnit(u, 100)
		d.Stop()
		require.GreaterOrEqual(t, len(got), 2, "%s: no management event", name)
		if c.bsr != 0 {
			assert.Equal(t, c.bsr, got[0], "%s: PMBSR %s", name, Syndrome(got[0]))
		}
		assert.Equal(t, c.ptr, got[1], "%s: PMBPTR", name)
		if c.err == "" {
			assert.Empty(t, d.Errors, name)
			assert.Greater(t, u.Written, uint64(50), "%s: the driver restarted", name)
		} else {
			require.NotEmpty(t, d.Errors, name)
			assert.True(t, strings.HasPrefix(d.Errors[0], c.err), "%s: %s", name, d.Errors[0])
			assert.False(t, u.Enabled(), name)
		}
		for _, e := range d.Events {
			assert.LessOrEqual(t, e.Size, d.Size, name)
		}
	}
}

// TestZeroInterval: PMSIRR.INTERVAL = 0 samples at the unit's minimum
// interval (simrun's choice for the UNKNOWN interval); a nonzero interval
// below the minimum is used as written.
func TestZeroInterval(t *testing.T) {
	for _, c := range []struct {
		irr  uint64
		want uint64 // members per selection
	}{{0, 1024 + 1}, {0x200, 512 + 1}, {0x100, 256 + 1}, {0x400, 1024 + 1}, {0xffffff00, 0xffffff00 + 1}} {
		u := newTestUnit(t, "neoverse-n1")
		u.Regs.Set(PMSIRR, c.irr)
		u.Regs.Set(PMSICR, 0)
		u.NextSelection() // the first reload
		assert.Equal(t, c.want, u.NextSelection(), "PMSIRR=%#x", c.irr)
	}
	f := features("neoverse-n1")
	assert.Contains(t, Explain(f, PMSIRR, 0), "UNKNOWN interval (simrun: the minimum, 1024 operations)")
}

func TestSamplePeriod(t *testing.T) {
	n1 := features("neoverse-n1")
	for _, c := range []struct {
		in, want uint64
		note     string
	}{
		{4096, 4096, ""},
		{1024, 1024, ""},
		{1, 1024, "below this unit's minimum interval: using 1024"},
		{1023, 1024, "below"},
		{5000, 4864, "rounded down to 4864"},
		{0xffffff00, 0xffffff00, ""},
		{0xffffff01, 0xffffff00, "does not fit PMSIRR.INTERVAL"},
		{1 << 32, 0xffffff00, "using the largest, 4294967040"},
		{^uint64(0), 0xffffff00, "does not fit"},
	} {
		got, note, err := SamplePeriod(c.in, n1)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%d", c.in)
		if c.note == "" {
			assert.Empty(t, note, "%d", c.in)
		} else {
			assert.Contains(t, note, c.note, "%d", c.in)
			assert.NotContains(t, note, "\n")
		}
		irr, err := Interval(c.in, n1)
		require.NoError(t, err)
		assert.Equal(t, got, irr, "PMSIRR is the programmed period")
	}
	_, _, err := SamplePeriod(0, n1)
	assert.ErrorContains(t, err, "period 0")
	p, _, _ := SamplePeriod(1, features("spe-max"))
	assert.EqualValues(t, 256, p, "spe-max has no minimum beyond 256")
}

func TestParseRegWrite(t *testing.T) {
	for _, c := range []struct {
		in  string
		reg Reg
		v   uint64
	}{{"PMSFCR=0x20003", PMSFCR, 0x20003}, {"pmbptr_el1=0", PMBPTR, 0}, {"PMSIRR=4_096", PMSIRR, 4096},
		{"PMBLIMITR=0xffffffffffffffff", PMBLIMITR, ^uint64(0)}, {"PMSEVFR=0b1010", PMSEVFR, 10}} {
		reg, v, err := ParseRegWrite(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.reg, reg, c.in)
		assert.Equal(t, c.v, v, c.in)
	}
	for _, c := range []struct{ in, want string }{
		{"PMSFCR", "want NAME=VALUE"},
		{"PMSFOO=1", `unknown SPE register "PMSFOO"`},
		{"PMSFCR=zz", `PMSFCR_EL1: value "zz" is not a number`},
		{"PMSFCR=", "is not a number"},
		{"PMBPTR=0x10000000000000000", "does not fit in 64 bits"},
		{"PMBPTR=-1", "is not a number"},
	} {
		_, _, err := ParseRegWrite(c.in)
		assert.ErrorContains(t, err, c.want, c.in)
	}
}

// TestMinLatWidth: MINLAT[15:12] is RES0 with 12-bit counters.
func TestMinLatWidth(t *testing.T) {
	assert.ErrorContains(t, NewRegs(features("neoverse-n1")).SetChecked(PMSLATFR, 0x1000), "bits 12 are RES0")
	assert.NoError(t, NewRegs(features("neoverse-n1")).SetChecked(PMSLATFR, 0xfff))
	assert.NoError(t, NewRegs(features("spe-max")).SetChecked(PMSLATFR, 0xffff))
	ex := Explain(features("neoverse-n1"), PMSLATFR, 0x20)
	assert.Contains(t, ex, "MINLAT")
	assert.NotContains(t, ex, "RES0", ex)
}
