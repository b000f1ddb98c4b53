package record

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/unwind"
	"simrun/sim/unwind/abi"
)

// Recording a run of several processes: one simulated CPU runs them all
// (their machines share its timing model and the SPE recorder, see
// cpu.Machine.ShareTiming), so what follows the running task is the
// CONTEXT packet's id and, in perf.data, every task's side-band records.

// followContext keeps the SPE unit's CONTEXTIDR_EL1 at the running
// thread's id, as Linux with CONFIG_PID_IN_CONTEXTIDR writes it at each
// context switch, whichever process the thread is in: each record's
// CONTEXT packet names its thread, and perf's SPE decoder attributes the
// sample to it. At the switch, records already written keep the tid they
// were sampled in; a sample in flight belongs to the operation that
// retired before the switch (the sampler is one CPU's: it is neither
// reset nor drained at a switch, as the Linux driver leaves it between
// tasks of the same perf event). With several CPUs, each CPU's unit
// names the thread that CPU runs.
func followContext(s *linux.System, cpus []*CPU) {
	s.AddHook(func(q *linux.Process, e linux.ThreadEvent) {
		switch e.Kind {
		case linux.ThreadSwitched, linux.ProcessSwitched, linux.ProcessExeced:
			c := 0
			if len(cpus) > 1 {
				c, _ = q.CoreOf(e.Tid)
			}
			if c >= 0 && c < len(cpus) {
				cpus[c].Unit.ContextID = uint32(e.Tid)
			}
		}
	})
}

// multiProcess reports whether the recorded run had more than one
// process: perf.data then describes every task from the task log.
func (r *Recording) multiProcess() bool {
	if r.tasks == nil {
		return false
	}
	for _, e := range r.tasks.Events {
		if e.Pid != uint64(profile.MainTid) {
			return true
		}
	}
	return false
}

// pids maps each thread id of the run to its process id (nil for one
// process: every sample is the first process's).
func (r *Recording) pids() map[uint32]uint32 {
	if !r.multiProcess() {
		return nil
	}
	out := map[uint32]uint32{}
	for _, e := range r.tasks.Events {
		if e.Kind == linux.TaskFork || e.Kind == linux.TaskComm {
			out[uint32(e.Tid)] = uint32(e.Pid)
		}
	}
	return out
}

// sideRecords turns the task log into perf.data's side-band records, each
// mapping with the build-id of its file (read once per file). Without
// SPE timestamps every record decodes at time 0, so the side band is
// given at 0 too (in the order it happened), as perf must know each
// task before its first record.
func sideRecords(l *linux.TaskLog, timed bool) []profile.Side {
	ids := map[string][]byte{}
	buildID := func(path string) []byte {
		if id, ok := ids[path]; ok {
			return id
		}
		var id []byte
		if f, err := os.Open(path); err == nil {
			id = profile.ReadBuildID(f)
			f.Close()
		}
		ids[path] = id
		return id
	}
	var out []profile.Side
	for _, e := range l.Events {
		s := profile.Side{Time: e.Time, Pid: uint32(e.Pid), Tid: uint32(e.Tid), PPid: uint32(e.PPid), PTid: uint32(e.PTid)}
		if !timed {
			s.Time = 0
		}
		switch e.Kind {
		case linux.TaskFork:
			s.Kind = profile.SideFork
		case linux.TaskExit:
			s.Kind = profile.SideExit
		case linux.TaskComm:
			s.Kind, s.Comm, s.Exec = profile.SideComm, e.Comm, e.Exec
		case linux.TaskMmap:
			host := e.Map.Path
			if abs, err := filepath.Abs(host); err == nil {
				host = abs
			}
			// The guest's name of the file, as a recording made on an
			// Arm machine has it: perf report --symfs SYSROOT finds it.
			s.Kind = profile.SideMmap
			s.Map = profile.Map{Start: e.Map.Start, Len: e.Map.Len, Pgoff: e.Map.Pgoff, Prot: e.Map.Prot, Filename: e.Guest, BuildID: buildID(host)}
		default:
			continue
		}
		out = append(out, s)
	}
	return out
}

