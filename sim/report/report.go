// Package report writes simrun's self-contained HTML report of a
// recording: the run summary, an interactive flame graph of the sampled
// stacks, a sortable per-function table, charts of latencies, data
// sources, events and time, the annotated source and disassembly of the
// hot functions (windows around the sampled lines), their SFrame rows and
// a glossary of the SPE terms the page uses.  The page has no external assets and
// makes no network requests: styles, script and data are inline.
package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"simrun/sim/profile"
	"simrun/sim/spe/codes"
)

// Options choose what the report shows.
type Options struct {
	// HotFuncs is how many of the most sampled functions get annotated
	// source, disassembly and SFrame rows (default 10).
	HotFuncs int
	// Program is the ELF file's bytes (for SFrame); nil leaves out the
	// SFrame tables.
	Program []byte
	// SourceDirs are where to look for the source files DWARF names by a
	// relative path, besides the working directory and the program's
	// directory (each also up to two levels up).
	SourceDirs []string
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
	// DS counts the samples by data source, Events by event (RETIRED,
	// which every sample has, left out).
	DS, Events map[string]int
}

// Percent is the function's share of all samples.
func (f *FuncStats) Percent(total int) float64 { return pct(f.Samples, total) }

// TopDS is the function's most frequent data source and its share of the
// function's samples that have one ("" when none has).
func (f *FuncStats) TopDS() (string, float64) {
	c := counts(f.DS)
	if len(c) == 0 {
		return "", 0
	}
	n := 0
	for _, x := range c {
		n += x.N
	}
	return c[0].Name, pct(c[0].N, n)
}

// Hot is one annotated function.
type Hot struct {
	Func   FuncStats
	Disasm []DisLine
	Source []SourceFile
	Note   string // why there is no disassembly, if there is none
	SFrame *SFrameTable
	// MaxInsn is the most samples of one instruction (the bars' scale).
	MaxInsn int
}

type funcRow struct {
	FuncStats
	Pct        float64
	TopDS      string
	TopDSPct   float64
	Annotated  bool
	MeanTotal  string
	MeanIssue  string
	MeanXlat   string
	TotalSort  float64
	IssueSort  float64
	XlatSort   float64
	HasSamples bool
}

type page struct {
	Title    string
	CPU      string
	S        *profile.Summary
	Samples  int
	IPC      string
	Funcs    []funcRow
	Hot      []Hot
	Stacks   any // the flame graph's data, JSON-encoded (and escaped) by the template
	KindRows []Count
	DSRows   []Count
	EvRows   []Count
	// ThreadRows are the samples by thread (COMM-TID), only when the
	// program ran more than one; ObjectRows by the file whose code they
	// are in, only when more than one file has samples.
	ThreadRows []Count
	ObjectRows []Count
	SFNote     string
	AuxFlags   []Count
	HasLines   bool
	Charts     struct {
		Latency, Timeline, DataSources, Events template.HTML
	}
	Glossary []Term
}

//go:embed report.html.tmpl
var pageTemplate string

// pageTmpl parses the page template on first use: parsing costs every
// simrun command start-up memory, and only report needs it.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"hex": func(v any) string { return fmt.Sprintf("0x%x", v) },
		"pct": func(a, b int) string { return fmt.Sprintf("%.1f%%", pct(a, b)) },
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
		// term links a glossary term to its entry.
		"term": func(t string) template.HTML {
			if _, ok := glossary[t]; ok {
				return template.HTML(fmt.Sprintf(`<a class="term" href="#%s">%s</a>`, esc(termID(t)), esc(t)))
			}
			var parts []string
			for _, w := range strings.Fields(t) {
				if _, ok := glossary[w]; ok {
					parts = append(parts, fmt.Sprintf(`<a class="term" href="#%s">%s</a>`, esc(termID(w)), esc(w)))
				} else {
					parts = append(parts, esc(w))
				}
			}
			return template.HTML(strings.Join(parts, " "))
		},
		"termid": termID,
		"fnid":   func(name string) string { return "fn-" + name },
	}).Parse(pageTemplate))
})

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// CPULabel names the machine a recording was timed on truthfully: the
// timing model's preset (sim/cpu's presets, copied into the recording's
// summary), and for a guest that is not arm64 the guest's architecture,
// since the preset models an Arm core whatever the guest runs.
func CPULabel(s *profile.Summary) string {
	model := strings.TrimSuffix(s.CPU.Desc, " core")
	if model == "" {
		model = s.CPU.Model
	}
	detail := fmt.Sprintf("%s preset, %d MHz", s.CPU.Model, s.CPU.MHz)
	if s.Arch == "" || s.Arch == "arm64" {
		return fmt.Sprintf("%s core (%s)", model, detail)
	}
	return fmt.Sprintf("%s guest, timed on a %s model (%s)", s.Arch, model, detail)
}

