package profile

import (
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"

	"github.com/google/pprof/profile"
)

// Sample types of the pprof profile, in order.  "samples" is the default
// (what go tool pprof -top shows without -sample_index).
var pprofSampleTypes = []*profile.ValueType{
	{Type: "samples", Unit: "count"},
	{Type: "total_latency", Unit: "cycles"},
	{Type: "issue_latency", Unit: "cycles"},
	{Type: "translation_latency", Unit: "cycles"},
}

// Pprof builds a profile.proto profile of the recording: one sample per
// SPE record with its count and latencies, string labels for the
// operation ("op": load, store, branch, other; "op_type": perf's words),
// the data source ("data_source") and each event ("event", one value per
// event bit), and numeric labels for the data address ("va", "pa").
// Locations carry the function from the ELF symbol table and the line
// from DWARF .debug_line (the file being the line's own file).
func Pprof(r *Recording, bin *Binary) (*profile.Profile, error) {
	s := &r.Summary
	p := &profile.Profile{
		SampleType:        pprofSampleTypes,
		DefaultSampleType: "samples",
		PeriodType:        &profile.ValueType{Type: "operations", Unit: "count"},
		Period:            int64(s.SPE.Period),
		DurationNanos:     int64(s.Nanos),
		Comments: []string{
			fmt.Sprintf("simrun record -e %s -c %d %s", s.SPE.Event, s.SPE.Period, s.Program),
			fmt.Sprintf("cpu model %s; %d instructions, %d cycles", s.CPU.Model, s.Instructions, s.Cycles),
		},
	}
	var maps []*profile.Mapping
	if bin != nil {
		for _, pr := range bin.ELF.Progs {
			if pr.Type != elf.PT_LOAD || pr.Flags&elf.PF_X == 0 {
				continue
			}
			m := &profile.Mapping{ID: uint64(len(maps) + 1), Start: pr.Vaddr + bin.Bias, Limit: pr.Vaddr + pr.Memsz + bin.Bias,
				Offset: pr.Off, File: s.Program, HasFunctions: true,
				HasFilenames: bin.HasLines, HasLineNumbers: bin.HasLines}
			if m.File == "" {
				m.File = filepath.Base(bin.Path)
			}
			maps = append(maps, m)
		}
	}
	p.Mapping = maps
	locs := map[uint64]*profile.Location{}
	type fkey struct{ name, file string }
	funcs := map[fkey]*profile.Function{}
	location := func(fr Frame) *profile.Location {
		if l, ok := locs[fr.PC]; ok {
			return l
		}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: fr.PC}
		for _, m := range maps {
			if fr.PC >= m.Start && fr.PC < m.Limit {
				l.Mapping = m
			}
		}
		if fr.Func != "" {
			k := fkey{fr.Func, fr.File}
			f, ok := funcs[k]
			if !ok {
				f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: fr.Func, SystemName: fr.Func, Filename: fr.File}
				funcs[k] = f
				p.Function = append(p.Function, f)
			}
			l.Line = []profile.Line{{Function: f, Line: int64(fr.Line)}}
		}
		locs[fr.PC] = l
		p.Location = append(p.Location, l)
		return l
	}
	for i := range r.Samples {
		smp := &r.Samples[i]
		ps := &profile.Sample{
			Value: []int64{1, int64(smp.Lat[LatTotal]), int64(smp.Lat[LatIssue]), int64(smp.Lat[LatXlat])},
			Label: map[string][]string{"op": {smp.Op.Kind}, "op_type": {smp.Op.Desc}},
		}
		for _, fr := range smp.Frames {
			ps.Location = append(ps.Location, location(fr))
		}
		if smp.HasDataSource {
			ps.Label["data_source"] = []string{DataSourceName(smp.DataSource)}
		}
		if ev := smp.EventNames(); len(ev) > 0 {
			ps.Label["event"] = ev
		}
		num := map[string][]int64{}
		if smp.HasVA {
			num["va"] = []int64{int64(smp.VA)}
		}
		if smp.HasPA {
			num["pa"] = []int64{int64(smp.PA)}
		}
		if smp.HasTime {
			num["time"] = []int64{int64(smp.Time)}
			ps.NumUnit = map[string][]string{"time": {"nanoseconds"}}
		}
		if len(num) > 0 {
			ps.NumLabel = num
		}
		p.Sample = append(p.Sample, ps)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("pprof profile: %w", err)
	}
	return p, nil
}

// WritePprof writes the recording as a gzipped profile.proto.
func WritePprof(w io.Writer, r *Recording, bin *Binary) error {
	p, err := Pprof(r, bin)
	if err != nil {
		return err
	}
	return p.Write(w)
}
