package record

import (
	"path/filepath"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/spe"
	"simrun/sim/timing"
)

// Profile is what the sinks read: the samples decoded from the AUX stream
// and symbolized with the program and its objects, and the run's summary;
// the Binary symbolizes the first program (pprof's writer asks it).
func (r *Recording) Profile() (*profile.Recording, *profile.Binary, error) {
	m, u, d := r.Machine, r.Unit, r.Driver
	argv := r.args
	bin, err := profile.OpenBinary(m.Image.Path, m.Image.Bias)
	if err != nil {
		return nil, nil, err
	}
	var objects []profile.ObjectMap
	if p := linux.Of(m); p != nil {
		objects = ObjectMaps(p)
		bin.Shared = OpenObjects(objects)
	}
	var images []profile.Image
	if r.multiProcess() {
		images = profile.OpenImages(r.images.processImages())
	}
	var perCPU [][]profile.Sample
	for _, c := range r.CPUs {
		var ss []profile.Sample
		if images != nil {
			ss, err = profile.DecodeTagged(c.AUX, bin, images, c.tags, c.Callchains)
		} else {
			ss, err = profile.Decode(c.AUX, bin, c.Callchains)
		}
		if err != nil {
			return nil, nil, err
		}
		perCPU = append(perCPU, ss)
	}
	samples := perCPU[0]
	if len(perCPU) > 1 {
		samples = profile.MergeCPUs(perCPU)
	}
	abs, err := filepath.Abs(m.Image.Path)
	if err != nil {
		return nil, nil, err
	}
	t := timing.Of(m)
	st := timing.Total(t.Cores()) // (one core: its own; cycles: the busiest core's)
	var p spe.PMU
	written, bytes, truncated := uint64(0), 0, false
	var errs []string
	for _, c := range r.CPUs {
		p.Add(&c.Unit.PMU)
		written += c.Unit.Written
		bytes += len(c.AUX)
		truncated = truncated || c.Truncated
		errs = append(errs, c.Driver.Errors...)
	}
	s := profile.Summary{Program: abs, Args: append([]string{}, argv...), Arch: m.Arch.Name, Bias: profile.Hex(m.Image.Bias),
		Comm: filepath.Base(m.Image.Path), PID: 1000, Seed: r.seed, ExitStatus: r.Exit.Status,
		CPU: profile.CPUModel{Model: r.preset.Name, Desc: r.preset.Desc, MHz: r.preset.MHz, MIDR: profile.Hex(r.preset.MIDR)},
		SPE: profile.SPESetup{Version: u.Features.Version.String(), Event: r.event, Period: r.cfg.Period,
			Words: profile.DescribeSPE(&r.feats, r.regs)},
		Instructions: r.Insns(), Cycles: st.Cycles, Nanos: r.endNanos(),
		Timing: profile.Timing{L1DAccess: st.L1DAccess, L1DRefill: st.L1DRefill, L2Access: st.L2Access, L2Refill: st.L2Refill,
			LLCAccess: st.LLCAccess, LLCMiss: st.LLCMiss, TLBAccess: st.TLBAccess, TLBWalk: st.TLBWalk,
			Branches: st.Branches, Mispredicts: st.Mispredicts, NotTaken: st.NotTaken, StallCycles: st.StallCycles},
		Objects: objects,
		PMU: profile.SPEPMU{SamplePop: p.SamplePop, SampleFeed: p.SampleFeed, SampleFiltrate: p.SampleFiltrate,
			SampleCollision: p.SampleCollision, SampleBufferFull: p.SampleBufferFull, FeedBr: p.FeedBr, FeedLd: p.FeedLd,
			FeedSt: p.FeedSt, FeedFP: p.FeedFP, FeedSIMD: p.FeedSIMD, FeedOp: p.FeedOp, FeedEvent: p.FeedEvent,
			FeedLat: p.FeedLat, FeedDS: p.FeedDS},
		Buffer: profile.Buffers{Records: written, Bytes: bytes, AuxPages: int(d.Size / cpu.PageSize),
			Truncated: truncated, Errors: append([]string{}, errs...), Events: []profile.AuxRecord{}},
	}
	if r.Exit.Fault != nil {
		s.Fault = r.Exit.Fault.Error()
	}
	if r.Stopped != nil {
		s.Fault = r.StopNote()
	}
	for _, reg := range profile.SPERegisters(&r.feats) {
		s.SPE.Registers = append(s.SPE.Registers, profile.RegValue{Name: spe.Info(reg).Name, Value: profile.Hex(r.regs[reg]),
			Explain: spe.Explain(&r.feats, reg, r.regs[reg])})
	}
	for _, e := range d.Events {
		flags := []string{}
		for _, f := range []struct {
			bit  uint64
			name string
		}{{spe.AuxTruncated, "truncated"}, {spe.AuxPartial, "partial"}, {spe.AuxCollision, "collision"}} {
			if e.Flags&f.bit != 0 {
				flags = append(flags, f.name)
			}
		}
		s.Buffer.Events = append(s.Buffer.Events, profile.AuxRecord{Offset: e.Offset, Size: e.Size, Flags: flags, Time: e.Cycle})
	}
	return &profile.Recording{Summary: s, Samples: samples}, bin, nil
}

