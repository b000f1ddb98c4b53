package arm64

import (
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
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// Branches to tagged addresses (top byte ignored for instruction
// addresses, see branchAddr).  Words assembled with aarch64-linux-gnu-as,
// loaded at 0x400000.

// tbiBranches: blr, br and ret to addresses with a tag in the top byte;
// exit status 42 when the link register, the pc seen by adr in the
// callee and after the ret are all untagged.
var tbiBranches = []uint32{
	0x10000300, // adr x0, f
	0xb2481c00, // orr x0, x0, #0xff00000000000000
	0xd63f0000, // blr x0
	0x10000001, // after: adr x1, after
	0xeb0103df, // cmp x30, x1
	0x9a9f07f3, // cset x19, ne
	0x10000083, // adr x3, next
	0xb2480063, // orr x3, x3, #0x100000000000000
	0xd61f0060, // br x3
	0xd2800c73, // mov x19, #99
	0x100001c2, // next: adr x2, f
	0xeb02029f, // cmp x20, x2
	0x9a930673, // cinc x19, x19, ne
	0x1000009e, // adr x30, done
	0xb2440fde, // orr x30, x30, #0xf000000000000000
	0xd65f03c0, // ret
	0xd2800c53, // mov x19, #98
	0x10000004, // done: adr x4, .
	0x10ffffe5, // adr x5, done
	0xeb05009f, // cmp x4, x5
	0x9a930673, // cinc x19, x19, ne
	0x9100aa60, // add x0, x19, #42
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
	0x10000014, // f: adr x20, .
	0xd65f03c0, // ret
}

// tbiUpperHalf: blr to f with bit 55 set: the upper half's top byte is
// not ignored (TBI1 clear), so the fetch faults at the address as given.
var tbiUpperHalf = []uint32{
	0x100000c0, // adr x0, f
	0xb2490000, // orr x0, x0, #0x80000000000000
	0xd63f0000, // blr x0
	0xd2800000, // mov x0, #0
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
	0xd65f03c0, // f: ret
}

// tbiMisaligned: br to a tagged address two bytes into f: the alignment
// fault (SIGBUS) is at the untagged pc.
var tbiMisaligned = []uint32{
	0x100000e0, // adr x0, f
	0x91000800, // add x0, x0, #2
	0xb2481c00, // orr x0, x0, #0xff00000000000000
	0xd61f0000, // br x0
	0xd2800000, // mov x0, #0
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
	0xd65f03c0, // f: ret
}

// tbiPAuth (pointer authentication on): braaz to a signed tagged
// pointer; the tag survives signing and authentication, the pc drops it.
var tbiPAuth = []uint32{
	0x10000105, // adr x5, h
	0xd2f56007, // mov x7, #0xab00000000000000
	0xaa0700a5, // orr x5, x5, x7
	0xdac123e5, // paciza x5
	0xd61f08bf, // braaz x5
	0xd2800020, // mov x0, #1
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
	0x10000006, // h: adr x6, .
	0xd2800000, // mov x0, #0
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
}

// Loads and stores through tagged pointers (top byte ignored for data
// in the lower half: TCR_EL1.TBI0, see cpu.Memory.loadData).

// tbiData: str, ldr, stp, ldrb, strh through a pointer into the stack
// with tag 0x56; the untagged pointer sees what they wrote. Exit status
// 42 + 42 - (42 | 42<<16), low byte: 42.
var tbiData = []uint32{
	0xd10103e1, // sub x1, sp, #64
	0xd2eac009, // mov x9, #0x5600000000000000
	0xaa090021, // orr x1, x1, x9
	0xd2800542, // mov x2, #42
	0xf9000022, // str x2, [x1]
	0xf9400023, // ldr x3, [x1]
	0xa9008c22, // stp x2, x3, [x1, #8]
	0x39404026, // ldrb w6, [x1, #16]
	0x79000426, // strh w6, [x1, #2]
	0x9240dc24, // and x4, x1, #0xffffffffffffff
	0xf9400885, // ldr x5, [x4, #16]
	0xb9400087, // ldr w7, [x4]
	0x8b0600a0, // add x0, x5, x6
	0xcb070000, // sub x0, x0, x7
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
}

// tbiDataFault: a load through 0xab00000000001000: the fault is at the
// untagged address (qemu reports si_addr 0x1000, as Linux does without
// SA_EXPOSE_TAGBITS).
var tbiDataFault = []uint32{
	0xd2820001, // mov x1, #0x1000
	0xd2f56009, // mov x9, #0xab00000000000000
	0xaa090021, // orr x1, x1, x9
	0xf9400020, // ldr x0, [x1]
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
}

// tbiDataUpper: a store through 0x5680000000001000 (bit 55 set: not a
// lower-half address, its top byte is not ignored): the fault is at the
// address as given.
var tbiDataUpper = []uint32{
	0xd2820001, // mov x1, #0x1000
	0xd2ead009, // mov x9, #0x5680000000000000
	0xaa090021, // orr x1, x1, x9
	0xf9000020, // str x0, [x1]
	0xd2800ba8, // mov x8, #93
	0xd4000001, // svc #0
}

var tbiPrograms = []struct {
	name   string
	words  []uint32
	pauth  bool
	status int
	fault  uint64 // the faulting pc (0: none)
	addr   uint64 // the data address of the fault, if one is expected
	reg    int    // a register that must hold want at the end (0: none)
	want   uint64
}{
	{name: "blr br ret", words: tbiBranches, status: 42, reg: 20, want: 0x400060},
	{name: "upper half", words: tbiUpperHalf, status: 139, fault: 0x0080_0000_0040_0018},
	{name: "misaligned", words: tbiMisaligned, status: 135, fault: 0x40001e},
	{name: "pauth", words: tbiPAuth, pauth: true, status: 0, reg: 6, want: 0x400020},
	{name: "data", words: tbiData, status: 42, reg: 3, want: 42},
	{name: "data fault", words: tbiDataFault, status: 139, fault: 0x40000c, addr: 0x1000},
	{name: "data upper half", words: tbiDataUpper, status: 139, fault: 0x40000c, addr: 0x5680_0000_0000_1000},
}

// TestTaggedBranch runs the programs on simrun.
func TestTaggedBranch(t *testing.T) {
	for _, tc := range tbiPrograms {
		t.Run(tc.name, func(t *testing.T) {
			m, c := pauthMachine(t, tc.words, tc.pauth, 1)
			exit, err := m.Run()
			require.NoError(t, err)
			assert.Equal(t, tc.status, exit.Status)
			if tc.fault != 0 {
				require.NotNil(t, exit.Fault)
				assert.Equal(t, tc.fault, exit.Fault.PC)
				if tc.addr != 0 {
					assert.Equal(t, tc.addr, exit.Fault.Addr)
				}
			} else {
				assert.Nil(t, exit.Fault)
			}
			if tc.reg != 0 {
				assert.Equal(t, tc.want, c.x[tc.reg])
			}
		})
	}
}

// TestTaggedBranchQemu compares the programs with qemu-aarch64: the pc
// and the general registers before every instruction, and how the
// program ends (difftest's retired-instruction count is not used: at a
// fault on the fetch of a branch target qemu logs no record for the
// target, where at a misaligned pc it logs one).
func TestTaggedBranchQemu(t *testing.T) {
	oracle.Require(t, "arm64")
	type state struct {
		pc uint64
		x  [32]uint64
	}
	for _, tc := range tbiPrograms {
		if tc.pauth { // simrun's PAC algorithm is not qemu's
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			img := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, tc.words...), nil)
			path := filepath.Join(t.TempDir(), "tbi")
			require.NoError(t, os.WriteFile(path, img, 0o755))
			var want []state
			res, err := oracle.Trace(context.Background(), path, oracle.Options{}, func(r *oracle.Record) error {
				want = append(want, state{r.PC, r.R})
				return nil
			})
			require.NoError(t, err)
			m, err := linux.New(path, img, linux.Config{Args: []string{path}, Seed: 1}) // as qemu sees it
			require.NoError(t, err)
			c := m.Core.(*Core)
			var got []state
			m.Observer = func(*cpu.Machine) error {
				s := state{pc: c.pc}
				copy(s.x[:], c.x[:31])
				s.x[31] = c.x[rSP]
				got = append(got, s)
				return nil
			}
			exit, err := m.Run()
			require.NoError(t, err)
			status := res.Status
			if res.Signal != 0 {
				status = 128 + res.Signal
			}
			assert.Equal(t, status, exit.Status)
			require.NotEmpty(t, want)
			if tc.fault != 0 && len(got) == len(want)+1 {
				assert.Equal(t, tc.fault, got[len(got)-1].pc, "only the unfetchable target has no qemu record")
				got = got[:len(want)]
			}
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, want[i], got[i], "instruction %d", i)
			}
		})
	}
}

// TestBranchAddr: the pc a register branch sets.
func TestBranchAddr(t *testing.T) {
	for _, tc := range []struct{ in, want uint64 }{
		{0x0000_0000_0040_0000, 0x0000_0000_0040_0000},
		{0xff00_0000_0040_0000, 0x0000_0000_0040_0000}, // tag cleared
		{0x0100_ffff_ffff_fffc, 0x0000_ffff_ffff_fffc},
		{0x5a7f_0000_0040_0003, 0x007f_0000_0040_0003}, // bits 54:48 kept
		{0x0080_0000_0040_0000, 0x0080_0000_0040_0000}, // upper half: as given
		{0xff80_0000_0040_0000, 0xff80_0000_0040_0000},
	} {
		assert.Equal(t, tc.want, branchAddr(tc.in), "%#x", tc.in)
	}
	// NextOp predicts the same target as the branch takes.
	m, c := pauthMachine(t, tbiBranches, false, 1)
	var op cpu.Op
	for range 3 {
		require.True(t, c.NextOp(&op))
		_, err := m.RunFor(1)
		require.NoError(t, err)
	}
	assert.Equal(t, uint64(0x400060), op.Target, "blr's target")
	assert.Equal(t, op.Target, c.pc)
}
