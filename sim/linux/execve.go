package linux

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"simrun/sim/cpu"
)

// execve: a process takes a new program. The program is any ELF simrun
// loads (either architecture: the process gets a new machine, laid out
// as the first program was, exec.go) or a "#!" script run by its
// interpreter. The pid, parent, process group, working directory,
// umask, signal mask and pending signals stay; the other threads go,
// handled signals return to their default action (ignored ones stay
// ignored), close-on-exec descriptors close, and /proc/self/exe names the
// new program.

// maxShebang is how many nested "#!" interpreters Linux follows
// (BINPRM_MAX_RECURSION) before ELOOP; shebangMax how much of the first
// line it reads (BINPRM_BUF_SIZE).
const (
	maxShebang = 4
	shebangMax = 256
)

// parseShebang splits a script's "#!" line into the interpreter and its
// optional single argument (the rest of the line, blanks trimmed), as
// Linux's binfmt_script does. ok is false when data is not a script; a
// script without an interpreter name gives ok with interp "".
func parseShebang(data []byte) (interp, arg string, ok bool) {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return "", "", false
	}
	line := data[2:min(len(data), shebangMax)]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	s := strings.Trim(string(line), " \t")
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		interp, arg = s[:i], strings.Trim(s[i:], " \t")
	} else {
		interp = s
	}
	if strings.IndexByte(interp, 0) >= 0 || strings.IndexByte(arg, 0) >= 0 {
		return "", "", true
	}
	return interp, arg, true
}

// execve's bounds on the strings it copies (fs/exec.c): each string at
// most MAX_ARG_STRLEN bytes with its NUL, and the strings with their
// pointers at most a quarter of the 8 MiB stack limit.
const (
	maxArgStrlen = 32 * 4096
	maxArgBytes  = 2 << 20
)

// readStrings reads a NULL-terminated array of guest string pointers:
// EFAULT for a pointer or string that cannot be read, E2BIG for one
// string or all of them past execve's bounds.
func (p *Process) readStrings(addr uint64) ([]string, uint64) {
	var out []string
	if addr == 0 {
		return nil, 0
	}
	total := 0
	for i := uint64(0); ; i += 8 {
		ptr, ok := p.Mem.Load(addr+i, 8, p.order())
		if !ok {
			return nil, errno(EFAULT)
		}
		if ptr == 0 {
			return out, 0
		}
		s, err := p.Mem.ReadCString(ptr, maxArgStrlen)
		if err != nil {
			if _, fault := err.(cpu.MemFault); fault {
				return nil, errno(EFAULT)
			}
			return nil, errno(E2BIG) // no NUL within MAX_ARG_STRLEN
		}
		total += len(s) + 1 + 8
		if total > maxArgBytes {
			return nil, errno(E2BIG)
		}
		out = append(out, s)
	}
}

// usrMerged is the sysroot's program for an absolute guest path that
// fell through to the host: with /usr merged, as in Debian since
// bookworm, /bin/NAME and /usr/bin/NAME (and sbin) are one file, so a
// sysroot holding only one of them answers for both.
func (p *Process) usrMerged(guest, host string) string {
	if p.Sysroot == "" || strings.HasPrefix(host, p.Sysroot+"/") || !strings.HasPrefix(guest, "/") {
		return host
	}
	alt := ""
	switch {
	case strings.HasPrefix(guest, "/usr/bin/"), strings.HasPrefix(guest, "/usr/sbin/"):
		alt = strings.TrimPrefix(guest, "/usr")
	case strings.HasPrefix(guest, "/bin/"), strings.HasPrefix(guest, "/sbin/"):
		alt = "/usr" + guest
	default:
		return host
	}
	if h := filepath.Join(p.Sysroot, alt); exists(h) {
		return h
	}
	return host
}

