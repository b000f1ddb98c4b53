package linux

import (
	"slices"

	"simrun/sim/cpu"
)

// TaskLog follows every process and thread of a run for a profile: what
// Linux tells a perf session that follows a task and its children, in
// its side-band records — PERF_RECORD_FORK when a process or thread is
// created (perf_event_task), PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC
// when execve names the task anew (perf_event_comm), PERF_RECORD_MMAP2 for
// each executable mapping, the program's at execve included
// (perf_event_mmap), and PERF_RECORD_EXIT when a task ends. The first
// process's program is described as perf record describes the workload it
// starts: a COMM (exec) and its mappings at time 0.
//
// A forked process inherits its parent's mappings and name, as perf's
// thread__fork copies them: no MMAP2 is logged for them. The log is kept
// at the events the kernel hooks give (System.AddHook), never per
// instruction.
type TaskLog struct {
	// Events are the side-band events in the order they happened (and so
	// in time order).
	Events []TaskEvent
	now    func() uint64
}

// TaskEventKind says what a TaskEvent is.
type TaskEventKind uint8

const (
	// TaskFork: task Pid/Tid was created by PPid/PTid (a thread: Pid ==
	// PPid; a process: Pid == Tid).
	TaskFork TaskEventKind = iota + 1
	// TaskComm: task Pid/Tid is named Comm; Exec when execve named it.
	TaskComm
	// TaskMmap: task Pid maps Map.
	TaskMmap
	// TaskExit: task Pid/Tid ended.
	TaskExit
)

// TaskEvent is one side-band event.
type TaskEvent struct {
	Kind                 TaskEventKind
	Time                 uint64 // virtual ns
	Pid, Tid, PPid, PTid uint64
	Comm                 string
	Exec                 bool
	Map                  CodeMap
	// Guest is the mapped file's path as the guest names it (without
	// the sysroot prefix: what /proc/PID/maps shows).
	Guest string
}

// LogTasks starts a TaskLog of p's system; now is the virtual clock in
// ns. It logs p's program at once (time now()).
func LogTasks(p *Process, now func() uint64) *TaskLog {
	l := &TaskLog{now: now}
	l.image(p, true)
	s := p.System()
	pidOf := map[uint64]uint64{p.pid: p.pid} // a live thread's process
	s.AddHook(func(q *Process, e ThreadEvent) {
		t := l.now()
		switch e.Kind {
		case ThreadCreated:
			pidOf[e.Tid] = q.pid
			l.Events = append(l.Events, TaskEvent{Kind: TaskFork, Time: t, Pid: q.pid, Tid: e.Tid, PPid: q.pid, PTid: e.Prev})
		case ThreadGone:
			delete(pidOf, e.Tid)
			l.Events = append(l.Events, TaskEvent{Kind: TaskExit, Time: t, Pid: q.pid, Tid: e.Tid, PPid: q.pid, PTid: e.Tid})
		case ProcessForked:
			pidOf[e.Tid] = q.pid
			l.Events = append(l.Events, TaskEvent{Kind: TaskFork, Time: t, Pid: q.pid, Tid: e.Tid, PPid: q.ppid, PTid: e.Prev})
		case ProcessExeced, HostExeced:
			// The threads other than the caller are gone (de_thread:
			// their EXIT first); the caller takes the pid.
			for _, tid := range threadsOf(pidOf, q.pid) {
				if tid != q.pid && tid != e.Prev {
					delete(pidOf, tid)
					l.Events = append(l.Events, TaskEvent{Kind: TaskExit, Time: t, Pid: q.pid, Tid: tid, PPid: q.pid, PTid: tid})
				}
			}
			if e.Prev != q.pid {
				delete(pidOf, e.Prev)
				l.Events = append(l.Events, TaskEvent{Kind: TaskExit, Time: t, Pid: q.pid, Tid: e.Prev, PPid: q.pid, PTid: e.Prev})
			}
			if e.Kind == HostExeced {
				// The name perf shows for it; its code is the host's,
				// neither mapped in the guest nor sampled.
				l.Events = append(l.Events, TaskEvent{Kind: TaskComm, Time: t, Pid: q.pid, Tid: q.pid, Comm: q.comm(), Exec: true})
				break
			}
			l.image(q, true)
		case ProcessExited:
			for _, tid := range threadsOf(pidOf, q.pid) {
				if tid != q.pid {
					delete(pidOf, tid)
					l.Events = append(l.Events, TaskEvent{Kind: TaskExit, Time: t, Pid: q.pid, Tid: tid, PPid: q.pid, PTid: tid})
				}
			}
			delete(pidOf, q.pid)
			l.Events = append(l.Events, TaskEvent{Kind: TaskExit, Time: t, Pid: q.pid, Tid: q.pid, PPid: q.ppid, PTid: q.ppid})
		case CodeMapped:
			if cm := q.CodeMaps(); len(cm) > 0 {
				c := cm[len(cm)-1]
				l.Events = append(l.Events, TaskEvent{Kind: TaskMmap, Time: t, Pid: q.pid, Tid: e.Tid, Map: c, Guest: q.guestPath(c.Path)})
			}
		}
	})
	return l
}

// image logs the program q runs now: its name, the program's segments
// and the interpreter's (the mappings execve makes).
func (l *TaskLog) image(q *Process, exec bool) {
	t := l.now()
	l.Events = append(l.Events, TaskEvent{Kind: TaskComm, Time: t, Pid: q.pid, Tid: q.pid, Comm: q.comm(), Exec: exec})
	path := exePath(q.Image.Path)
	for _, s := range q.Image.Segments {
		start := s.Vaddr &^ cpu.PageMask
		l.Events = append(l.Events, TaskEvent{Kind: TaskMmap, Time: t, Pid: q.pid, Tid: q.pid,
			Map: CodeMap{Start: start, Len: s.Vaddr + s.Memsz - start, Pgoff: s.Offset &^ cpu.PageMask, Prot: protOf(s.Perm), Path: path}, Guest: q.guestPath(path)})
	}
	for _, c := range q.CodeMaps() {
		l.Events = append(l.Events, TaskEvent{Kind: TaskMmap, Time: t, Pid: q.pid, Tid: q.pid, Map: c, Guest: q.guestPath(c.Path)})
	}
}

// Comms lists the names the log gave each process (pid): its first, then
// one per execve.
func (l *TaskLog) Comms() map[uint64][]string {
	out := map[uint64][]string{}
	for _, e := range l.Events {
		if e.Kind == TaskComm {
			out[e.Pid] = append(out[e.Pid], e.Comm)
		}
	}
	return out
}

// threadsOf lists the threads of process pid, in tid order.
func threadsOf(pidOf map[uint64]uint64, pid uint64) []uint64 {
	var out []uint64
	for tid, p := range pidOf {
		if p == pid {
			out = append(out, tid)
		}
	}
	slices.Sort(out)
	return out
}
