package s390x

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

func TestNextOp(t *testing.T) {
	tests := []struct {
		name string
		code string
		set  map[int]uint64
		cc   uint8
		want cpu.Op
	}{
		{"lg", "e3302008 0004", map[int]uint64{2: 0x410000}, 0,
			cpu.Op{Size: 6, Class: cpu.ClassLoad, Access: 8, VA: 0x410008}},
		{"stmg", "eb6ff0300024", map[int]uint64{15: 0x410100}, 0,
			cpu.Op{Size: 6, Class: cpu.ClassStore, Access: 80, VA: 0x410130}},
		{"mvc: the store to the first operand", "d20f10002000", map[int]uint64{1: 0x410000, 2: 0x410800}, 0,
			cpu.Op{Size: 6, Class: cpu.ClassStore, Access: 16, VA: 0x410000, Flags: cpu.OpStorageToStorage}},
		{"std", "60102000", map[int]uint64{2: 0x410000}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassStore, Access: 8, VA: 0x410000, Flags: cpu.OpFP | cpu.OpSIMDFPReg}},
		{"vl", "e71020000006", map[int]uint64{2: 0x410010}, 0,
			cpu.Op{Size: 6, Class: cpu.ClassLoad, Access: 16, VA: 0x410010, Flags: cpu.OpSIMD | cpu.OpSIMDFPReg}},
		{"asi is an interlocked update", "eb01200000 6a", map[int]uint64{2: 0x410000}, 0,
			cpu.Op{Size: 6, Class: cpu.ClassLoadAtomic, Access: 4, VA: 0x410000}},
		{"jne taken", "a7740010", nil, 1,
			cpu.Op{Size: 4, Class: cpu.ClassBranch, Target: 0x400020, Flags: cpu.OpConditional | cpu.OpCondPassed}},
		{"jne not taken", "a7740010", nil, 0,
			cpu.Op{Size: 4, Class: cpu.ClassBranch, Target: 0x400020, Flags: cpu.OpConditional}},
		{"br %r14 returns", "07fe", map[int]uint64{14: 0x400100}, 0,
			cpu.Op{Size: 2, Class: cpu.ClassBranch, Target: 0x400100, Flags: cpu.OpIndirect | cpu.OpReturn | cpu.OpCondPassed}},
		{"brasl calls", "c0e500000100", nil, 0,
			cpu.Op{Size: 6, Class: cpu.ClassBranch, Target: 0x400200, Flags: cpu.OpLink | cpu.OpCondPassed}},
		{"svc", "0a04", nil, 0, cpu.Op{Size: 2, Flags: cpu.OpSyscall}},
		{"adbr", "b31a0012", nil, 0, cpu.Op{Size: 4, Flags: cpu.OpFP}},
		{"vfadb", "e71230003 0e3", nil, 0, cpu.Op{Size: 6, Flags: cpu.OpSIMD | cpu.OpFP}},
		{"locgre", "b9e28034", nil, 0, cpu.Op{Size: 4, Flags: cpu.OpConditional | cpu.OpCondPassed}},
		{"mvst: a store of the destination", "b2550012", map[int]uint64{1: 0x410100, 2: 0x410800}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassStore, Access: 1, VA: 0x410100}},
		{"clst: a load of the first operand", "b25d0012", map[int]uint64{1: 0x410100, 2: 0x410800}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassLoad, Access: 1, VA: 0x410100}},
		{"srst: a load of the searched string", "b25e0012", map[int]uint64{1: 0x410900, 2: 0x410800}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassLoad, Access: 1, VA: 0x410800}},
		{"mvcle: a store of the first operand", "a8240000", map[int]uint64{2: 0x410100, 4: 0x410800}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassStore, Access: 1, VA: 0x410100}},
		{"clclu: a load of the first operand", "eb240000008f", map[int]uint64{2: 0x410100, 4: 0x410800}, 0,
			cpu.Op{Size: 6, Class: cpu.ClassLoad, Access: 1, VA: 0x410100}},
		{"mvcl", "0e24", map[int]uint64{2: 0x410200, 4: 0x410800}, 0,
			cpu.Op{Size: 2, Class: cpu.ClassStore, Access: 1, VA: 0x410200}},
		{"stck", "b2052008", map[int]uint64{2: 0x410000}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassStore, Access: 8, VA: 0x410008}},
		{"stcke", "b2782010", map[int]uint64{2: 0x410000}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassStore, Access: 16, VA: 0x410010}},
		{"ecag: no access", "eb7000000 04c", nil, 0, cpu.Op{Size: 6}},
		{"stfle", "b2b02008", map[int]uint64{2: 0x410000}, 0,
			cpu.Op{Size: 4, Class: cpu.ClassStore, Access: 24, VA: 0x410008}},
		// exrl at 0x400000 of the mvc at 0x400008 (after the svc), its
		// length from r1's low byte.
		{"exrl is its target", "c61000000004 0af8 d20010002000", map[int]uint64{1: 0x41000f, 2: 0x410800}, 0,
			cpu.Op{Size: 6, Class: cpu.ClassStore, Access: 16, VA: 0x41000f, Flags: cpu.OpStorageToStorage}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := linux.New("op", prog(mustHex(tt.code, "0af8"), make([]byte, 4096)), linux.Config{})
			require.NoError(t, err)
			c := m.Core.(*Core)
			for r, v := range tt.set {
				c.r[r] = v
			}
			c.cc = tt.cc
			var got cpu.Op
			require.True(t, c.NextOp(&got))
			tt.want.PC = 0x400000
			require.Equal(t, tt.want, got)
		})
	}
}

