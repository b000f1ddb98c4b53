// Package gdbstub lets gdb debug a simulated program over the GDB remote
// serial protocol, as qemu-user's -g does: `simrun run -g PORT PROG`
// waits for `target remote :PORT` before the first instruction.
//
// It serves what gdb-multiarch uses for a Linux user-mode target:
// qSupported, QStartNoAckMode, target descriptions (qXfer:features:read:
// arm64 core and FP/SIMD registers, the PAC masks with pointer
// authentication on; s390x core, access, floating-point
// and vector registers), qXfer:auxv:read, qXfer:exec-file:read,
// qXfer:threads:read, qAttached, qC, qfThreadInfo/qsThreadInfo, Hg/Hc,
// T, qRcmd (monitor insns), '?', g/G, p/P, vFile (host I/O),
// m/M/X, Z0/Z1 breakpoints, Z2/Z3/Z4 watchpoints, s/c/S/C, vCont and
// vCont?, bs/bc (reverse execution, reverse.go), k/vKill, D and the 0x03
// interrupt. See docs/gdb.md.
//
// Execution: with no breakpoint or watchpoint set, continue runs the
// machine in large batches with no per-instruction cost; with some set,
// the machine's per-instruction observer checks the pc against the
// breakpoints and, for watchpoints, the next operation's data access
// (Core.NextOp), stopping after an accessing instruction retires (on
// arm64 before it: gdb steps over it, layout.watchBefore). A
// guest fault stops the guest before its signal is delivered: continuing
// with that signal (C0b) delivers it as Linux would (the handler runs or
// the process dies); continuing without it discards it, so the faulting
// instruction runs again.
//
// Threads: every thread the process has is listed by tid; registers are
// read and written from the core for the running thread and from the
// scheduler's saved context for the others. All threads run on a resume
// (one core, the deterministic scheduler's order) unless gdb locks the
// scheduler to one (a vCont naming only it); a step of a thread that is
// switched out runs until it has retired one instruction.
//
// Host I/O (hostio.go): vFile packets read the guest's files and its
// /proc files, for gdb's "target:" sysroot and for gcore; with gdb's
// multiprocess+ thread ids carry the process id.
//
// Processes: gdb debugs the first process; while it waits for another
// (a forked child), the others run without gdb until it can run again
// (linux.Process.RunUntilBack). Its execve is followed into the new
// machine (execed), reported with exec-events.
//
// Not done yet (later slices of the debugging work): reverse execution
// across fork and execve, signals other than an instruction's fault
// stopping the guest, and O packets for output.
package gdbstub

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/replay"
)

// Stub serves one gdb connection for one process.
type Stub struct {
	p *linux.Process
	m *cpu.Machine // the process's machine (another after an execve)
	// stopM is the machine whose stop flag the run's machines share
	// (Machine.ShareStop): the interrupts of other goroutines go there.
	stopM  *cpu.Machine
	conn   io.ReadWriteCloser
	notes  io.Writer
	lay    *layout
	inner  cpu.Kernel
	base   func(*cpu.Machine) error // the observer the run had (tracing)
	events chan event
	rerr   error // why the reader stopped (valid once events is closed)

	noAck bool
	last  []byte // the last packet sent, for a '-'
	// event is the thread the last stop is about (the stop reply's
	// thread:, qC); gtid and ctid are the threads Hg and Hc selected (0:
	// the event thread). stepTid, while a step of a thread that is not
	// running goes on, is that thread and stepFrom its instruction count
	// before the step.
	event, gtid, ctid uint64
	stepTid, stepFrom uint64
	stop              string          // the stop reply for '?'
	bps               map[uint64]byte // address → 's' (Z0) or 'h' (Z1)
	watches           []watch
	armed             watchHit   // a watched access by the instruction now executing
	fault             *cpu.Fault // a fault reported to gdb, not yet delivered
	catching          bool

	interruptReq atomic.Bool // gdb sent 0x03
	hostStop     atomic.Bool // the host asked simrun to stop (Interrupt)

	// Interval and HistoryLimit override the history's snapshot interval
	// (instructions) and memory bound (bytes) for reverse execution (0:
	// replay.DefaultInterval, replay.DefaultLimit); set before Serve.
	Interval, HistoryLimit uint64
	hist                   *replay.History // nil: no reverse execution (histOff says why)
	histOff                string

	files map[uint64]linux.DebugFile // host I/O: the files gdb opened (hostio.go)
	multi bool                       // gdb took multiprocess+: thread ids are pPID.TID
	// execEvents: gdb took exec-events+ (an execve stops with exec:).
	execEvents bool
}

