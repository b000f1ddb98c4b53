package arm64

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// Words below were assembled with aarch64-linux-gnu-as -march=armv8.3-a.

// pauthRoundTrip: bl f; exit(0).  f signs x30 with paciasp, keeps a copy
// in x1, spills and reloads it, authenticates it (autiasp, copy in x2)
// and returns.
var pauthRoundTrip = []uint32{
	0x94000004, // bl f
	0xd2800000, // mov x0, #0
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
	0xd503233f, // f: paciasp
	0xaa1e03e1, // mov x1, x30
	0xa9bf7bfd, // stp x29, x30, [sp, #-16]!
	0xa8c17bfd, // ldp x29, x30, [sp], #16
	0xd50323bf, // autiasp
	0xaa1e03e2, // mov x2, x30
	0xd65f03c0, // ret
}

// pauthBadSP authenticates with a different SP than it signed with.
var pauthBadSP = []uint32{
	0x94000004, // bl f
	0xd2800000, // mov x0, #0
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
	0xd503233f, // f: paciasp
	0xd10043ff, // sub sp, sp, #16
	0xd50323bf, // autiasp
	0x910043ff, // add sp, sp, #16
	0xd65f03c0, // ret
}

// pauthForms: retaa, retab, pacia + blraa, paciza + braaz, pacdza +
// ldraa, then ldrab of a DA-signed pointer (fails: SIGSEGV at 0x400034).
var pauthForms = []uint32{
	0x94000011,    // bl fa
	0x94000012,    // bl fb
	0x10000263,    // adr x3, g
	0xd2824684,    // mov x4, #0x1234
	0xdac10083,    // pacia x3, x4
	0xd73f0864,    // blraa x3, x4
	0x10000065,    // adr x5, h
	0xdac123e5,    // paciza x5
	0xd61f08bf,    // braaz x5
	0x100001e6,    // h: adr x6, data
	0xdac12be6,    // pacdza x6
	0xf82014c7,    // ldraa x7, [x6, #8]
	0xaa0603e9,    // mov x9, x6
	0xf8a0052a,    // ldrab x10, [x9]
	0xd2800000,    // mov x0, #0
	0xd2800ba8,    // mov x8, #93
	0xd4000001,    // svc #0
	0xd503233f,    // fa: paciasp
	0xd65f0bff,    // retaa
	0xd503237f,    // fb: pacibsp
	0xd65f0fff,    // retab
	0xaa1e03eb,    // g: mov x11, x30
	0xd65f03c0,    // ret
	0xd503201f,    // nop
	0x00001111, 0, // data: .quad 0x1111
	0x00002222, 0, //       .quad 0x2222
}

func pauthMachine(t *testing.T, words []uint32, on bool, seed uint64) (*cpu.Machine, *Core) {
	t.Helper()
	img := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), nil)
	m, err := linux.New("pauth", img, linux.Config{Seed: seed})
	require.NoError(t, err)
	c := m.Core.(*Core)
	if on {
		c.EnablePAuth(seed)
	}
	return m, c
}

func TestPAuthRoundTrip(t *testing.T) {
	m, c := pauthMachine(t, pauthRoundTrip, true, 1)
	exit, err := m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	assert.Equal(t, 0, exit.Status)
	ra := uint64(0x400004)
	assert.Equal(t, ra, c.x[2], "autiasp restores the return address")
	assert.NotEqual(t, ra, c.x[1], "paciasp signs it")
	assert.Equal(t, ra, stripPAC(c.x[1]), "the code is in bits 54:48 only")
	assert.Equal(t, ra, c.x[1]&^pacMask)

	// Other keys (another seed) sign differently; off, nothing is signed.
	m2, c2 := pauthMachine(t, pauthRoundTrip, true, 2)
	_, err = m2.Run()
	require.NoError(t, err)
	assert.NotEqual(t, c.x[1], c2.x[1])
	m3, c3 := pauthMachine(t, pauthRoundTrip, false, 1)
	_, err = m3.Run()
	require.NoError(t, err)
	assert.Equal(t, ra, c3.x[1], "without --pauth paciasp is a NOP")
	assert.Equal(t, m.Insns, m3.Insns)
}

