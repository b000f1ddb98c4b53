// Package report writes simrun's self-contained HTML report of a
// recording: the run summary, an interactive flame graph of the sampled
// stacks, per-function tables, the annotated disassembly of the hot
// functions and their SFrame rows.  The page has no external assets and
// makes no network requests: styles, script and data are inline.
package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"sync"

	"simrun/sim/profile"
	"simrun/sim/spe"
)

// Options choose what the report shows.
type Options struct {
	// HotFuncs is how many of the most sampled functions get annotated
	// disassembly and SFrame rows (default 5).
	HotFuncs int
	// Program is the ELF file's bytes (for SFrame); nil leaves out the
	// SFrame tables.
	Program []byte
}

// FuncStats are the samples of one function.
type FuncStats struct {
	Name                  string
	Start, End            uint64
	Samples               int // samples whose leaf is in the function
	Inclusive             int // samples with the function anywhere on the stack
	Total, Issue, Xlat    uint64
	Loads, Stores, Branch int
	Other                 int
	L1DRefill, TLBWalk    int
	LLCMiss, Mispredict   int
}

// Percent is the function's share of all samples.
func (f *FuncStats) Percent(total int) float64 { return pct(f.Samples, total) }

// InsnStats are the samples of one instruction.
type InsnStats struct {
	PC      uint64
	Bytes   string
	Text    string
	Where   string
	Samples int
	Total   uint64
	Issue   uint64
	Xlat    uint64
	Events  string // most frequent event names of its samples
}

// Hot is one annotated function.
type Hot struct {
	Func   FuncStats
	Insns  []InsnStats
	Note   string // why there is no disassembly, if there is none
	SFrame *SFrameTable
}

type page struct {
	Title    string
	S        *profile.Summary
	Samples  int
	IPC      string
	Funcs    []FuncStats
	Hot      []Hot
	Stacks   any // the flame graph's data, JSON-encoded (and escaped) by the template
	KindRows [][2]string
	DSRows   [][2]string
	EvRows   [][2]string
	SFNote   string
	AuxFlags map[string]int
}

//go:embed report.html.tmpl
var pageTemplate string

// pageTmpl parses the page template on first use: parsing costs every
// simrun command start-up memory, and only report needs it.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"hex": func(v any) string { return fmt.Sprintf("0x%x", v) },
		"pct": func(a, b int) string { return fmt.Sprintf("%.2f%%", pct(a, b)) },
		"avg": func(sum uint64, n int) string {
			if n == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f", float64(sum)/float64(n))
		},
		"bar": func(a, b int) string {
			if b == 0 {
				return "0"
			}
			return fmt.Sprintf("%.1f", 100*float64(a)/float64(b))
		},
		"join": strings.Join,
	}).Parse(pageTemplate))
})

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Funcs aggregates the samples per function, most sampled first (ties by
// name).
func Funcs(samples []profile.Sample) []FuncStats {
	by := map[string]*FuncStats{}
	get := func(fr profile.Frame) *FuncStats {
		name := fr.FuncName()
		f, ok := by[name]
		if !ok {
			f = &FuncStats{Name: name}
			if fr.Func != "" {
				f.Start = fr.PC - fr.Offset
			}
			by[name] = f
		}
		return f
	}
	for i := range samples {
		s := &samples[i]
		seen := map[string]bool{}
		for _, fr := range s.Frames {
			if !seen[fr.FuncName()] {
				seen[fr.FuncName()] = true
				get(fr).Inclusive++
			}
		}
		f := get(s.Leaf())
		f.Samples++
		f.Total += uint64(s.Lat[profile.LatTotal])
		f.Issue += uint64(s.Lat[profile.LatIssue])
		f.Xlat += uint64(s.Lat[profile.LatXlat])
		switch s.Op.Kind {
		case "load":
			f.Loads++
		case "store":
			f.Stores++
		case "branch":
			f.Branch++
		default:
			f.Other++
		}
		ev := s.Events
		f.L1DRefill += b2i(ev&spe.EvL1DRefill != 0)
		f.TLBWalk += b2i(ev&spe.EvTLBWalk != 0)
		f.LLCMiss += b2i(ev&spe.EvLLCMiss != 0)
		f.Mispredict += b2i(ev&spe.EvMispredict != 0)
	}
	out := make([]FuncStats, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Samples != out[j].Samples {
			return out[i].Samples > out[j].Samples
		}
		if out[i].Inclusive != out[j].Inclusive {
			return out[i].Inclusive > out[j].Inclusive
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Write writes the HTML report of a recording; bin is its program.
func Write(w io.Writer, rec *profile.Recording, bin *profile.Binary, opt Options) error {
	if opt.HotFuncs <= 0 {
		opt.HotFuncs = 5
	}
	s := &rec.Summary
	p := &page{Title: fmt.Sprintf("simrun report: %s", s.Comm), S: s, Samples: len(rec.Samples), AuxFlags: map[string]int{}}
	if s.Cycles > 0 {
		p.IPC = fmt.Sprintf("%.3f", float64(s.Instructions)/float64(s.Cycles))
	}
	for _, e := range s.Buffer.Events {
		for _, f := range e.Flags {
			p.AuxFlags[f]++
		}
	}
	p.Funcs = Funcs(rec.Samples)

	// Samples by operation kind, data source and event.
	kinds, ds, ev := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range rec.Samples {
		sm := &rec.Samples[i]
		kinds[sm.Op.Desc]++
		if sm.HasDataSource {
			ds[profile.DataSourceName(sm.DataSource)]++
		}
		for _, n := range sm.EventNames() {
			ev[n]++
		}
	}
	p.KindRows, p.DSRows, p.EvRows = countRows(kinds), countRows(ds), countRows(ev)

	// The flame graph's data: folded stacks with every weight.
	type stack struct {
		Stack string    `json:"s"`
		V     [4]uint64 `json:"v"`
	}
	idx := map[string]int{}
	var stacks []stack
	for i := range rec.Samples {
		sm := &rec.Samples[i]
		k := sm.Stack(";")
		j, ok := idx[k]
		if !ok {
			j = len(stacks)
			idx[k] = j
			stacks = append(stacks, stack{Stack: k})
		}
		for wt := profile.WeightSamples; wt <= profile.WeightXlat; wt++ {
			stacks[j].V[wt] += sm.Value(wt)
		}
	}
	sort.Slice(stacks, func(i, j int) bool { return stacks[i].Stack < stacks[j].Stack })
	if stacks == nil {
		stacks = []stack{}
	}
	p.Stacks = stacks
	var err error

	// Hot functions: annotated disassembly and SFrame rows.
	var hotFuncs []profile.Func
	for _, f := range p.Funcs {
		if len(p.Hot) == opt.HotFuncs {
			break
		}
		if f.Samples == 0 {
			break
		}
		h := Hot{Func: f}
		fn, ok := bin.FuncAt(f.Start)
		switch {
		case f.Name == "[unknown]" || !ok:
			h.Note = "no symbol covers these samples"
		case bin.Arch == nil || bin.Arch.Disasm == nil:
			h.Note = "no disassembler for this architecture"
		default:
			h.Insns, err = annotate(bin, fn, rec.Samples)
			if err != nil {
				return err
			}
			hotFuncs = append(hotFuncs, *fn)
		}
		p.Hot = append(p.Hot, h)
	}
	if opt.Program != nil && len(hotFuncs) > 0 {
		tables, err := SFrames(bin, opt.Program, hotFuncs)
		if err != nil {
			p.SFNote = "SFrame: " + err.Error()
		} else {
			for i := range p.Hot {
				for j := range tables {
					if tables[j].Func == p.Hot[i].Func.Name {
						p.Hot[i].SFrame = &tables[j]
					}
				}
			}
		}
	}
	return pageTmpl().Execute(w, p)
}

func countRows(m map[string]int) [][2]string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].v != l[j].v {
			return l[i].v > l[j].v
		}
		return l[i].k < l[j].k
	})
	out := make([][2]string, len(l))
	for i, x := range l {
		out[i] = [2]string{x.k, fmt.Sprint(x.v)}
	}
	return out
}