// tidText is thread tid as the replies name it: hex, or pPID.TID once
// gdb took multiprocess+.
func (s *Stub) tidText(tid uint64) string {
	if s.multi {
		return fmt.Sprintf("p%x.%x", s.p.PID(), tid)
	}
	return strconv.FormatUint(tid, 16)
}

// watch is a Z2 (write), Z3 (read) or Z4 (access) watchpoint.
type watch struct {
	kind      byte // '2', '3', '4'
	addr, len uint64
}

type watchHit struct {
	on    bool
	kind  byte
	addr  uint64
	insns uint64 // m.Insns before the accessing instruction
}

// pauthOn reports whether m's core authenticates pointers (arm64 --pauth).
func pauthOn(m *cpu.Machine) bool {
	pa, ok := m.Core.(interface{ PAuthEnabled() bool })
	return ok && pa.PAuthEnabled()
}

// errStop ends RunFor when the observer stops the guest.
var errStop = errors.New("stopped for gdb")

// ErrPause, returned by the run's own observer (the Machine.Observer
// there was when Serve began), stops the guest for gdb before the
// instruction about to run, reported as a SIGTRAP with no breakpoint
// (gdb says "Program received signal SIGTRAP" and, by its default
// "handle SIGTRAP nopass", resumes without it). On the resume the
// observer is called again for the same instruction. simrun unwind check
// --against gdb pauses the run this way at its sample points. After a
// detach the run goes on as if the observer had returned nil.
var ErrPause = errors.New("paused for gdb")

// New returns a stub debugging p over conn; notes gets one-line notes
// (stderr). The machine must not have run yet, or be stopped between
// instructions.
func New(p *linux.Process, conn io.ReadWriteCloser, notes io.Writer) (*Stub, error) {
	lay, err := layoutFor(p.Arch, pauthOn(p.Machine))
	if err != nil {
		return nil, err
	}
	if notes == nil {
		notes = io.Discard
	}
	s := &Stub{p: p, m: p.Machine, stopM: p.Machine, conn: conn, notes: notes, lay: lay, bps: map[uint64]byte{}, event: p.CurrentTid()}
	s.stop = s.stopReply(cpu.SIGTRAP, "")
	return s, nil
}

// Interrupt stops the run for the host (simrun's SIGINT): Serve returns
// cpu.ErrStopped at the next instruction boundary. Safe from any
// goroutine.
func (s *Stub) Interrupt() {
	s.hostStop.Store(true)
	s.stopM.RequestStop()
}

// catcher is the kernel while gdb is attached: syscalls go to the
// process, faults stop the guest for gdb first.
type catcher struct{ s *Stub }

func (k catcher) Syscall(m *cpu.Machine) {
	k.s.begin()
	k.s.inner.Syscall(m)
	k.s.end(replay.Syscall, false)
}

// Preempt and ThreadList pass the scheduler's hooks through: the machine
// switches threads at a quantum's end while gdb is attached too.
func (k catcher) Preempt(m *cpu.Machine) {
	if pr, ok := k.s.inner.(cpu.Preempter); ok {
		k.s.begin()
		pr.Preempt(m)
		k.s.end(replay.Boundary, false)
	}
}

func (k catcher) ThreadList() string {
	if tl, ok := k.s.inner.(cpu.ThreadLister); ok {
		return tl.ThreadList()
	}
	return ""
}

func (k catcher) TakeFault(m *cpu.Machine, f *cpu.Fault) bool {
	if !k.s.catching {
		if ft, ok := k.s.inner.(cpu.FaultTaker); ok {
			return ft.TakeFault(m, f)
		}
		return false
	}
	// Keep the machine at the faulting instruction, as Linux does when it
	// stops a traced process for a signal: the run stops here and the
	// fault waits for gdb's word (resume).
	k.s.fault = f
	m.RequestStop()
	return true
}

