package s390x

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// stropData is the data page image of the string-instruction programs:
// short strings at 0, 0x100 and 0x200, and from 0x1000 a 10 KiB string
// of 'x' that crosses pages.
func stropData() []byte {
	d := make([]byte, 0x4000)
	copy(d, "hello, world\x00")
	copy(d[0x100:], "hello, there\x00")
	copy(d[0x200:], "hello, world\x00")
	for i := 0x1000; i < 0x3800; i++ {
		d[i] = 'x'
	}
	return d
}

// stropCode exercises srst (found, end reached, 8 KiB limit), clst (equal,
// low, high, limit), mvst (done, page-limited), ex of mvc (one retired
// instruction) and of lr (two), exrl of ar and xc, exrl with r0, sar/ear,
// efpc before and after an inexact division, stfle with short and long
// buffers, and exits through exrl of svc 0 with r7 = 248 (see
// testdata/strop.s for the source).
var stropCode = mustHex(
	"c0df00410000a70900004120d0004110d064b25e0012b22200304120d0004110d005b25e0012b2220040c02f00411000",
	"c01f00413f00b25e0012b2220050a709006f4120d0004110d064b25e0012a70900004110d0004120d200b25d0012b222",
	"00604110d0004120d100b25d0012b22200704110d1004120d000b25d0012b2220080c01f00411000c02f00411004b25d",
	"0012b22200904110d4004120d000b2550012b22200a0e3b0d40000044110d500c02f00411000b2550012b22200a0e3b0",
	"d8000004c0500000005ea749000744405000e3c0d6000004c031ffffffb3c06f00000023c0500000005144605000a749",
	"0034c6400000004ba7490003c64000000047e3c0d6000004c6000000003cc07112345678b24e0017b24e000db24f0081",
	"b24f0090a7190001b3950001a7190003b3950021b38c00a0b31d0002b38c00a0a7090000b2b0d700b2220030e340d700",
	"0004e350d7080004a7090005b2b0d700b2220030eb46d7000004b2220010a7290000a77900f8c6700000000d00000000",
	"d200d600d00018001a00d700d600d6000a000707")

// TestQemuStringAndExecute runs stropCode in lockstep with qemu under the
// CPU model simrun shows.
func TestQemuStringAndExecute(t *testing.T) {
	oracle.Require(t, "s390x")
	path := filepath.Join(t.TempDir(), "strop")
	require.NoError(t, os.WriteFile(path, prog(stropCode, stropData()), 0o755))
	res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: 1000, FP: true, CPU: programs.S390xQemuCPU})
	require.NoError(t, err)
	require.Equal(t, res.Insns, res.Compared)
	t.Logf("%d instructions compared", res.Compared)
}

// exrelCode runs relative branches and relative-long operands as targets
// of ex and exrl (see testdata/exrel.s): j, larl, lgrl, bras, cij taken
// and not, bcr not taken, brct not taken, brctg taken, then exits
// through exrl of svc 1 with r2 = 1111.
var exrelCode = []string{
	"a7290000c0500000004144005000a7290063a72a0001c6000000003ac4480000004ec60000000037c60000000037a72a",
	"000aa7790001c60000000032a7290062a72a0064c0500000002e440050001277c6000000002ba7890001c05000000027",
	"44005000a7890005c60000000022a7290061a7190000c6000000001d00000000a72a03e807fea7f4ffc6c03000000017",
	"c46800000014a7e5fff5ec78ffd3017eec780009057e0789a7860005a787ffe30a010000000007071122334455667788",
}

// TestExecuteRelative: a relative target of EXECUTE addresses relative
// to its own location, and one that does not branch continues after the
// EXECUTE (whose length it takes).
func TestExecuteRelative(t *testing.T) {
	c := machine(t, nil, nil, exrelCode...)
	const text, datum = 0x400000, 0x400000 + 0xb8
	require.Equal(t, uint64(1111), c.r[2], "r2: the path taken (1 + 10 + 100 + 1000)")
	require.Equal(t, uint64(datum), c.r[3], "larl as a target")
	require.Equal(t, uint64(0x1122334455667788), c.r[4])
	require.Equal(t, c.r[4], c.r[6], "lgrl as a target")
	require.Equal(t, uint64(text+0x2e), c.r[14], "bras as a target links past the exrl")
	require.Equal(t, uint64(4), c.r[8], "brctg as a target")
}