func TestPAuthFailure(t *testing.T) {
	m, c := pauthMachine(t, pauthBadSP, true, 1)
	exit, err := m.Run()
	require.NoError(t, err)
	require.NotNil(t, exit.Fault, "a failed autiasp makes ret fault")
	assert.Equal(t, 139, exit.Status)
	assert.Equal(t, uint64(1), c.x[rLR]>>53&3, "error code 01 for the A key in bits 54:53")
	assert.Equal(t, uint64(0x400004), c.x[rLR]&^(3<<53))
	assert.Equal(t, c.x[rLR], exit.Fault.PC)

	m, _ = pauthMachine(t, pauthBadSP, false, 1)
	exit, err = m.Run()
	require.NoError(t, err)
	assert.Nil(t, exit.Fault, "off: the hints are NOPs")
}

func TestPAuthForms(t *testing.T) {
	m, c := pauthMachine(t, pauthForms, true, 7)
	exit, err := m.Run()
	require.NoError(t, err)
	require.NotNil(t, exit.Fault)
	assert.Equal(t, uint64(0x400034), exit.Fault.PC, "ldrab of a DA-signed pointer faults")
	assert.Equal(t, 139, exit.Status)
	assert.Equal(t, uint64(0x400018), c.x[11], "blraa links")
	assert.Equal(t, uint64(0x2222), c.x[7], "ldraa loads through the authenticated pointer")
	assert.Equal(t, uint64(0x400060), stripPAC(c.x[6]))
	assert.NotEqual(t, c.x[6], stripPAC(c.x[6]))

	// Off, the non-hint forms are undefined: the first retaa.
	m, _ = pauthMachine(t, pauthForms, false, 7)
	exit, err = m.Run()
	require.NoError(t, err)
	require.NotNil(t, exit.Fault)
	assert.Equal(t, cpu.FaultUndefined, exit.Fault.Kind)
	assert.Equal(t, uint64(0x400048), exit.Fault.PC)
}

func TestPAuthDecode(t *testing.T) {
	for _, tc := range []struct {
		w    uint32
		want inst
	}{
		{0xd503233f, inst{op: opPAuth, a: paPAC, b: keyIA, rd: rLR, ra: rLR, rn: rSP}}, // paciasp
		{0xd50323ff, inst{op: opPAuth, a: paAUT, b: keyIB, rd: rLR, ra: rLR, rn: rSP}}, // autibsp
		{0xd50320ff, inst{op: opPAuth, a: paXPAC, rd: rLR, ra: rLR, rn: rZR}},          // xpaclri
		{0xd503215f, inst{op: opPAuth, a: paPAC, b: keyIB, rd: 17, ra: 17, rn: 16}},    // pacib1716
		{0xd503239f, inst{op: opPAuth, a: paAUT, b: keyIA, rd: rLR, ra: rLR, rn: rZR}}, // autiaz
		{0xdac107e1, inst{op: opPAuth, a: paPAC, b: keyIB, rd: 1, ra: 1, rn: rSP}},     // pacib x1, sp
		{0xdac11c83, inst{op: opPAuth, a: paAUT, b: keyDB, rd: 3, ra: 3, rn: 4}},       // autdb x3, x4
		{0xdac137e6, inst{op: opPAuth, a: paAUT, b: keyIB, rd: 6, ra: 6, rn: rZR}},     // autizb x6
		{0xdac147e8, inst{op: opPAuth, a: paXPAC, rd: 8, ra: 8, rn: rZR}},              // xpacd x8
		{0x9ac23020, inst{op: opPAuth, a: paPACGA, b: keyGA, rd: 0, ra: 1, rn: 2}},     // pacga x0, x1, x2
		{0xd65f0fff, inst{op: opPAuthBr, a: paReturn, b: 1, rn: rLR, rm: rSP}},         // retab
		{0xd61f0c5f, inst{op: opPAuthBr, b: 1, rn: 2, rm: rZR}},                        // brabz x2
		{0xd73f0c7f, inst{op: opPAuthBr, a: paLink, b: 1, rn: 3, rm: rSP}},             // blrab x3, sp
		{0xf8fff420, inst{op: opPAuthLdr, b: keyDB, rd: 0, rn: 1, imm: ^uint64(7)}},    // ldrab x0, [x1, #-8]
		{0xf8202c20, inst{op: opPAuthLdr, a: 1, b: keyDA, rd: 0, rn: 1, imm: 16}},      // ldraa x0, [x1, #16]!
		{0xf83ff420, inst{op: opPAuthLdr, b: keyDA, rd: 0, rn: 1, imm: 4088}},          // ldraa x0, [x1, #4088]
		{0xd503201f, inst{op: opNop}},                                                  // nop stays a nop
		{0xd503245f, inst{op: opNop}},                                                  // bti c stays a nop
		{0xdac14408, inst{op: opUndef, imm: 0xdac14408}},                               // xpacd x8 with Rn = x0
		{0xf8202c21, inst{op: opUndef, imm: 0xf8202c21}},                               // ldraa x1, [x1, #16]!
	} {
		plain := decode(tc.w, 0x400000)
		got := decodePAuth(tc.w, plain)
		assert.Equal(t, tc.want, got, "%#08x", tc.w)
	}
}