// Serve answers gdb until the program ends (its exit, or k), and returns
// how it ended. After a detach or a lost connection the program runs on
// to its end without the stub. An error is the run's (an observer's,
// or cpu.ErrStopped after Interrupt), not the connection's.
func (s *Stub) Serve() (*cpu.Exit, error) {
	s.inner = s.m.Kernel
	s.base = s.m.Observer
	s.m.Kernel = catcher{s}
	s.catching = true
	s.startHistory()
	defer func() {
		s.m.Kernel = s.inner
		s.m.Observer = s.base
		s.closeFiles()
	}()
	s.events = make(chan event, 16)
	go s.read()
	for {
		ev, ok := <-s.events
		if !ok {
			fmt.Fprintf(s.notes, "simrun: gdb: connection lost (%v); the program runs on to its end\n", s.rerr)
			return s.runFree()
		}
		switch ev.kind {
		case evAck, evInterrupt: // an interrupt while stopped has nothing to stop
		case evNack:
			s.resend()
		case evBadPacket:
			if !s.noAck {
				s.write([]byte{'-'})
			}
		case evPacket:
			if !s.noAck {
				s.write([]byte{'+'})
			}
			exit, done, err := s.handle(ev.data)
			if err != nil || done {
				if exit != nil || err != nil {
					s.conn.Close()
				}
				if exit == nil && err == nil { // detached
					return s.runFree()
				}
				return exit, err
			}
		}
	}
}

// read turns the connection's bytes into events; 0x03 also stops a
// running guest at once.
func (s *Stub) read() {
	r := bufio.NewReader(s.conn)
	for {
		ev, err := readEvent(r)
		if err != nil {
			s.rerr = err
			close(s.events)
			return
		}
		if ev.kind == evInterrupt {
			s.interruptReq.Store(true)
			s.stopM.RequestStop()
		}
		s.events <- ev
	}
}

func (s *Stub) write(b []byte) {
	s.conn.Write(b) // a lost connection shows as the reader's end
}

// send frames and sends a reply.
func (s *Stub) send(data string) {
	s.last = frame([]byte(data))
	s.write(s.last)
}

func (s *Stub) sendBytes(data []byte) {
	s.last = frame(data)
	s.write(s.last)
}

func (s *Stub) resend() {
	if s.last != nil && !s.noAck {
		s.write(s.last)
	}
}

// stopReply is a T packet for Linux signal sig with an optional reason
// ("swbreak:;", "watch:ADDR;"), about the running thread; the Hg and Hc
// selections end with the stop, as gdbserver's do.
func (s *Stub) stopReply(sig int, reason string) string {
	return s.stopReplyFor(s.curTid(), sig, reason)
}

// stopReplyFor is stopReply about thread tid.
func (s *Stub) stopReplyFor(tid uint64, sig int, reason string) string {
	s.event, s.gtid, s.ctid = tid, 0, 0
	return fmt.Sprintf("T%02x%sthread:%s;", gdbSignal(sig), reason, s.tidText(tid))
}

// exitReply is W (exit status) or X (killed by a signal).
func exitReply(e *cpu.Exit) string {
	if e.Fault != nil {
		return fmt.Sprintf("X%02x", gdbSignal(e.Fault.Signal()))
	}
	return fmt.Sprintf("W%02x", e.Status&0xff)
}

const supported = "PacketSize=4000;QStartNoAckMode+;qXfer:features:read+;qXfer:auxv:read+;qXfer:exec-file:read+;qXfer:threads:read+;swbreak+;hwbreak+;vContSupported+;ReverseStep+;ReverseContinue+"