// followTruth makes th, the truth of a run, follow every thread of every
// process: a context switch within or across processes, a signal frame
// per handler, fork's copy of the caller's stack, execve's fresh one
// (each with the registers of its program's architecture: first is the
// first program's ABI).
func followTruth(s *linux.System, th *unwind.Threads, first *abi.ABI) {
	abiOf := func(m *cpu.Machine) *abi.ABI {
		if a, err := abi.ForMachine(m.Arch.ELFMachine, m.Arch.ByteOrder); err == nil {
			return a
		}
		return first
	}
	s.AddHook(func(q *linux.Process, e linux.ThreadEvent) {
		switch e.Kind {
		case linux.ThreadSwitched, linux.ProcessSwitched:
			th.Switch(e.Tid, e.PC)
		case linux.SignalEntered:
			th.Signal(q.Core, e.PC, e.SP, abiOf(q.Machine).RA)
		case linux.SignalReturned:
			th.SigReturn()
		case linux.ProcessForked:
			th.Fork(e.Tid, q.Pid(), q.Comm(), e.SP != 0)
		case linux.ProcessExeced:
			th.Exec(e.Tid, q.Comm(), abiOf(q.Machine).SP)
		}
	})
}

// chainFunc is a stack tracer's callchain of the machine's next operation.
type chainFunc = func(m *cpu.Machine, buf []uint64) []uint64

// perMachine is the callchain of whichever machine runs: first's with
// chain, another process's (a forked one, or a program execve started)
// with a tracer of its own objects, made when it is first sampled. A
// program without usable unwind tables gets the pc alone.
func perMachine(first *cpu.Machine, chain chainFunc, method unwind.Method, policy unwind.Policy) chainFunc {
	if linux.Of(first) == nil {
		return chain
	}
	by := map[*cpu.Machine]chainFunc{first: chain}
	static := map[string]chainFunc{} // by program path: forked copies share one
	pcOnly := func(m *cpu.Machine, buf []uint64) []uint64 { return append(buf, m.Core.PC()) }
	mk := func(m *cpu.Machine) chainFunc {
		q := linux.Of(m)
		if q == nil {
			return pcOnly
		}
		// A static program's tracer serves every process that runs it
		// (forked copies); a dynamic one's follows its own mappings.
		dynamic := q.Interp != nil && method.HasData()
		path := q.Image.Path
		if c, ok := static[path]; ok && !dynamic {
			return c
		}
		c := pcOnly
		if tr, err := ProcessTracer(m, unwind.Options{Method: method, Policy: policy}); err == nil {
			c = tr.Callchain
		}
		if !dynamic {
			static[path] = c
		}
		return c
	}
	linux.Of(first).System().AddHook(func(q *linux.Process, e linux.ThreadEvent) {
		if e.Kind == linux.ProcessExited {
			delete(by, q.Machine) // it samples no more: keep no machine alive
		}
	})
	return func(m *cpu.Machine, buf []uint64) []uint64 {
		c, ok := by[m]
		if !ok {
			c = mk(m)
			by[m] = c
		}
		return c(m, buf)
	}
}

// images names the program each SPE record was sampled in, in a run of
// several processes: one entry per machine (the first process's, each
// forked process's, each program execve started), with the code it had
// mapped when it last mapped some.
type images struct {
	by   map[*cpu.Machine]int // the live machines'
	list []imageInfo
	// ms are the machines of the run still running; insns counts the
	// instructions of those that stopped (execve replaced them, their
	// process ended) — see total.
	ms    []*cpu.Machine
	insns uint64
}

type imageInfo struct {
	pid        uint64
	comm, path string
	bias       uint64
	maps       []linux.CodeMap
}

func trackImages(p *linux.Process) *images {
	im := &images{by: map[*cpu.Machine]int{}}
	im.add(p)
	p.System().AddHook(func(q *linux.Process, e linux.ThreadEvent) {
		switch e.Kind {
		case linux.ProcessForked, linux.ProcessExeced:
			im.add(q)
		case linux.ProcessExited:
			// Its machine retires nothing more: forget it (a run of
			// many short-lived processes keeps no machine alive).
			im.drop(q.Machine)
		case linux.CodeMapped:
			if i, ok := im.by[q.Machine]; ok {
				im.list[i].maps = slices.Clone(q.CodeMaps())
			}
		}
	})
	return im
}

