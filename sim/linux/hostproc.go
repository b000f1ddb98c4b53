package linux

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"simrun/sim/cpu"
)

// Host programs. A guest's execve of a program built for the host (the
// sysroot lacks the path and the file is an ELF of the host's machine,
// such as the host's /bin/sh that system() and popen() run) starts it on
// the host, as qemu-user does: qemu hands the execve to the host kernel.
// The process keeps its pid, parent and descriptors inside the run; its
// program runs natively, is not simulated (no instructions, no profile),
// and its timing is the host's, so a run with host programs is not
// deterministic. While one runs, an idle guest's clock moves no faster
// than the host's (System.schedule): a guest sleeping 2 s is still asleep
// when a 0.3 s host sleep ends, as under qemu-user. --root and --read-only confine the guest, so under them
// a host program is as absent (ENOENT), as it was before this existed.
//
// The child's descriptors are the process's, each mapped once:
//
//	host file, directory    the same host file
//	simrun's stdin/stdout   the host file when it is one, else a bridge
//	pipe (inside the run)   a host pipe bridged to it
//	/dev/null, zero, random the host device
//	anything else           closed
//
// Bridges move bytes between the run's pipes (or simrun's own streams)
// and host pipes on the simulator's thread, whenever the scheduler runs
// (System.pumpHost), so the run's pipe state only changes there.

// hostRun is a process whose program runs on the host.
type hostRun struct {
	path    string
	pid     int
	pidfd   int // -1 when pidfd_open is missing: waits poll the pid
	bridges []*bridge
	exit    *cpu.Exit // once the program ended
	done    bool      // end has run: the run no longer counts it
}

// startHost counts h, the host run p now is, among the system's host
// runs (System.hosts); hostRun.end is the one place that stops counting it.
func (s *System) startHost(p *Process, h *hostRun) {
	p.hostRun = h
	s.hosts++
}

// end lets go of what simrun holds for the host run (its bridges, its
// pidfd) and stops counting it among the system's host runs. It is the
// one place a host run ends, whoever ends it (its program's exit seen by
// pumpHost, or killHosts), and does nothing the second time.
func (h *hostRun) end(s *System) {
	if h.done {
		return
	}
	h.done = true
	for _, b := range h.bridges {
		b.close()
	}
	h.bridges = nil
	if h.pidfd >= 0 {
		syscall.Close(h.pidfd)
		h.pidfd = -1
	}
	s.hosts--
}

// bridge moves bytes one way between a host pipe end (fd, non-blocking)
// and a file of the run.
type bridge struct {
	fd   int       // simrun's end of the host pipe; -1 once closed
	in   bool      // toward the host child (the run's file is read)
	file *openFile // the run's side
	rd   io.Reader // in, simrun's stdin when it is no host file
	wr   io.Writer // !in, simrun's stdout or stderr when no host file
	buf  []byte    // in: read from the run, not yet written to the host
	eof  bool      // in: the run's side ended
}

// hostMachine is the ELF machine of programs the host runs natively.
var hostMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "s390x": elf.EM_S390,
	"386": elf.EM_386, "riscv64": elf.EM_RISCV, "ppc64le": elf.EM_PPC64, "loong64": elf.EM_LOONGARCH}[runtime.GOARCH]

// hostNative reports whether data is an ELF executable the host runs.
func hostNative(data []byte) bool {
	if len(data) < 20 || string(data[:4]) != elf.ELFMAG {
		return false
	}
	var m elf.Machine
	switch elf.Data(data[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		m = elf.Machine(uint16(data[18]) | uint16(data[19])<<8)
	case elf.ELFDATA2MSB:
		m = elf.Machine(uint16(data[18])<<8 | uint16(data[19]))
	}
	return m == hostMachine && hostMachine != elf.EM_NONE
}

// hostExecAllowed says whether an execve may start a host program.
func (p *Process) hostExecAllowed() bool {
	return !p.Cfg.NoHostExec && p.Cfg.Root == "" && !p.Cfg.ReadOnly
}

// execHost replaces p's program by the host program at path (execve's
// checks passed): p's threads end, the host child starts with p's
// descriptors, and the scheduler goes on with the other processes.
func (p *Process) execHost(path string, argv, env []string) uint64 {
	caller := p.cur.tid
	for fd, fe := range p.fds {
		if fe != nil && fe.cloexec {
			p.closeFD(uint64(fd))
		}
	}
	files, theirs, bridges, e := p.hostFiles()
	if e != 0 {
		return e
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Dir: p.cwd, Env: env, Files: files})
	for _, fd := range theirs {
		syscall.Close(fd)
	}
	if err != nil {
		for _, b := range bridges {
			b.close()
		}
		return hostErrno(err)
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		pidfd = -1
	}
	p.sys.startHost(p, &hostRun{path: path, pid: pid, pidfd: pidfd, bridges: bridges})
	p.exe = path
	// The guest address space goes (to the vfork parent it is shared
	// with, if any): its end later has nothing left to free.
	p.leaveVM(p.Machine, p == p.sys.first)
	if p != p.sys.first {
		p.Mem = p.Mem.Empty()
	}
	for _, t := range p.threads {
		t.state = threadExited
	}
	p.wakeVforkParent()
	p.noResult = true
	p.sys.processEvent(p, ThreadEvent{Kind: HostExeced, Tid: p.pid, Prev: caller})
	p.sys.reschedule(p)
	return 0
}