// handle answers one packet. done: the stub is finished: exit != nil
// for the program's end, nil for a detach.
func (s *Stub) handle(pkt string) (exit *cpu.Exit, done bool, err error) {
	if pkt == "" {
		s.send("")
		return nil, false, nil
	}
	switch pkt[0] {
	case '?':
		s.send(s.stop)
	case 'g':
		s.sendBytes(s.readRegs())
	case 'G':
		s.send(s.edit(func() string { return s.writeRegs(pkt[1:]) }))
	case 'p':
		s.send(s.readReg(pkt[1:]))
	case 'P':
		s.send(s.edit(func() string { return s.writeReg(pkt[1:]) }))
	case 'm':
		s.send(s.readMem(pkt[1:]))
	case 'M':
		s.send(s.edit(func() string { return s.writeMemHex(pkt[1:]) }))
	case 'X':
		s.send(s.edit(func() string { return s.writeMemBin(pkt[1:]) }))
	case 'b':
		if pkt == "bs" || pkt == "bc" {
			return s.reverse(pkt == "bc")
		}
		s.send("")
	case 'H':
		s.send(s.setThread(pkt[1:]))
	case 'T':
		if t, ok := s.threadID(pkt[1:]); ok && s.alive(t) {
			s.send("OK")
		} else {
			s.send("E01")
		}
	case 'Z', 'z':
		s.send(s.breakpoint(pkt[0] == 'Z', pkt[1:]))
	case 'c', 's':
		if len(pkt) > 1 {
			if reply := s.setPC(pkt[1:]); reply != "" {
				s.send(reply)
				return nil, false, nil
			}
		}
		return s.resume(s.stepFor(pkt[0] == 's'), 0)
	case 'C', 'S':
		sigText, addr, hasAddr := strings.Cut(pkt[1:], ";")
		g, err := parseHexU64(sigText)
		if err != nil || g > 0xff {
			s.send("E01")
			return nil, false, nil
		}
		if hasAddr {
			if reply := s.setPC(addr); reply != "" {
				s.send(reply)
				return nil, false, nil
			}
		}
		return s.resume(s.stepFor(pkt[0] == 'S'), linuxSignal(int(g)))
	case 'k':
		return s.kill()
	case 'D':
		s.send("OK")
		s.conn.Close()
		return nil, true, nil
	case 'q', 'Q':
		s.query(pkt)
	case 'v':
		return s.vPacket(pkt)
	default:
		s.send("")
	}
	return nil, false, nil
}

// kill ends the program as SIGKILL would.
func (s *Stub) kill() (*cpu.Exit, bool, error) {
	fmt.Fprintln(s.notes, "simrun: gdb killed the program")
	s.toNewest()
	s.fault = nil
	s.m.EndFault(&cpu.Fault{PC: s.m.Core.PC(), Kind: cpu.FaultSignal, Sig: cpu.SIGKILL, Retired: true,
		Err: errors.New("killed by gdb")})
	exit, _ := s.m.RunFor(0)
	s.p.EndRun(exit)
	return exit, true, nil
}

func (s *Stub) query(pkt string) {
	name, args, _ := strings.Cut(pkt, ":")
	switch name {
	case "qSupported":
		// gdb offers multiprocess+: taking it, thread ids carry the
		// process id (pPID.TID), so gdb knows the pid the program has
		// and reads its /proc/PID files for gcore (hostio.go); without
		// it gdb gives the process a stand-in pid and gcore no maps.
		// exec-events+: an execve of the program is reported as an
		// exec stop (execed), and gdb loads the new program.
		offers := strings.Split(args, ";")
		s.multi = slices.Contains(offers, "multiprocess+")
		s.execEvents = slices.Contains(offers, "exec-events+")
		reply := supported
		if s.multi {
			reply += ";multiprocess+"
		}
		if s.execEvents {
			reply += ";exec-events+"
		}
		s.send(reply)
	case "QStartNoAckMode":
		s.send("OK")
		s.noAck = true
	case "qAttached":
		s.send("0") // simrun started the process: gdb kills it on quit
	case "qC":
		s.send("QC" + s.tidText(s.event))
	case "qfThreadInfo":
		var ids []string
		for _, t := range s.threadIDs() {
			ids = append(ids, s.tidText(t))
		}
		s.send("m" + strings.Join(ids, ","))
	case "qsThreadInfo":
		s.send("l")
	case "qSymbol":
		s.send("OK")
	case "qXfer":
		s.sendBytes(s.xfer(args))
	default:
		if cmd, ok := strings.CutPrefix(pkt, "qRcmd,"); ok {
			s.monitor(cmd)
			return
		}
		s.send("")
	}
}

// monitor answers gdb's monitor command (qRcmd, hex-encoded): output
// as O packets, then OK.
func (s *Stub) monitor(hexCmd string) {
	b, err := decodeHex(hexCmd)
	if err != nil {
		s.send("E01")
		return
	}
	var out string
	cmd := strings.TrimSpace(string(b))
	switch {
	case cmd == "insns":
		out = fmt.Sprintf("%d\n", s.m.Insns)
	case cmd == "history" || strings.HasPrefix(cmd, "history "):
		out = s.historyCommand(strings.Fields(cmd)[1:])
	case cmd == "help" || cmd == "":
		out = "simrun monitor commands:\n  insns  instructions retired so far\n" +
			"  history  the reverse-execution history: its span, snapshots and memory\n" +
			"  history interval N  a snapshot every N instructions\n" +
			"  history limit SIZE  drop the oldest snapshots past SIZE bytes (64M, 1G)\n"
	default:
		out = fmt.Sprintf("unknown monitor command %q (monitor help lists them)\n", b)
	}
	s.send("O" + string(appendHex(nil, []byte(out))))
	s.send("OK")
}

