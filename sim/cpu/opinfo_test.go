package cpu

import (
	"testing"
	"unsafe"
)

// TestRecordSizes: the cores keep an OpInfo per instruction slot and
// the consumers get Retired records by the batch; neither may grow
// unnoticed (a word more is 25% more per slot).
func TestRecordSizes(t *testing.T) {
	if n := unsafe.Sizeof(OpInfo{}); n != 32 {
		t.Errorf("OpInfo is %d bytes, not 32", n)
	}
	if n := unsafe.Sizeof(Retired{}); n != 24 {
		t.Errorf("Retired is %d bytes, not 24", n)
	}
}

// TestLoggedMeanings: each accessor of a retired operation gives the
// logged value only where it has that accessor's meaning, so that no
// consumer reads a condition bit or a stack pointer as an address.
func TestLoggedMeanings(t *testing.T) {
	const val = 0x7ff0
	op := func(class OpClass, access uint8, flags OpFlags) Retired {
		in := NewOpInfo(4)
		in.Class, in.Access, in.Flags = class, access, flags
		return NewRetired(&in, 0x1000, val)
	}
	for _, c := range []struct {
		name string
		r    Retired
		want Logged
	}{
		{"load", op(ClassLoad, 8, 0), LogsAddr},
		{"store", op(ClassStore, 4, 0), LogsAddr},
		{"conditional load (s390x loc)", op(ClassLoad, 8, OpConditional), LogsAddr},
		{"conditional select", op(ClassOther, 0, OpConditional), LogsCond},
		{"call", op(ClassBranch, 0, OpLink), LogsSP},
		{"indirect branch", op(ClassBranch, 0, OpIndirect), LogsSP},
		{"return", op(ClassBranch, 0, OpIndirect|OpReturn), LogsSP},
		{"conditional branch", op(ClassBranch, 0, OpConditional), LogsNothing},
		{"direct jump", op(ClassBranch, 0, 0), LogsNothing},
		{"add", op(ClassOther, 0, 0), LogsNothing},
	} {
		r := &c.r
		if got := r.Info.Logged(); got != c.want {
			t.Errorf("%s: Logged %d, want %d", c.name, got, c.want)
		}
		if r.Info.LogsValue() != (c.want != LogsNothing) {
			t.Errorf("%s: LogsValue %v", c.name, r.Info.LogsValue())
		}
		addr, sp := uint64(0), uint64(0)
		switch c.want {
		case LogsAddr:
			addr = val
		case LogsSP:
			sp = val
		}
		if r.Addr() != addr || r.SP() != sp || r.CondPassed() != (c.want == LogsCond) {
			t.Errorf("%s: Addr %#x SP %#x CondPassed %v", c.name, r.Addr(), r.SP(), r.CondPassed())
		}
	}
}