// TestQemuExecuteRelative runs exrelCode in lockstep with qemu (which
// addresses an ex target's relative operands from the target since
// 7.2.3).
func TestQemuExecuteRelative(t *testing.T) {
	oracle.Require(t, "s390x")
	path := filepath.Join(t.TempDir(), "exrel")
	require.NoError(t, os.WriteFile(path, prog(mustHex(exrelCode...), make([]byte, 4096)), 0o755))
	res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: 1000, FP: true, CPU: programs.S390xQemuCPU})
	require.NoError(t, err)
	require.Equal(t, res.Insns, res.Compared)
	require.Equal(t, 1111&0xff, res.Status)
	t.Logf("%d instructions compared", res.Compared)
}

func TestStringSemantics(t *testing.T) {
	data := stropData()
	// srst for 'o' in "hello, world": r1 = its address, cc 1.
	c := machine(t, regs(map[int]uint64{0: 'o', 1: dataAddr + 100, 2: dataAddr}), data, "b25e0012")
	require.Equal(t, uint64(dataAddr+4), c.r[1])
	require.Equal(t, uint8(1), c.cc)
	// srst stops after strLimit bytes with cc 3 and r2 advanced.
	c = machine(t, regs(map[int]uint64{1: dataAddr + 0x3f00, 2: dataAddr + 0x1000}), data, "b25e0012")
	require.Equal(t, uint64(dataAddr+0x1000+strLimit), c.r[2])
	require.Equal(t, uint8(3), c.cc)
	// clst "hello, world" against "hello, there": high at offset 7.
	c = machine(t, regs(map[int]uint64{1: dataAddr, 2: dataAddr + 0x100}), data, "b25d0012")
	require.Equal(t, uint64(dataAddr+7), c.r[1])
	require.Equal(t, uint64(dataAddr+0x107), c.r[2])
	require.Equal(t, uint8(2), c.cc)
	// mvst stops at the nearer page end.
	c = machine(t, regs(map[int]uint64{1: dataAddr + 0x500, 2: dataAddr + 0x1000}), data, "b2550012")
	require.Equal(t, uint64(dataAddr+0x1000), c.r[1])
	require.Equal(t, uint64(dataAddr+0x1b00), c.r[2])
	require.Equal(t, uint8(3), c.cc)
	// ipm puts the cc in bits 34-35 and keeps bits 0-31 and 40-63.
	c = machine(t, regs(map[int]uint64{3: 0xffffffff_ffffffff}), nil, "a7090001", "a7010001", "b2220030")
	require.Equal(t, uint64(0xffffffff_30ffffff), c.r[3]) // tmll: all ones, cc 3
}

// TestExecuteFaults: ex of ex is an execute exception, an odd target a
// specification exception, both SIGILL; a bad r0 in srst too.
func TestExecuteFaults(t *testing.T) {
	for _, tt := range []struct {
		name string
		code []string
		set  map[int]uint64
	}{
		{"ex of exrl", []string{"c60000000004", "0000", "c60000000000"}, nil},
		{"odd target", []string{"44005000"}, map[int]uint64{5: 0x400001}},
		{"srst with bits 32-55 of r0", []string{"b25e0012"}, map[int]uint64{0: 0x100, 1: dataAddr + 8, 2: dataAddr}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := linux.New("unit", prog(mustHex(append(tt.code, "0af8")...), make([]byte, 4096)), linux.Config{})
			require.NoError(t, err)
			c := m.Core.(*Core)
			for r, v := range tt.set {
				c.r[r] = v
			}
			exit, err := m.Run()
			require.NoError(t, err)
			require.NotNil(t, exit.Fault)
			require.Equal(t, cpu.SIGILL, exit.Fault.Signal(), "%v", exit.Fault)
			require.Equal(t, uint64(0x400000), exit.Fault.PC)
		})
	}
}