// xfer answers qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH.
func (s *Stub) xfer(args string) []byte {
	parts := strings.SplitN(args, ":", 4)
	if len(parts) != 4 || parts[1] != "read" {
		return nil // unsupported: empty reply
	}
	off, n, err := parseAddrLen(parts[3])
	if err != nil {
		return []byte("E01")
	}
	var data []byte
	switch parts[0] {
	case "features":
		if parts[2] != "target.xml" {
			return []byte("E00")
		}
		data = []byte(s.lay.xml)
	case "auxv":
		for _, a := range s.p.Auxv() {
			var b [16]byte
			s.lay.order.PutUint64(b[:], a[0])
			s.lay.order.PutUint64(b[8:], a[1])
			data = append(data, b[:]...)
		}
	case "exec-file":
		data = []byte(s.p.ExePath())
	case "threads":
		data = s.threadsXML()
	default:
		return nil
	}
	if off > uint64(len(data)) {
		return []byte("E01")
	}
	n = min(n, maxPacket/2)
	rest := data[off:]
	if uint64(len(rest)) <= n {
		return escape([]byte{'l'}, rest)
	}
	return escape([]byte{'m'}, rest[:n])
}

func (s *Stub) vPacket(pkt string) (*cpu.Exit, bool, error) {
	switch {
	case pkt == "vCont?":
		s.send("vCont;c;C;s;S")
	case strings.HasPrefix(pkt, "vCont;"):
		step, sig, lock, ok := s.vCont(pkt[len("vCont;"):])
		if !ok {
			s.send("E01")
			return nil, false, nil
		}
		if lock != 0 {
			return s.resumeLocked(step, sig, lock)
		}
		return s.resume(step, sig)
	case strings.HasPrefix(pkt, "vFile:"):
		s.send(s.vFile(pkt))
	case strings.HasPrefix(pkt, "vKill"):
		s.send("OK")
		return s.kill()
	default:
		s.send("")
	}
	return nil, false, nil
}

// vCont reads the actions of a vCont packet: the thread to step (0:
// none; the first step action's thread, or the event thread for a step
// without one), the signal of the action that applies to the event
// thread, whose fault (if any) gdb saw, and lock: when every action
// names one and the same thread (gdb's scheduler locking), that thread,
// the only one to run; else 0, and the threads run in the scheduler's
// deterministic order on the one core.
func (s *Stub) vCont(actions string) (step uint64, sig int, lock uint64, ok bool) {
	sigSet := false
	var named []uint64 // the threads the actions name (^0: all)
	for _, a := range strings.Split(actions, ";") {
		act, thread, hasThread := strings.Cut(a, ":")
		tid := ^uint64(0)
		if hasThread {
			t, ok := s.threadID(thread)
			if !ok {
				return 0, 0, 0, false
			}
			tid = t
		}
		if act == "" {
			return 0, 0, 0, false
		}
		named = append(named, tid)
		var g uint64
		switch act[0] {
		case 'c', 's':
			if len(act) != 1 {
				return 0, 0, 0, false
			}
		case 'C', 'S':
			var err error
			g, err = parseHexU64(act[1:])
			if err != nil || g > 0xff {
				return 0, 0, 0, false
			}
		default:
			return 0, 0, 0, false
		}
		if act[0] == 's' || act[0] == 'S' {
			if step == 0 {
				step = tid
				if tid == ^uint64(0) || tid == 0 {
					step = s.event
				}
			}
		}
		// The first action that applies to the event thread gives its
		// signal (the protocol: the leftmost action that applies wins).
		if !sigSet && (tid == ^uint64(0) || tid == 0 || tid == s.event) {
			sigSet = true
			if g != 0 {
				sig = linuxSignal(int(g))
			}
		}
	}
	if len(named) > 0 && named[0] != 0 && named[0] != ^uint64(0) && !slices.ContainsFunc(named, func(t uint64) bool { return t != named[0] }) {
		lock = named[0]
	}
	return step, sig, lock, true
}

// stepFor is the thread s, S and bs step: Hc's; with Hc any thread
// (gdb's reverse-stepi sends Hc0 when the other threads may move too),
// Hg's, as gdbserver steps its current thread; else the event thread.
func (s *Stub) stepFor(step bool) uint64 {
	if !step {
		return 0
	}
	for _, t := range []uint64{s.ctid, s.gtid} {
		if t != 0 && s.alive(t) {
			return t
		}
	}
	return s.event
}