// execProgram reads the program at host (guest path guest) for execve,
// following "#!" interpreters: the ELF's host path and data, and argv
// with the interpreters in front.
func (p *Process) execProgram(host, guest string, argv []string) (string, []byte, []string, uint64) {
	for depth := 0; ; depth++ {
		st, err := os.Stat(host)
		switch {
		case err != nil:
			return "", nil, nil, hostErrno(err)
		case st.IsDir(), !st.Mode().IsRegular(), st.Mode()&0o111 == 0:
			return "", nil, nil, errno(EACCES)
		}
		data, err := readProgram(host)
		if err != nil {
			return "", nil, nil, errno(EACCES)
		}
		interp, arg, script := parseShebang(data)
		if !script {
			if hostNative(data) && p.hostExecAllowed() {
				return host, data, argv, 0 // execve starts it on the host
			}
			if p.Sysroot != "" && !strings.HasPrefix(host, p.Sysroot+"/") && bytes.HasPrefix(data, []byte("\x7fELF")) {
				if _, _, err := cpu.ParseELF(host, data); err != nil {
					// A host program (the sysroot lacks the path) that
					// simrun cannot run is as absent: a shell's PATH
					// search goes on to the sysroot's program.
					return "", nil, nil, errno(ENOENT)
				}
			}
			return host, data, argv, 0
		}
		if interp == "" {
			return "", nil, nil, errno(ENOEXEC)
		}
		if depth >= maxShebang {
			return "", nil, nil, errno(ELOOP)
		}
		nargv := []string{interp}
		if arg != "" {
			nargv = append(nargv, arg)
		}
		nargv = append(nargv, guest)
		if len(argv) > 1 {
			nargv = append(nargv, argv[1:]...)
		}
		argv, guest = nargv, interp
		var e uint64
		if host, e = p.resolve(atFDCWD, interp, true); e != 0 {
			return "", nil, nil, e
		}
		host = p.usrMerged(interp, host)
	}
}

func sysExecve(p *Process, a [6]uint64) uint64 {
	return p.execve(atFDCWD, a[0], a[1], a[2], 0)
}

func sysExecveat(p *Process, a [6]uint64) uint64 {
	return p.execve(a[0], a[1], a[2], a[3], a[4])
}

