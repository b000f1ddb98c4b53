package unwind

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// An Expectation names divergences known and explained, so that `simrun
// unwind check --expect FILE` sets its exit status only for the others
// (a CI job's check of a program whose libraries' CFI is known wrong).
// The file has one expectation per line, conditions then " -- " and the
// reason; # starts a comment:
//
//	method=eh_frame at=__longjmp row=__longjmp -- glibc's __longjmp ...
//	via=ld-linux-aarch64.so.1+0x106[d-f]? -- _dl_runtime_resolve's CFI ...
//
// Conditions, all of which must hold (a missing one holds always):
//
//	method=M   the unwinding method (sframe, eh_frame, fp)
//	at=GLOB    the function of frame 0
//	row=GLOB   the function whose unwind row stepped to the wrong frame
//	via=GLOB   a true frame before the wrong one is in such a function
//	entry=program  frame 0 is the running program's entry point (its ELF
//	           e_entry, where crt1's _start is, named or stripped)
//	entry=start    frame 0 is in the 64 bytes from the entry point: glibc's
//	           aarch64 start.S, _start with __wrap_main at its end (15
//	           instructions), named or stripped
//	pc=GLOB    frame 0's pc as OBJECT+0xADDRESS: the file name of the
//	           object that maps it and the address it has there as
//	           linked (objdump's and readelf's), symbols or none — for
//	           code of a stripped program, whose functions have no name
//	cfa=REG    the row that stepped to the wrong frame computes the CFA
//	           from register REG, named as the report's rows name it
//	           (x0, sp, fp, r15, f0) or by DWARF number (r0): a
//	           function whose CFI describes a frame other than its own
//	           (__longjmp's, by the jmp_buf in x0), found by what its
//	           rows say when a stripped program leaves it no name
//
// GLOBs match function names as the report prints them (path.Match
// syntax): a symbol's name, or OBJECT+0xOFFSET for code without one.
type Expectation struct {
	Method       Method // 0: any
	At, Row, Via string // "": any
	PC           string // "": any
	CFA          string // "": any
	AtEntry      uint64 // entry=program: 1 (the entry's pc), entry=start: 64 (bytes from it)
	Reason       string
	Line         int    // in the file, for messages
	Matched      uint64 // divergences it explained (counted by the checker)
}

// ParseExpectations reads an expectations file; name is for messages.
func ParseExpectations(r io.Reader, name string) ([]*Expectation, error) {
	var out []*Expectation
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<16)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		conds, reason, ok := strings.Cut(" "+line+" ", " -- ")
		if !ok || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: no reason (conditions, then \" -- \" and the reason)", name, n)
		}
		e := &Expectation{Reason: strings.TrimSpace(reason), Line: n}
		fields := strings.Fields(conds)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s:%d: no condition: it would hide every divergence", name, n)
		}
		for _, f := range fields {
			k, v, ok := strings.Cut(f, "=")
			if !ok || v == "" {
				return nil, fmt.Errorf("%s:%d: %q is not KEY=VALUE (method, at, row, via, entry, pc, cfa)", name, n, f)
			}
			if k != "method" && k != "entry" && k != "cfa" {
				if _, err := path.Match(v, ""); err != nil {
					return nil, fmt.Errorf("%s:%d: %s=%s: bad pattern: %v", name, n, k, v, err)
				}
			}
			switch k {
			case "method":
				m, err := ParseMethod(v)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %v", name, n, err)
				}
				e.Method = m
			case "at":
				e.At = v
			case "row":
				e.Row = v
			case "via":
				e.Via = v
			case "pc":
				e.PC = v
			case "cfa":
				e.CFA = v
			case "entry":
				switch v {
				case "program":
					e.AtEntry = 1
				case "start":
					e.AtEntry = 64
				default:
					return nil, fmt.Errorf("%s:%d: entry=%s: want entry=program or entry=start", name, n, v)
				}
			default:
				return nil, fmt.Errorf("%s:%d: unknown condition %q (method, at, row, via, entry, pc, cfa)", name, n, k)
			}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// matchEnv is what matching needs besides the truth: names of pcs, the
// running program's entry point and the rows the method used.
type matchEnv struct {
	name     func(pc uint64) string // the function of pc, as funcName
	linkName func(pc uint64) string // OBJECT+0xADDRESS ("" unknown)
	// cfaReg names the register the method's row at frame i of the
	// walk computes the CFA from (its report name and DWARF spelling);
	// ok is false without a row or for a CFA expression.
	cfaReg func(i int) (name, dwarf string, ok bool)
	entry  uint64
}

// matches reports whether e explains a divergence of method m at frame k
// of the true frames truth.
func (e *Expectation) matches(m Method, truth []uint64, k int, env *matchEnv) bool {
	if e.Method != 0 && e.Method != m {
		return false
	}
	if e.AtEntry != 0 && (len(truth) == 0 || truth[0] < env.entry || truth[0]-env.entry >= e.AtEntry) {
		return false
	}
	glob := func(p string, pc uint64) bool {
		ok, _ := path.Match(p, env.name(pc))
		return ok
	}
	if e.At != "" && (len(truth) == 0 || !glob(e.At, truth[0])) {
		return false
	}
	if e.Row != "" && (k == 0 || k-1 >= len(truth) || !glob(e.Row, truth[k-1])) {
		return false
	}
	if e.Via != "" {
		found := false
		for i := 0; i < k && i < len(truth); i++ {
			if glob(e.Via, truth[i]) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if e.PC != "" {
		if len(truth) == 0 || env.linkName == nil {
			return false
		}
		n := env.linkName(truth[0])
		if ok, _ := path.Match(e.PC, n); n == "" || !ok {
			return false
		}
	}
	if e.CFA != "" {
		if k == 0 || env.cfaReg == nil {
			return false
		}
		name, dwarf, ok := env.cfaReg(k - 1)
		if !ok || e.CFA != name && e.CFA != dwarf {
			return false
		}
	}
	return true
}