// alive reports whether tid names a live thread (0 and -1: any).
func (s *Stub) alive(tid uint64) bool {
	if tid == 0 || tid == ^uint64(0) {
		return true
	}
	return slices.Contains(s.threadIDs(), tid)
}

// threadsXML is the qXfer:threads:read document: every live thread,
// named as /proc/PID/task/TID/comm names it (the program's name).
func (s *Stub) threadsXML() []byte {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<threads>\n")
	for _, t := range s.threadIDs() {
		core, _ := s.p.CoreOf(t) // (its CPU with --cpus; 0 with one)
		fmt.Fprintf(&b, "<thread id=\"%s\" core=\"%d\" name=\"%s\"/>\n", s.tidText(t), core, xmlEscape(s.p.Comm()))
	}
	b.WriteString("</threads>\n")
	return []byte(b.String())
}

func xmlEscape(v string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(v))
	return b.String()
}

// threadID parses a thread id: hex, -1 (all: ^0), or pPID.TID.
func (s *Stub) threadID(t string) (uint64, bool) {
	if rest, ok := strings.CutPrefix(t, "p"); ok {
		_, tid, hasTid := strings.Cut(rest, ".")
		if !hasTid {
			return ^uint64(0), true
		}
		t = tid
	}
	if t == "-1" {
		return ^uint64(0), true
	}
	v, err := parseHexU64(t)
	return v, err == nil
}

func (s *Stub) setThread(args string) string {
	if args == "" || (args[0] != 'g' && args[0] != 'c') {
		return "E01"
	}
	t, ok := s.threadID(args[1:])
	if !ok || !s.alive(t) {
		return "E01"
	}
	if t == ^uint64(0) {
		t = 0
	}
	if args[0] == 'g' {
		s.gtid = t
	} else {
		s.ctid = t
	}
	return "OK"
}

// setPC sets the pc for c ADDR / s ADDR; a non-empty result is the error
// reply.
func (s *Stub) setPC(addr string) string {
	a, err := parseHexU64(addr)
	if err != nil {
		return "E01"
	}
	if r := s.edit(func() string { s.m.Core.SetPC(a); return "" }); r != "" {
		return r
	}
	return ""
}

// regThread is the thread whose registers g, G, p and P read and
// write: Hg's, else the event thread's.
func (s *Stub) regThread() uint64 {
	if s.gtid != 0 {
		return s.gtid
	}
	return s.event
}

// state is the registers of regThread: the core's when it runs, else
// the context the scheduler saved for it.
func (s *Stub) state() *cpu.State {
	var st cpu.State
	if t := s.regThread(); t != s.curTid() {
		if v := s.pastView(); v != nil {
			if st, ok := v.States[t]; ok {
				return st.Clone()
			}
		} else if _, ok := s.p.ThreadState(t, &st); ok {
			return &st
		}
	}
	s.m.Core.State(&st)
	return &st
}

func (s *Stub) setState(st *cpu.State) bool {
	if t := s.regThread(); t != s.p.CurrentTid() {
		return s.p.SetThreadState(t, st)
	}
	sw, ok := s.m.Core.(cpu.StateWriter)
	if !ok {
		return false
	}
	sw.SetState(st)
	return true
}

func (s *Stub) readRegs() []byte {
	st := s.state()
	var b []byte
	for i := range s.lay.regs {
		b = s.lay.appendReg(b, &s.lay.regs[i], st)
	}
	return appendHex(nil, b)
}

func (s *Stub) writeRegs(hexData string) string {
	b, err := decodeHex(hexData)
	if err != nil || len(b) != s.lay.size() {
		return "E01"
	}
	st := s.state()
	for i := range s.lay.regs {
		r := &s.lay.regs[i]
		s.lay.setReg(r, st, b)
		b = b[r.bits/8:]
	}
	if !s.setState(st) {
		return "E01"
	}
	return "OK"
}

func (s *Stub) regIndex(t string) (int, bool) {
	n, err := parseHexU64(t)
	if err != nil || n >= uint64(len(s.lay.regs)) {
		return 0, false
	}
	return int(n), true
}