// execve replaces p's program (see the top of this file).
func (p *Process) execve(dirfd, pathAddr, argvAddr, envAddr, flags uint64) uint64 {
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return errno(EINVAL)
	}
	guest, e := p.readPath(pathAddr)
	if e != 0 {
		return e
	}
	if guest == "" && flags&atEmptyPath == 0 || guest == "" {
		return errno(ENOENT)
	}
	host, e := p.resolve(dirfd, guest, flags&atSymlinkNofollow == 0)
	if e == 0 {
		host = p.usrMerged(guest, host)
	}
	if q, self, ok := p.procDir(filepath.Clean(guest)); ok && q != nil && !q.ended && self == "/exe" && guest[0] == '/' {
		host, e = q.exe, 0 // the program itself, not simrun
	}
	if e != 0 {
		return e
	}
	argv, e := p.readStrings(argvAddr)
	if e != 0 {
		return e
	}
	env, e := p.readStrings(envAddr)
	if e != 0 {
		return e
	}
	host, data, argv, e := p.execProgram(host, guest, argv)
	if e != 0 {
		return e
	}
	if len(argv) == 0 {
		argv = []string{""} // Linux gives the new program an empty argv[0]
	}
	cfg := p.Cfg
	cfg.Args, cfg.Env = argv, env
	if env == nil {
		cfg.Env = []string{}
	}
	if hostNative(data) && p.hostExecAllowed() {
		return p.execHost(host, argv, cfg.Env)
	}
	cfg.Dir, cfg.Root = p.cwd, "" // the root is carried over below
	cfg.account = p.Mem
	nq, err := p.newImage(host, data, cfg)
	if err != nil {
		var le *cpu.LoadError
		switch {
		case errors.Is(err, os.ErrNotExist), errors.As(err, &le) && strings.Contains(le.Msg, "not found"):
			return errno(ENOENT)
		}
		return errno(ENOEXEC)
	}
	old := p.Machine
	nq.Machine.ShareStop(old) // stopped with the run's other machines
	if err := nq.Machine.ShareTiming(old); err != nil {
		return errno(ENOEXEC) // a core the timing model cannot follow
	}
	caller := p.cur.tid
	oldFds, oldSig, oldMask := p.fds, p.sig, p.sig.mask
	nice := p.cur.nice                                                   // the caller's, kept by execve
	core, affinity, readyAt := p.cur.core, p.cur.affinity, p.cur.readyAt // (cores.go)
	limits := p.limits
	oldTimers, oldInsns := p.timer, p.Insns
	p.leaveVM(old, p == p.sys.first)
	keep := struct {
		sys               *System
		pid, ppid         uint64
		pgid, sid         uint64
		parent            *Process
		exitSignal        int
		vforkParent       *thread
		ctty              *terminal
		cwd, root         string
		umask             uint64
		noted             map[uint64]bool
		told              map[string]bool
		onThread          func(ThreadEvent)
		sigact            [65]sigAction
		selfAlias         uint64
		clock             uint64
		maxInsns, insnsAt uint64
	}{p.sys, p.pid, p.ppid, p.pgid, p.sid, p.parent, p.exitSignal, p.vforkParent, p.ctty, p.cwd, p.root, p.umask,
		p.noted, p.told, p.OnThread, p.sigact, p.selfAlias, p.monoNow(), p.MaxInsns, p.Insns}
	for _, f := range nq.fds {
		if f != nil && f.f != nil {
			f.f.release()
		}
	}
	*p = *nq
	p.Kernel = p
	p.sys, p.pid, p.ppid, p.pgid, p.sid = keep.sys, keep.pid, keep.ppid, keep.pgid, keep.sid
	p.parent, p.exitSignal, p.vforkParent, p.ctty = keep.parent, keep.exitSignal, keep.vforkParent, keep.ctty
	p.cwd, p.root, p.umask, p.noted, p.told = keep.cwd, keep.root, keep.umask, keep.noted, keep.told
	p.OnThread, p.selfAlias, p.clockOff = keep.onThread, keep.selfAlias, keep.clock
	if keep.maxInsns != 0 {
		p.MaxInsns = keep.maxInsns - min(keep.insnsAt, keep.maxInsns)
		if p.MaxInsns == 0 {
			p.MaxInsns = 1
		}
	}
	for i, act := range keep.sigact {
		if act.handler == sigIgn {
			p.sigact[i] = sigAction{handler: sigIgn}
		}
	}
	t := p.threads[0]
	t.tid, t.nice = p.pid, nice
	t.core, t.affinity, t.readyAt, t.wasRunnable = core, affinity, readyAt, true
	p.limits = limits
	t.sig.mask, t.sig.pending = oldMask, oldSig.pending
	p.fds = oldFds
	for fd, fe := range p.fds {
		if fe != nil && fe.cloexec {
			p.closeFD(uint64(fd))
		}
	}
	p.execTimers(&oldTimers, oldInsns)
	p.wakeVforkParent()
	p.noResult = true
	// The old machine stops; System.Run goes on with the new one.
	p.sys.switchTo, p.sys.switchThr = p, t
	old.Yield()
	old.SetSliceEnd(0)
	p.sys.cur = p
	p.sys.processEvent(p, ThreadEvent{Kind: ProcessExeced, Tid: t.tid, Prev: caller})
	return 0
}

// newImage prepares a process running the program (as NewProcess) whose
// identity execve then gives p's.
func (p *Process) newImage(host string, data []byte, cfg Config) (*Process, error) {
	if _, _, err := cpu.ParseELF(host, data); err != nil {
		return nil, err
	}
	return newProcess(host, data, cfg)
}

// newProcess is NewProcess, called through a variable: the syscall table
// refers to execve, which refers to NewProcess, which builds the table.
var newProcess func(path string, data []byte, cfg Config) (*Process, error)

func init() { newProcess = NewProcess }