// TestMemClassCoverage: every instruction with a storage operand is
// classified as a load, store or atomic.
func TestMemClassCoverage(t *testing.T) {
	noAccess := map[op]bool{ // base/index registers that only form a number or a branch target
		opLA: true, opLAY: true, opSLL: true, opSRL: true, opSRA: true, opSLA: true, opSLLK: true, opSRLK: true,
		opSRAK: true, opSLAK: true, opSLLG: true, opSRLG: true, opSRAG: true, opSLAG: true, opRLL: true, opRLLG: true,
		opSLDL: true, opSRDL: true, opSLDA: true, opSRDA: true, opBC: true, opBAS: true, opBCT: true, opBCTG: true,
		opPFD: true, opTCDB: true, opTCEB: true, opTCXB: true, opVLVG: true, opVLGV: true, opVESL: true, opVESRA: true,
		opVESRL: true, opVERLL: true,
		opEX: true, opEXRL: true, // the address of the target, which NextOp classifies instead
		opECAG: true,                // the address only selects the attribute
		opSRNM: true, opSRNMB: true, // the address's low bits are the rounding mode
	}
	for o := opFirst; o < opEnd; o++ {
		in := inst{op: o}
		cl, _ := memClass(&in)
		f := o.info().format
		// String instructions address memory through R1/R2 (RRE), mvcl
		// and clcl through R1/R2 (RR), stfle and stck through B2+D2 (S).
		str := o == opSRST || o == opCLST || o == opMVST || o == opMVCL || o == opCLCL || f == fmtS
		if hasStorage := (hasBase(f) || str || f == fmtRILrel && o != opLARL && o != opBRASL && o != opBRCT) && !noAccess[o]; hasStorage != (cl != cpu.ClassOther) {
			t.Errorf("%v: storage operand %v, class %v", o, hasStorage, cl)
		}
	}
}

// TestNextOpAgreesWithExecution steps bundled programs and checks each
// NextOp against what the instruction then did: the next pc (branch
// target when taken), and accesses inside mapped memory.
func TestNextOpAgreesWithExecution(t *testing.T) {
	for _, b := range append(programs.Binaries("s390x"), programs.GlibcBinaries("s390x")...) {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			data, err := os.ReadFile(b.Path)
			require.NoError(t, err)
			m, err := linux.New(b.Path, data, linux.Config{})
			require.NoError(t, err)
			var op cpu.Op
			for i := 0; i < 200000 && !m.Exited(); i++ {
				require.True(t, m.Core.NextOp(&op), "pc 0x%x", m.Core.PC())
				if op.Class != cpu.ClassOther && op.Class != cpu.ClassBranch {
					require.True(t, m.Mem.IsMapped(op.VA, 1), "pc 0x%x: access at 0x%x", op.PC, op.VA)
				}
				_, err := m.RunFor(1)
				require.NoError(t, err)
				if m.Exited() {
					break
				}
				next := op.PC + uint64(op.Size)
				if op.Class == cpu.ClassBranch && op.Flags&cpu.OpCondPassed != 0 {
					next = op.Target
				}
				require.Equal(t, next, m.Core.PC(), "after pc 0x%x (%+v)", op.PC, op)
			}
		})
	}
}

// TestNextOpAfterPageReplaced: another core that decodes the same page
// of shared memory (a vfork child, which runs in its parent's memory)
// replaces the page's decoded slots; NextOp of the first core at a slot
// it has not decoded yet must look the page up again, as Execute does,
// not report that there is no instruction (unwind check's truth then
// missed a call of dash's right after its vforked child ran).
func TestNextOpAfterPageReplaced(t *testing.T) {
	m, err := linux.New("op", prog(mustHex("a7f40004 c0e500000100", "0af8"), make([]byte, 4096)), linux.Config{})
	require.NoError(t, err)
	var op cpu.Op
	require.True(t, m.Core.NextOp(&op)) // j: its page is now in the core's cache
	other := cpu.NewMachineMem(m.Arch, m.Mem)
	other.Core.SetPC(0x400000)
	require.True(t, other.Core.NextOp(&op)) // the page gets the other core's slots
	m.Core.SetPC(0x400004)
	require.True(t, m.Core.NextOp(&op), "brasl after the page was replaced")
	require.Equal(t, cpu.Op{PC: 0x400004, Size: 6, Class: cpu.ClassBranch, Target: 0x400204, Flags: cpu.OpLink | cpu.OpCondPassed}, op)
}
