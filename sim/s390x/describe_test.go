package s390x

import (
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

const (
	cc = cpu.RegFlags
	v0 = cpu.RegVec
)

func infoRegs(o *cpu.OpInfo) (src, dst []uint8) {
	for i := 0; i < int(o.NSrc); i++ {
		src = append(src, o.SrcReg(i))
	}
	for i := 0; i < int(o.NDst); i++ {
		dst = append(dst, o.DstReg(i))
	}
	return src, dst
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name     string
		code     string
		src, dst []uint8
		unit     cpu.Unit
		class    cpu.OpClass
		access   uint8
	}{
		{"lg: base in, r1 out, cc kept", "e3302008 0004", []uint8{2}, []uint8{3}, cpu.UnitLoad, cpu.ClassLoad, 8},
		{"lgr", "b9040012", []uint8{2}, []uint8{1}, cpu.UnitALU, cpu.ClassOther, 0},
		{"ar reads and writes r1, sets cc", "1a12", []uint8{1, 2}, []uint8{1, cc}, cpu.UnitALU, cpu.ClassOther, 0},
		{"alcr reads the carry", "b9980012", []uint8{1, 2, cc}, []uint8{1, cc}, cpu.UnitALU, cpu.ClassOther, 0},
		{"cgr only sets cc", "b9200012", []uint8{1, 2}, []uint8{cc}, cpu.UnitALU, cpu.ClassOther, 0},
		{"mr: the even/odd pair", "1c25", []uint8{2, 5, 3}, []uint8{2, 3}, cpu.UnitMul, cpu.ClassOther, 0},
		{"dsgr", "b90d0024", []uint8{2, 4, 3}, []uint8{2, 3}, cpu.UnitDiv, cpu.ClassOther, 0},
		{"stg: data and base in", "e3302008 0024", []uint8{2, 3}, nil, cpu.UnitStore, cpu.ClassStore, 8},
		{"lmg: the end of the range", "eb6ff0300004", []uint8{15}, []uint8{13, 14, 15}, cpu.UnitLoad, cpu.ClassLoad, 80},
		{"stmg", "eb6ff0300024", []uint8{15, 13, 14, 15}, nil, cpu.UnitStore, cpu.ClassStore, 80},
		{"jne reads cc", "a7740010", []uint8{cc}, nil, cpu.UnitBranch, cpu.ClassBranch, 0},
		{"br %r14", "07fe", []uint8{14}, nil, cpu.UnitBranch, cpu.ClassBranch, 0},
		{"brasl writes r14", "c0e500000100", nil, []uint8{14}, cpu.UnitBranch, cpu.ClassBranch, 0},
		{"cgrj", "ec1200108064", []uint8{1, 2}, nil, cpu.UnitBranch, cpu.ClassBranch, 0},
		{"adbr", "b31a0002", []uint8{v0, v0 + 2}, []uint8{v0, cc}, cpu.UnitFP, cpu.ClassOther, 0},
		{"ddbr", "b31d0002", []uint8{v0, v0 + 2}, []uint8{v0}, cpu.UnitFPDiv, cpu.ClassOther, 0},
		{"std", "60102000", []uint8{2, v0 + 1}, nil, cpu.UnitStore, cpu.ClassStore, 8},
		{"lgdr: FPR to GPR", "b3cd0012", []uint8{v0 + 2}, []uint8{1}, cpu.UnitFP, cpu.ClassOther, 0},
		{"vfadb", "e71230003 0e3", []uint8{v0 + 2, v0 + 3}, []uint8{v0 + 1}, cpu.UnitSIMD, cpu.ClassOther, 0},
		{"vl", "e71020000006", []uint8{2}, []uint8{v0 + 1}, cpu.UnitLoad, cpu.ClassLoad, 16},
		{"vlgvg: vector to GPR", "e71200003021", []uint8{v0 + 2}, []uint8{1}, cpu.UnitSIMD, cpu.ClassOther, 0},
		{"locgre", "b9e28034", []uint8{3, 4, cc}, []uint8{3}, cpu.UnitALU, cpu.ClassOther, 0},
		{"mvc", "d20f10002000", []uint8{1, 2}, nil, cpu.UnitStore, cpu.ClassStore, 16},
		{"svc", "0a04", []uint8{1, 2, 3, 4}, []uint8{2}, cpu.UnitSys, cpu.ClassOther, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := decode(mustHex(tt.code))
			o := describe(&in)
			src, dst := infoRegs(&o)
			require.True(t, o.Valid)
			require.Equal(t, in.ln, o.Size)
			require.Equal(t, tt.src, src, "sources")
			require.Equal(t, tt.dst, dst, "results")
			require.Equal(t, tt.unit, o.Unit, "unit")
			require.Equal(t, tt.class, o.Class, "class")
			require.Equal(t, tt.access, o.Access, "access")
		})
	}
}

// TestDescribeEveryOp: every op, with any register fields, gets a valid
// description of its length whose registers are model ids, and the ops
// with a data access (memClass) carry it.
func TestDescribeEveryOp(t *testing.T) {
	valid := func(r uint8) bool { return r < 16 || r == cpu.RegFlags || r >= cpu.RegVec && r < cpu.RegVec+32 }
	for o := opNone; o < opEnd; o++ {
		for _, f := range []uint8{0, 1, 14, 15, 31} {
			in := inst{op: o, ln: 6, r1: f &^ 1, r2: f, r3: f, b: rNone, m: 15}
			if o >= opFirst {
				in.ln = o.info().length
				if !isVector(o.info().format) { // 4-bit fields
					in.r1, in.r2, in.r3 = in.r1&15, in.r2&15, in.r3&15
				}
			}
			d := describe(&in)
			require.True(t, d.Valid, "%v", o)
			require.Equal(t, in.ln, d.Size, "%v", o)
			src, dst := infoRegs(&d)
			for _, r := range append(src, dst...) {
				require.True(t, valid(r), "%v: register id %d", o, r)
			}
			if cl, _ := memClass(&in); o >= opFirst && d.Class != cpu.ClassBranch {
				require.Equal(t, cl, d.Class, "%v", o)
			}
		}
	}
}
