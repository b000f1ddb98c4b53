package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = `package arm64

type group uint8

const (
	grpNone group = iota
	grpALU         // rd = f(rn)
	grpFP          // execFP: fd = f(fn)
)

type opFlags uint16

const (
	opfSetsNZCV opFlags = 1 << iota // writes the flags
)

const (
`

func gen(t *testing.T, ops string) (*inventory, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "inst.go")
	if err := os.WriteFile(path, []byte(header+ops+"\tnumOps\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return read(path)
}

// TestRead: the inventory entries of a well-formed block, and the loud
// failures of the malformed ones.
func TestRead(t *testing.T) {
	inv, err := gen(t, "\topNone op = iota // grpALU: x\n\topAdds // grpALU opfSetsNZCV size=8\n\topFadd // grpFP\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.ops) != 3 || inv.ops[1].group != "grpALU" || len(inv.ops[1].flags) != 1 || inv.ops[1].size != 8 || inv.firstFP != "opFadd" {
		t.Fatalf("inventory %+v", inv)
	}
	for _, c := range []struct{ ops, want string }{
		{"\topNone op = iota // grpALU\n\topAdd // rd = rn + rm\n", `"rd" is no group`},
		{"\topNone op = iota // grpALU\n\topAdd\n\topFadd // grpFP\n", "opAdd has no group"},
		{"\topNone op = iota // grpALU\n\topAdd // grpNone\n\topFadd // grpFP\n", `"grpNone" is no group`},
		{"\topNone op = iota // grpALU grpFP\n", "two groups"},
		{"\topNone op = iota // grpALU size=0\n", "bad"},
		{"\topNone op = iota // grpFP\n\topAdd // grpALU\n\topFadd // grpFP\n", "does not follow the other execFP ops"},
		{"\topNone op = iota // grpALU\n", "no op of an execFP group"},
		{"\topNone op = iota // grpALU\n\topAdd = 3 // grpFP\n", "only the first op constant"},
	} {
		_, err := gen(t, c.ops)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.ops, err, c.want)
		}
	}
}