func (im *images) add(q *linux.Process) {
	for _, m := range im.ms {
		if linux.Of(m) == q && m != q.Machine {
			im.drop(m) // execve replaced it
			break
		}
	}
	im.ms = append(im.ms, q.Machine)
	im.by[q.Machine] = len(im.list)
	im.list = append(im.list, imageInfo{pid: q.Pid(), comm: q.Comm(), path: q.Image.Path, bias: q.Image.Bias, maps: slices.Clone(q.CodeMaps())})
}

// drop forgets machine m, counting its instructions.
func (im *images) drop(m *cpu.Machine) {
	if _, ok := im.by[m]; !ok {
		return
	}
	delete(im.by, m)
	im.insns += m.Insns
	im.ms = slices.DeleteFunc(im.ms, func(x *cpu.Machine) bool { return x == m })
}

// total is the instructions of every machine of the run.
func (im *images) total() uint64 {
	n := im.insns
	for _, m := range im.ms {
		n += m.Insns
	}
	return n
}

// tag is the index of machine m's image (spe.Recorder.Tag).
func (im *images) tag(m *cpu.Machine) int {
	if i, ok := im.by[m]; ok {
		return i
	}
	return -1
}

// processImages describes each image for perf.data's simrun section and
// for symbolizing: its program and the objects it had mapped, each with
// its load bias.
func (im *images) processImages() []profile.ProcessImage {
	var out []profile.ProcessImage
	biases := map[string][]profile.LoadedObject{} // by the objects and where they are
	for _, in := range im.list {
		var sk strings.Builder
		for _, c := range in.maps {
			fmt.Fprintf(&sk, "%s@%x;", c.Path, c.Start)
		}
		objs, ok := biases[sk.String()]
		if !ok {
			for _, c := range in.maps {
				// (an object loaded again, after dlclose, may be
				// elsewhere: each place is an object of its own)
				if bias, ok := objectBias(c.Path, unwind.Mapped{Start: c.Start, End: c.Start + c.Len, Off: c.Pgoff, Path: c.Path}); ok {
					if o := (profile.LoadedObject{Path: c.Path, Bias: profile.Hex(bias)}); !slices.Contains(objs, o) {
						objs = append(objs, o)
					}
				}
			}
			biases[sk.String()] = objs
		}
		out = append(out, profile.ProcessImage{Pid: uint32(in.pid), Comm: in.comm, Program: in.path, Bias: profile.Hex(in.bias), Objects: objs})
	}
	return out
}

// threadLog follows the guest's threads for the recording: the SPE unit's
// CONTEXTIDR_EL1 is the running thread's id, as Linux with
// CONFIG_PID_IN_CONTEXTIDR writes it at each context switch (so each
// record's CONTEXT packet names its thread, and perf's SPE decoder
// attributes the sample to it); each thread's creation and exit times go
// into perf.data as the FORK and EXIT records Linux writes for the
// threads of a task perf follows.
type threadLog struct {
	m       *cpu.Machine
	threads []profile.Thread
}

func logThreads(p *linux.Process, cpus []*CPU) *threadLog {
	l := &threadLog{m: p.Machine}
	followContext(p.System(), cpus)
	p.AddThreadHook(func(e linux.ThreadEvent) {
		switch e.Kind {
		case linux.ThreadCreated:
			l.threads = append(l.threads, profile.Thread{Tid: uint32(e.Tid), Parent: uint32(e.Prev), Start: l.now()})
		case linux.ThreadGone:
			for i := range l.threads {
				if l.threads[i].Tid == uint32(e.Tid) {
					l.threads[i].End = l.now()
				}
			}
		}
	})
	return l
}

func (l *threadLog) now() uint64 { return l.m.Timing.Nanos(l.m.Timing.Cycle()) }

func (l *threadLog) list() []profile.Thread {
	if l == nil {
		return nil
	}
	return l.threads
}