// Funcs aggregates the samples per function, most sampled first (ties by
// name).
func Funcs(samples []profile.Sample) []FuncStats {
	by := map[string]*FuncStats{}
	get := func(fr profile.Frame) *FuncStats {
		name := fr.FuncName()
		f, ok := by[name]
		if !ok {
			f = &FuncStats{Name: name, DS: map[string]int{}, Events: map[string]int{}}
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
		if s.HasDataSource {
			f.DS[codes.DataSourceName(s.DataSource)]++
		}
		for _, e := range s.EventNames() {
			if e != "RETIRED" {
				f.Events[e]++
			}
		}
		ev := s.Events
		f.L1DRefill += b2i(ev&codes.EvL1DRefill != 0)
		f.TLBWalk += b2i(ev&codes.EvTLBWalk != 0)
		f.LLCMiss += b2i(ev&codes.EvLLCMiss != 0)
		f.Mispredict += b2i(ev&codes.EvMispredict != 0)
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

func mean(sum uint64, n int) (string, float64) {
	if n == 0 {
		return "-", -1
	}
	v := float64(sum) / float64(n)
	return fmt.Sprintf("%.1f", v), v
}

// Write writes the HTML report of a recording; bin is its program.
func Write(w io.Writer, rec *profile.Recording, bin *profile.Binary, opt Options) error {
	if opt.HotFuncs <= 0 {
		opt.HotFuncs = 10
	}
	s := &rec.Summary
	terms := glossarySet{}
	// The words of the page's fixed parts (the cards, the function
	// table's headers, the run tables).
	terms.add("SPE", "record", "INTERVAL", "total latency", "issue latency", "translation latency", "AUX area",
		"data source", "L1D-REFILL", "TLB-REFILL", "MISPRED", "RETIRED")
	p := &page{Title: fmt.Sprintf("simrun report: %s", s.Comm), CPU: CPULabel(s), S: s, Samples: len(rec.Samples), HasLines: bin.HasLines}
	if s.Cycles > 0 {
		p.IPC = fmt.Sprintf("%.3f", float64(s.Instructions)/float64(s.Cycles))
	}
	flags := map[string]int{}
	for _, e := range s.Buffer.Events {
		for _, f := range e.Flags {
			flags[f]++
			terms.add(f)
		}
	}
	p.AuxFlags = counts(flags)
	if s.Buffer.Truncated {
		terms.add("truncated")
	}
	terms.add("SAMPLE_POP", "SAMPLE_FEED", "SAMPLE_FILTRATE", "SAMPLE_COLLISION", "SAMPLE_BUFFER_FULL",
		"SAMPLE_FEED_BR", "SAMPLE_FEED_LD", "SAMPLE_FEED_ST", "SAMPLE_FEED_FP", "SAMPLE_FEED_SIMD",
		"SAMPLE_FEED_OP", "SAMPLE_FEED_EVENT", "SAMPLE_FEED_LAT", "SAMPLE_FEED_DS")
	for _, r := range s.SPE.Registers {
		terms.add(r.Name)
	}
	for _, wd := range s.SPE.Words {
		// Register and field names, event names: split at anything else.
		terms.add(strings.FieldsFunc(wd, func(r rune) bool {
			return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		})...)
	}
	stats := Funcs(rec.Samples)

	// Samples by operation kind, data source and event.
	kinds, ds, ev := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range rec.Samples {
		sm := &rec.Samples[i]
		kinds[sm.Op.Desc]++
		if sm.HasDataSource {
			ds[codes.DataSourceName(sm.DataSource)]++
		}
		for _, n := range sm.EventNames() {
			ev[n]++
		}
	}
	p.KindRows, p.DSRows, p.EvRows = counts(kinds), counts(ds), counts(ev)
	threaded := profile.Threaded(rec.Samples)
	thread := func(sm *profile.Sample) string {
		if sm.Comm != "" { // a run of several processes: the sample's own
			return fmt.Sprintf("%s-%d", sm.Comm, sm.Tid())
		}
		return fmt.Sprintf("%s-%d", s.Comm, sm.Tid())
	}
	if threaded {
		th := map[string]int{}
		for i := range rec.Samples {
			th[thread(&rec.Samples[i])]++
		}
		p.ThreadRows = counts(th)
	}
	objs := map[string]int{}
	for i := range rec.Samples {
		name := "[unknown]"
		if o := rec.Samples[i].Object(); o != "" {
			name = filepath.Base(o)
		}
		objs[name]++
	}
	if len(objs) > 1 {
		p.ObjectRows = counts(objs)
	}
	for _, r := range p.KindRows {
		terms.add(r.Name)
	}
	for _, r := range p.DSRows {
		terms.add(r.Name)
	}
	for _, r := range p.EvRows {
		terms.add(r.Name)
	}

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
		if threaded {
			// Rooted at the thread, as the folded output is.
			k = thread(sm) + ";" + k
		}
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

	// Hot functions: annotated source, disassembly and SFrame rows.
	var hotFuncs []profile.Func
	annotated := map[string]bool{}
	for _, f := range stats {
		if len(p.Hot) == opt.HotFuncs || f.Samples == 0 {
			break
		}
		h := Hot{Func: f}
		fn, ok := bin.FuncAt(f.Start)
		switch {
		case f.Name == "[unknown]" || !ok:
			h.Note = "No symbol covers these samples."
		case bin.Arch == nil || bin.Arch.Disasm == nil:
			h.Note = "No disassembler for this architecture."
		default:
			var err error
			h.Disasm, h.Source, err = annotate(bin, fn, rec.Samples, opt.SourceDirs)
			if err != nil {
				return err
			}
			for _, d := range h.Disasm {
				h.MaxInsn = max(h.MaxInsn, d.Samples)
			}
			hotFuncs = append(hotFuncs, *fn)
		}
		annotated[f.Name] = true
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
	for _, f := range stats {
		r := funcRow{FuncStats: f, Pct: pct(f.Samples, len(rec.Samples)), Annotated: annotated[f.Name], HasSamples: f.Samples > 0}
		r.TopDS, r.TopDSPct = f.TopDS()
		r.MeanTotal, r.TotalSort = mean(f.Total, f.Samples)
		r.MeanIssue, r.IssueSort = mean(f.Issue, f.Samples)
		r.MeanXlat, r.XlatSort = mean(f.Xlat, f.Samples)
		p.Funcs = append(p.Funcs, r)
	}

	// Charts.
	href := func(t string) string {
		if _, ok := glossary[t]; ok {
			return "#" + termID(t)
		}
		return ""
	}
	p.Charts.Latency = latencyHistogram(rec.Samples)
	p.Charts.Timeline = timeline(rec.Samples, stats)
	p.Charts.DataSources = perFuncChart("chart-ds", "loads by data source per function", stats,
		func(f *FuncStats) map[string]int { return f.DS }, "loads", href)
	p.Charts.Events = perFuncChart("chart-events", "events per function", stats,
		func(f *FuncStats) map[string]int { return f.Events }, "samples", href)
	for _, f := range stats {
		for e := range f.Events {
			terms.add(e)
		}
	}
	p.Glossary = terms.terms()
	return pageTmpl().Execute(w, p)
}