// TestSetFPC: sfpc installs a value with masks and rounding modes zero;
// a reserved bit or a binary rounding mode of 4-6 is a specification
// exception (SIGILL, as qemu); enabling a trap or another rounding mode,
// which simrun does not implement, stops with an unsupported-instruction
// fault that says why.
func TestSetFPC(t *testing.T) {
	// lgfi %r1,V; sfpc %r1; efpc %r2
	code := func(v uint32) []string {
		return []string{fmt.Sprintf("c011%08x", v), "b3840010", "b38c0020"}
	}
	c := machine(t, nil, nil, code(0x00f80000)...)
	require.Equal(t, uint64(0x00f80000), c.r[2], "flags set by sfpc, read by efpc")
	for _, tt := range []struct {
		v    uint32
		kind cpu.FaultKind
		want string
	}{
		{0x01000000, cpu.FaultUndefined, "reserved"},
		{0x00000080, cpu.FaultUndefined, "reserved"},
		{0x00000005, cpu.FaultUndefined, "reserved"},
		{0x80000000, cpu.FaultUnsupported, "traps"},
		{0x00000001, cpu.FaultUnsupported, "rounds"},
	} {
		m, err := linux.New("unit", prog(mustHex(append(code(tt.v), "0af8")...), make([]byte, 4096)), linux.Config{})
		require.NoError(t, err)
		exit, err := m.Run()
		require.NoError(t, err)
		require.NotNil(t, exit.Fault, "sfpc 0x%08x", tt.v)
		require.Equal(t, tt.kind, exit.Fault.Kind, "sfpc 0x%08x: %v", tt.v, exit.Fault)
		require.Contains(t, exit.Fault.Error(), tt.want)
		require.Equal(t, uint64(0x400006), exit.Fault.PC, "the fault names the sfpc")
	}
}

// fpcControlCode sets the FPC's flags with sfpc, sets the rounding mode
// to nearest with srnm and srnmb (whose operand is an address, of which
// only the low bits count; srnmb's bits 56-60 must be zero), reads the FPC with efpc into r2, stores it
// with stfpc and loads it into r3, loads another FPC with lfpc and reads
// it into r4, and stores it again at data+8. Then stam and lam move
// access registers through memory (r5 = a7 = a2), stamy wraps from a15
// to a1, and lamy loads a1's word back into a3 (r6 = a1).
var fpcControlCode = []string{
	"c01100f80000", "b3840010", // lgfi %r1,0x00f80000; sfpc %r1
	"b2990ffc", "b2b80f00", "b38c0020", // srnm 0xffc; srnmb 0xf00; efpc %r2
	"c0df00410000", "b29cd000", "5830d000", // llilf %r13,data; stfpc 0(%r13); l %r3,0(%r13)
	"c01100080000", "5010d004", "b29dd004", // lgfi %r1,0x00080000; st %r1,4(%r13); lfpc 4(%r13)
	"b38c0040", "b29cd008", // efpc %r4; stfpc 8(%r13)
	"c01111223344", "b24e0021", "9b02d010", // lgfi %r1,0x11223344; sar %a2,%r1; stam %a0,%a2,16(%r13)
	"9a57d010", "b24f0057", // lam %a5,%a7,16(%r13); ear %r5,%a7
	"ebe1d018009b", "eb33d024009a", "b24f0063", // stamy %a14,%a1,24(%r13); lamy %a3,%a3,36(%r13); ear %r6,%a3
}

// TestFPCControl: srnm and srnmb to nearest keep the FPC's flags, stfpc
// and lfpc store and load the FPC as efpc and sfpc read and write it,
// stam and lam move access registers (the faults: TestBadInput).
func TestFPCControl(t *testing.T) {
	c := machine(t, nil, nil, fpcControlCode...)
	require.Equal(t, uint64(0x00f80000), c.r[2], "flags after srnm and srnmb")
	require.Equal(t, uint64(0x00f80000), c.r[3], "stfpc")
	require.Equal(t, uint64(0x00080000), c.r[4], "lfpc")
	v, ok := c.mem.Load32BE(0x410008)
	require.True(t, ok)
	require.Equal(t, uint32(0x00080000), v, "stfpc after lfpc")
	require.Equal(t, uint64(0x11223344), c.r[5], "lam of stam's a2 into a7")
	require.Equal(t, uint64(c.ar[1]), c.r[6], "stamy wrapped to a1, lamy loaded it into a3")
	// stam's a0, a1 (a2 went to 24, which stamy's a14 overwrote), then a15, a0, a1
	for i, want := range []uint32{c.ar[0], c.ar[1], c.ar[14], c.ar[15], c.ar[0], c.ar[1]} {
		v, _ := c.mem.Load32BE(0x410010 + 4*uint64(i))
		require.Equal(t, want, v, "word %d", i)
	}
}

// TestQemuFPCControl runs fpcControlCode in lockstep with qemu.
func TestQemuFPCControl(t *testing.T) {
	oracle.Require(t, "s390x")
	path := filepath.Join(t.TempDir(), "fpcctl")
	require.NoError(t, os.WriteFile(path, prog(mustHex(append(fpcControlCode, "a7290000", "0af8")...), make([]byte, 4096)), 0o755))
	res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: 100, FP: true, CPU: programs.S390xQemuCPU})
	require.NoError(t, err)
	require.Equal(t, res.Insns, res.Compared)
	require.Equal(t, 0, res.Status)
}