func (s *Stub) readReg(args string) string {
	i, ok := s.regIndex(args)
	if !ok {
		return "E01"
	}
	return string(appendHex(nil, s.lay.appendReg(nil, &s.lay.regs[i], s.state())))
}

func (s *Stub) writeReg(args string) string {
	n, val, ok := strings.Cut(args, "=")
	i, ok2 := s.regIndex(n)
	if !ok || !ok2 {
		return "E01"
	}
	b, err := decodeHex(val)
	r := &s.lay.regs[i]
	if err != nil || len(b) != r.bits/8 {
		return "E01"
	}
	st := s.state()
	s.lay.setReg(r, st, b)
	if !s.setState(st) {
		return "E01"
	}
	return "OK"
}

// readMem reads guest memory as ptrace does: any mapped page, whatever
// its protection, and without touching the guest's translation caches
// or fault state. A read that starts unmapped is E14 (EFAULT); one that
// runs into an unmapped page returns the bytes before it.
func (s *Stub) readMem(args string) string {
	addr, n, err := parseAddrLen(args)
	if err != nil {
		return "E01"
	}
	n = min(n, maxPacket/2)
	b := s.peek(addr, n)
	if len(b) == 0 && n > 0 {
		return "E14"
	}
	return string(appendHex(nil, b))
}

func (s *Stub) peek(addr, n uint64) []byte {
	var out []byte
	for n > 0 {
		p := s.m.Mem.PageAt(addr)
		if p == nil {
			break
		}
		off := addr & cpu.PageMask
		k := min(n, cpu.PageSize-off)
		out = append(out, p.Bytes()[off:off+k]...)
		addr += k
		n -= k
		if addr == 0 { // wrapped past the top of the address space
			break
		}
	}
	return out
}

// poke writes guest memory as ptrace does (read-only code too); E14 when
// any page is unmapped, before anything is written.
func (s *Stub) poke(addr uint64, b []byte) string {
	if len(b) == 0 {
		return "OK"
	}
	end := addr + uint64(len(b)) - 1
	if end < addr {
		return "E14"
	}
	for a := addr &^ cpu.PageMask; ; a += cpu.PageSize {
		if s.m.Mem.PageAt(a) == nil {
			return "E14"
		}
		if a >= end&^cpu.PageMask {
			break
		}
	}
	if s.m.Mem.Poke(addr, b) != nil {
		return "E14"
	}
	return "OK"
}

func (s *Stub) writeMemHex(args string) string {
	al, data, ok := strings.Cut(args, ":")
	addr, n, err := parseAddrLen(al)
	if !ok || err != nil {
		return "E01"
	}
	b, err := decodeHex(data)
	if err != nil || uint64(len(b)) != n {
		return "E01"
	}
	return s.poke(addr, b)
}

func (s *Stub) writeMemBin(args string) string {
	al, data, ok := strings.Cut(args, ":")
	addr, n, err := parseAddrLen(al)
	if !ok || err != nil {
		return "E01"
	}
	b, err := unescape(data)
	if err != nil || uint64(len(b)) != n {
		return "E01"
	}
	return s.poke(addr, b)
}

// breakpoint inserts (Z) or removes (z) a breakpoint or watchpoint:
// TYPE,ADDR,KIND.
func (s *Stub) breakpoint(insert bool, args string) string {
	typ, rest, ok := strings.Cut(args, ",")
	if !ok || len(typ) != 1 {
		return "E01"
	}
	addrText, kindText, ok := strings.Cut(rest, ",")
	if !ok {
		return "E01"
	}
	kindText, _, _ = strings.Cut(kindText, ";") // conditions: not supported, ignored
	addr, err := parseHexU64(addrText)
	if err != nil {
		return "E01"
	}
	kind, err := parseHexU64(kindText)
	if err != nil {
		return "E01"
	}
	switch typ[0] {
	case '0', '1':
		if insert {
			s.bps[addr] = map[byte]byte{'0': 's', '1': 'h'}[typ[0]]
		} else {
			delete(s.bps, addr)
		}
		return "OK"
	case '2', '3', '4':
		if kind == 0 || addr+kind < addr {
			return "E01"
		}
		w := watch{kind: typ[0], addr: addr, len: kind}
		for i, o := range s.watches {
			if o == w {
				if !insert {
					s.watches = append(s.watches[:i], s.watches[i+1:]...)
				}
				return "OK"
			}
		}
		if insert {
			s.watches = append(s.watches, w)
		}
		return "OK"
	}
	return ""
}
