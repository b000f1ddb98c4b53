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
//
// GLOBs match function names as the report prints them (path.Match
// syntax): a symbol's name, or OBJECT+0xOFFSET for code without one.
type Expectation struct {
	Method       Method // 0: any
	At, Row, Via string // "": any
	AtEntry      bool   // entry=program
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
				return nil, fmt.Errorf("%s:%d: %q is not KEY=VALUE (method, at, row, via, entry)", name, n, f)
			}
			if k != "method" && k != "entry" {
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
			case "entry":
				if v != "program" {
					return nil, fmt.Errorf("%s:%d: entry=%s: want entry=program", name, n, v)
				}
				e.AtEntry = true
			default:
				return nil, fmt.Errorf("%s:%d: unknown condition %q (method, at, row, via, entry)", name, n, k)
			}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// matches reports whether e explains a divergence of method m at frame k
// of the true frames truth, naming pcs with name; entry is the running
// program's entry point.
func (e *Expectation) matches(m Method, truth []uint64, k int, name func(uint64) string, entry uint64) bool {
	if e.Method != 0 && e.Method != m {
		return false
	}
	if e.AtEntry && (len(truth) == 0 || truth[0] != entry) {
		return false
	}
	glob := func(p string, pc uint64) bool {
		ok, _ := path.Match(p, name(pc))
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
	return true
}