// PerfData is the perf.data file of a recording: every process's and
// object's mappings, the AUX chunks as perf record copied them, the event
// description, the callchains as samples, and simrun's own section (rec's
// summary, from Profile) for simrun report.
func (r *Recording) PerfData(rec *profile.Recording) (*profile.PerfData, error) {
	sum := &rec.Summary
	m, p, c := r.Machine, r.preset, r.cfg
	prog, argv := r.args[0], r.args
	abs, err := filepath.Abs(prog)
	if err != nil {
		return nil, err
	}
	desc := p.Desc
	if m.Arch.Name != "arm64" {
		desc = m.Arch.Name + " guest timed on a " + p.Desc
	}
	pd := &profile.PerfData{MIDR: p.MIDR, CPUDesc: desc, Cmdline: append([]string{"simrun", "record"}, argv...),
		Period: c.Period, PID: 1000, Comm: filepath.Base(prog), End: r.endNanos(), Arch: m.Arch.UnameMachine}
	pd.Config[0], pd.Config[1], pd.Config[2], pd.Config[3], pd.Config[4] = c.ConfigWords()
	pd.ExcludeUser, pd.IncludeKernel = c.ExcludeUser, c.IncludeKernel
	for _, s := range m.Image.Segments {
		start := s.Vaddr &^ cpu.PageMask
		var prot uint32
		if s.Perm&cpu.PermR != 0 {
			prot |= 1
		}
		if s.Perm&cpu.PermW != 0 {
			prot |= 2
		}
		if s.Perm&cpu.PermX != 0 {
			prot |= 4
		}
		pd.Maps = append(pd.Maps, profile.Map{Start: start, Len: (s.Vaddr + s.Memsz) - start,
			Pgoff: s.Offset &^ cpu.PageMask, Prot: prot, Filename: abs})
	}
	// The interpreter and the shared objects it mapped: perf attributes
	// their samples to file and offset (and symbolizes them when the
	// file is where the path says).
	if p := linux.Of(m); p != nil {
		for _, c := range p.CodeMaps() {
			pd.Maps = append(pd.Maps, profile.Map{Start: c.Start, Len: c.Len, Pgoff: c.Pgoff, Prot: c.Prot, Filename: c.Path})
		}
	}
	if r.multiProcess() {
		pd.Side = sideRecords(r.tasks, c.TSEnable)
	}
	for _, t := range r.threads {
		if !c.TSEnable {
			// Without timestamps every SPE record decodes at time 0:
			// perf must know the thread before then, or it makes a
			// comm-less one from the CONTEXT packet (as perf's
			// arm-spe decoder does for a tid it has not seen).
			t.Start = 0
		}
		pd.Threads = append(pd.Threads, t)
	}
	// Each CPU's chunks, CPU 0's first (perf queues them by CPU; the
	// simrun section's record order is this one).
	var chains [][]uint64
	var tags, cpuRecords []int
	for i, cpu := range r.CPUs {
		for _, e := range cpu.Driver.Events {
			pd.Chunks = append(pd.Chunks, profile.AuxChunk{Offset: e.Offset, Data: e.Data, Flags: e.Flags, Time: e.Cycle, CPU: i})
		}
		chains = append(chains, cpu.Callchains...)
		tags = append(tags, cpu.tags...)
		cpuRecords = append(cpuRecords, int(cpu.Unit.Written))
	}
	pd.CPUs = len(r.CPUs)
	if r.Callchains != nil {
		// The stacks go beside the AUX data as samples of the dummy event,
		// so perf script shows them.
		pids := r.pids()
		for _, s := range rec.Samples {
			pd.Samples = append(pd.Samples, profile.Callchain{IP: s.PC, Time: s.Time, Stack: s.Callchain, Tid: s.Context, Pid: pids[s.Context], CPU: s.CPU})
		}
		pd.MaxStack = uint16(min(r.MaxStack, 0xffff))
	}
	var procs []profile.ProcessImage
	if r.multiProcess() {
		procs = r.images.processImages()
	}
	if procs == nil {
		tags = nil
	}
	if pd.Simrun, err = profile.EncodeSection(sum, profile.Section{Callchains: chains, Processes: procs, Tags: tags, CPURecords: cpuRecords}); err != nil {
		return nil, err
	}
	return pd, nil
}

// endNanos is the virtual time the run ended at: the clock of the CPU
// that ran longest.
func (r *Recording) endNanos() uint64 {
	t := timing.Of(r.Machine)
	if t.NumCores() == 1 {
		return r.Machine.Timing.Nanos(r.Machine.Timing.Cycle())
	}
	var end uint64
	for _, c := range t.Cores() {
		end = max(end, c.Nanos(c.Cycle()))
	}
	return end
}