// annotate disassembles fn and attaches the samples whose pc is each
// instruction.
func annotate(bin *profile.Binary, fn *profile.Func, samples []profile.Sample) ([]InsnStats, error) {
	code, ok := bin.Code(fn.Start, fn.End)
	if !ok {
		return nil, fmt.Errorf("%s: %s [0x%x, 0x%x) is not in an executable section", bin.Path, fn.Name, fn.Start, fn.End)
	}
	type acc struct {
		n                  int
		total, issue, xlat uint64
		ev                 map[string]int
	}
	at := map[uint64]*acc{}
	for i := range samples {
		s := &samples[i]
		if s.PC < fn.Start || s.PC >= fn.End {
			continue
		}
		a := at[s.PC]
		if a == nil {
			a = &acc{ev: map[string]int{}}
			at[s.PC] = a
		}
		a.n++
		a.total += uint64(s.Lat[profile.LatTotal])
		a.issue += uint64(s.Lat[profile.LatIssue])
		a.xlat += uint64(s.Lat[profile.LatXlat])
		for _, e := range s.EventNames() {
			if e != "RETIRED" {
				a.ev[e]++
			}
		}
	}
	var out []InsnStats
	for off := 0; off < len(code); {
		pc := fn.Start + uint64(off)
		text, n := bin.Arch.Disasm(code[off:], pc)
		if n <= 0 {
			n = min(int(bin.Arch.InsnAlign), len(code)-off)
			if n <= 0 {
				n = 1
			}
			text = "(undecodable)"
		}
		in := InsnStats{PC: pc, Bytes: fmt.Sprintf("% x", code[off:off+n]), Text: text}
		if file, line, ok := bin.LineAt(pc); ok {
			in.Where = fmt.Sprintf("%s:%d", file, line)
		}
		if a := at[pc]; a != nil {
			in.Samples, in.Total, in.Issue, in.Xlat = a.n, a.total, a.issue, a.xlat
			var evs []string
			for _, r := range countRows(a.ev) {
				evs = append(evs, r[0]+" "+r[1])
			}
			in.Events = strings.Join(evs, ", ")
		}
		out = append(out, in)
		off += n
	}
	return out, nil
}
