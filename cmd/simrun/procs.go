package main

import (
	"os"
	"path/filepath"

	"simrun/sim/linux"
	"simrun/sim/profile"
	"simrun/sim/spe"
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
// tasks of the same perf event).
func followContext(s *linux.System, u *spe.Unit) {
	s.AddHook(func(_ *linux.Process, e linux.ThreadEvent) {
		switch e.Kind {
		case linux.ThreadSwitched, linux.ProcessSwitched, linux.ProcessExeced:
			u.ContextID = uint32(e.Tid)
		}
	})
}

// multiProcess reports whether the recorded run had more than one
// process: perf.data then describes every task from the task log.
func (r *recording) multiProcess() bool {
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
func (r *recording) pids() map[uint32]uint32 {
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