func TestPAuthAlgorithm(t *testing.T) {
	var c Core
	c.icache = cpu.NewICache(cpu.NewMemory(), 2, 4, func(in *inst) { in.op = opNone })
	c.m = &cpu.Machine{Mem: cpu.NewMemory()}
	c.EnablePAuth(42)
	s := c.pa
	p := uint64(0x0000_0055_0000_1234)
	for key := keyIA; key <= keyDB; key++ {
		signed := s.addPAC(key, p, 0x5500800000)
		assert.Equal(t, p, signed&^pacMask, "only bits 54:48 change")
		assert.Equal(t, p, s.auth(key, signed, 0x5500800000))
		bad := s.auth(key, signed, 0x5500800010)
		if signed != p || s.addPAC(key, p, 0x5500800010) != signed {
			assert.NotEqual(t, p, bad, "another modifier fails")
		}
	}
	// A pointer with garbage in its code bits never authenticates.
	noncanon := p | 1<<50
	signed := s.addPAC(keyIA, noncanon, 0)
	assert.NotEqual(t, p, s.auth(keyIA, signed, 0))
	// Upper-half pointers strip to ones.
	assert.Equal(t, uint64(0xffff_0000_0000_1000), stripPAC(0xff80_0000_0000_1000))
	// Codes spread over all 128 values.
	seen := map[uint64]bool{}
	for i := uint64(0); i < 4096; i++ {
		seen[s.addPAC(keyIA, p+4*i, 0)>>48&0x7f] = true
	}
	assert.Len(t, seen, 128)
}

// TestPAuthQemu runs the pointer-authentication programs under qemu with
// pauth=on (its own keys and QARMA5) and under simrun --pauth: the same
// stdout, exit status and instruction count, including the failed
// authentications that end in SIGSEGV.
func TestPAuthQemu(t *testing.T) {
	oracle.Require(t, "arm64")
	const cpuOn = "max,sve=off,sme=off,pauth=on"
	var paths []string
	for _, cfg := range []string{"aarch64-O0", "aarch64-O2"} {
		b, err := programs.Find(cfg, "pacret")
		require.NoError(t, err)
		paths = append(paths, b.Path)
	}
	dir := t.TempDir()
	for name, words := range map[string][]uint32{"roundtrip": pauthRoundTrip, "badsp": pauthBadSP, "forms": pauthForms} {
		p := filepath.Join(dir, name)
		img := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), nil)
		require.NoError(t, os.WriteFile(p, img, 0o755))
		paths = append(paths, p)
	}
	for _, p := range paths {
		t.Run(filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), func(t *testing.T) {
			// Trace, not Count: Count's re-run of a guest killed by a
			// signal does not pass the CPU model on.
			res, err := oracle.Trace(context.Background(), p, oracle.Options{CPU: cpuOn, Max: 1}, func(*oracle.Record) error { return nil })
			require.NoError(t, err)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			var out bytes.Buffer
			m, err := linux.New(p, data, linux.Config{Stdout: &out, Seed: 1})
			require.NoError(t, err)
			m.Core.(*Core).EnablePAuth(1)
			exit, err := m.Run()
			require.NoError(t, err)
			assert.Equal(t, string(res.Stdout), out.String(), "stdout")
			want, retired := res.Status, res.Insns
			if res.Signal != 0 {
				want = 128 + res.Signal
				// qemu logs a faulting load, which does not retire; a
				// branch to a non-canonical address faults at the fetch
				// of its target, which qemu cannot log.
				if exit.Fault != nil && exit.Fault.Kind != cpu.FaultFetch {
					retired--
				}
			}
			assert.Equal(t, want, exit.Status, "status")
			assert.Equal(t, retired, m.Insns, "instructions")
		})
	}
}