// hostFiles maps p's descriptors for a host child: the child's file
// list (-1: closed), the host descriptors opened for it (closed in simrun
// once it started) and the bridges.
func (p *Process) hostFiles() (files []uintptr, theirs []int, bridges []*bridge, e uint64) {
	n := 0
	for fd, fe := range p.fds {
		if fe != nil && fe.f != nil {
			n = fd + 1
		}
	}
	files = make([]uintptr, n)
	seen := map[*openFile]uintptr{}
	fail := func(err error) ([]uintptr, []int, []*bridge, uint64) {
		for _, fd := range theirs {
			syscall.Close(fd)
		}
		for _, b := range bridges {
			b.close()
		}
		return nil, nil, nil, hostErrno(err)
	}
	for fd := range files {
		files[fd] = ^uintptr(0)
		fe := p.fds[fd]
		if fe == nil || fe.f == nil {
			continue
		}
		f := fe.f
		if h, ok := seen[f]; ok {
			files[fd] = h
			continue
		}
		var hf *os.File
		var b *bridge
		switch f.kind {
		case kindHost, kindDir:
			hf = f.host
		case kindStdin:
			if h, ok := f.r.(*os.File); ok {
				hf = h
			} else if f.r != nil {
				b = &bridge{in: true, file: f, rd: f.r}
			}
		case kindStdout:
			if h, ok := f.w.(*os.File); ok {
				hf = h
			} else if f.w != nil {
				b = &bridge{file: f, wr: f.w}
			}
		case kindPipe:
			if f.readable() != f.writable() {
				b = &bridge{in: f.readable(), file: f}
			}
		}
		if hf == nil && b == nil && (f.kind == kindStdin || f.kind == kindStdout) {
			f = &openFile{kind: kindNull} // no stream: /dev/null, as for the guest
		}
		switch f.kind {
		case kindNull, kindZero, kindRandom:
			dev := map[fileKind]string{kindNull: "/dev/null", kindZero: "/dev/zero", kindRandom: "/dev/urandom"}[f.kind]
			h, err := syscall.Open(dev, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
			if err != nil {
				return fail(err)
			}
			theirs = append(theirs, h)
			files[fd], seen[f] = uintptr(h), uintptr(h)
			continue
		}
		switch {
		case hf != nil:
			files[fd] = hf.Fd()
		case b != nil:
			var pfd [2]int
			if err := syscall.Pipe2(pfd[:], syscall.O_CLOEXEC); err != nil {
				return fail(err)
			}
			mine, child := pfd[0], pfd[1] // the child writes
			if b.in {
				mine, child = pfd[1], pfd[0]
			}
			if err := syscall.SetNonblock(mine, true); err != nil {
				syscall.Close(mine)
				syscall.Close(child)
				return fail(err)
			}
			b.fd = mine
			bridges = append(bridges, b)
			theirs = append(theirs, child)
			files[fd] = uintptr(child)
		default:
			continue
		}
		seen[f] = files[fd]
	}
	return files, theirs, bridges, 0
}

// close closes simrun's end of the bridge.
func (b *bridge) close() {
	if b.fd >= 0 {
		syscall.Close(b.fd)
		b.fd = -1
	}
}

// pump moves what it can without blocking; it reports whether anything
// moved (or the bridge closed).
func (b *bridge) pump(p *Process) bool {
	if b.fd < 0 {
		return false
	}
	moved := false
	if b.in {
		for {
			if len(b.buf) == 0 && !b.eof {
				b.fill(p)
			}
			if len(b.buf) == 0 {
				if b.eof {
					b.close() // the child reads EOF
					return true
				}
				return moved
			}
			n, err := syscall.Write(b.fd, b.buf)
			if n > 0 {
				b.buf, moved = b.buf[n:], true
			}
			if err == syscall.EAGAIN {
				return moved
			}
			if err != nil && err != syscall.EINTR { // EPIPE: the child closed its end
				b.close()
				return true
			}
		}
	}
	var chunk [16 << 10]byte
	for {
		room := len(chunk)
		if b.file.kind == kindPipe {
			room = min(room, pipeCapacity-len(b.file.pipe.buf))
			if b.file.pipe.readers == 0 {
				room = len(chunk) // nobody reads: the bytes go
			}
			if room == 0 {
				return moved
			}
		}
		n, err := syscall.Read(b.fd, chunk[:room])
		if n > 0 {
			moved = true
			if b.file.kind == kindPipe {
				if pp := b.file.pipe; pp.readers > 0 {
					pp.buf = append(pp.buf, chunk[:n]...)
					pp.gen++
				}
			} else {
				b.wr.Write(chunk[:n])
			}
			continue
		}
		if err == syscall.EAGAIN {
			return moved
		}
		if err == syscall.EINTR {
			continue
		}
		b.close() // EOF: every writer on the host closed
		return true
	}
}

// fill takes the next bytes for the child from the run's side.
func (b *bridge) fill(p *Process) {
	if b.rd != nil {
		var chunk [16 << 10]byte
		n, err := b.rd.Read(chunk[:])
		b.buf = append(b.buf, chunk[:n]...)
		if err != nil && n == 0 {
			b.eof = true
		}
		return
	}
	pp := b.file.pipe
	if len(pp.buf) > 0 {
		b.buf = append(b.buf, pp.buf...)
		pp.buf = pp.buf[:0]
		return
	}
	if pp.writers == 0 {
		b.eof = true
	}
}

// pollFDs are the descriptors a blocking pump waits on.
func (h *hostRun) pollFDs(out []unix.PollFd) []unix.PollFd {
	if h.pidfd >= 0 && h.exit == nil {
		out = append(out, unix.PollFd{Fd: int32(h.pidfd), Events: unix.POLLIN})
	}
	for _, b := range h.bridges {
		switch {
		case b.fd < 0:
		case b.in && len(b.buf) > 0:
			out = append(out, unix.PollFd{Fd: int32(b.fd), Events: unix.POLLOUT})
		case !b.in:
			out = append(out, unix.PollFd{Fd: int32(b.fd), Events: unix.POLLIN})
		}
	}
	return out
}

// hostWait is the longest pumpHost waits for a host event.
const hostWait = 100 * time.Millisecond

// pumpHost serves every host program: it moves the bytes their bridges
// can take and ends the processes whose programs exited. With a wait,
// it first waits that long at most (in whole milliseconds) for a host
// event. It reports whether anything changed.
func (s *System) pumpHost(wait time.Duration) bool {
	if s.hosts == 0 {
		return false
	}
	if ms := int(wait / time.Millisecond); ms > 0 {
		var fds []unix.PollFd
		for _, p := range s.procs {
			if h := p.hostRun; h != nil && !h.done {
				fds = h.pollFDs(fds)
			}
		}
		unix.Poll(fds, ms)
	}
	changed := false
	for _, p := range slices.Clone(s.procs) { // s.ended may reap one
		h := p.hostRun
		if h == nil || h.done || p.ended {
			continue
		}
		for _, b := range h.bridges {
			if b.pump(p) {
				changed = true
			}
		}
		if h.exit == nil {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(h.pid, &ws, syscall.WNOHANG, nil); pid != h.pid || err != nil {
				continue
			}
			h.exit = &cpu.Exit{Status: ws.ExitStatus()}
			if ws.Signaled() {
				sig := int(ws.Signal())
				h.exit = &cpu.Exit{Status: 128 + sig, Fault: &cpu.Fault{Arch: "host", Kind: cpu.FaultSignal, Sig: sig, Retired: true,
					Err: fmt.Errorf("the host program %s died of signal %d (%s)", h.path, sig, SignalName(sig))}}
			}
			for _, b := range h.bridges {
				if b.in {
					b.close() // nobody reads them any more
				}
			}
		}
		// The process ends once what its program wrote is in the run's
		// pipes (its bridges met EOF): a reader must not see EOF first.
		if slices.ContainsFunc(h.bridges, func(b *bridge) bool { return b.fd >= 0 }) {
			continue
		}
		h.end(s)
		s.ended(p, h.exit)
		changed = true
	}
	if changed {
		s.wakeIO()
	}
	return changed
}

// HostProgram is the host program the process runs since its execve
// of one, or "".
func (p *Process) HostProgram() string {
	if p.hostRun == nil {
		return ""
	}
	return p.hostRun.path
}

// killHosts ends every host program still running (the run ends or
// stops) and waits for it, so that none outlives simrun; its process
// ends as killed by SIGKILL, so a run that goes on after a stop has
// nothing left waiting for it.
func (s *System) killHosts() {
	for _, p := range slices.Clone(s.procs) {
		h := p.hostRun
		if h == nil || h.done || p.ended {
			continue
		}
		if h.exit == nil {
			syscall.Kill(h.pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			syscall.Wait4(h.pid, &ws, 0, nil)
			h.exit = &cpu.Exit{Status: 128 + cpu.SIGKILL, Fault: &cpu.Fault{Arch: "host", Kind: cpu.FaultSignal, Sig: cpu.SIGKILL,
				Retired: true, Err: fmt.Errorf("the host program %s was killed: the run ended", h.path)}}
		}
		h.end(s)
		s.ended(p, h.exit)
	}
}

// signal forwards a signal sent to a host process to its program.
func (h *hostRun) signal(sig int) {
	if sig > 0 {
		syscall.Kill(h.pid, syscall.Signal(sig))
	}
}
