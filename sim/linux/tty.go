package linux

import (
	"os"

	"golang.org/x/sys/unix"
)

// Terminals and the controlling terminal.
//
// A guest descriptor is a terminal when the host file behind it is one
// (isatty on the host descriptor): a /dev/pts/N the guest opened, or,
// with Config.Terminal, a standard stream simrun was given on a
// terminal. Otherwise nothing is a terminal and every terminal ioctl
// gives ENOTTY, so that runs do not depend on where their output goes.
//
// The terminal's attributes (TCGETS, TCSETS*, window size) are the
// host's. Its session and foreground process group are virtual, in
// simrun's pids, as Linux keeps them (drivers/tty/tty_jobctrl.c): the
// host terminal's own foreground group is never changed.
//   - With Config.Terminal, the first process's session has the
//     terminal of its standard streams as controlling terminal, its
//     group (1000) in the foreground.
//   - A session leader without one acquires the first terminal it opens
//     without O_NOCTTY that no session has (tty_open_proc_set_tty), or
//     the one TIOCSCTTY names; TIOCNOTTY gives it up (a session leader's
//     foreground group gets SIGHUP and SIGCONT, and the session loses
//     it); setsid leaves it behind; fork and execve keep it; when a
//     session leader ends, its session's terminal is free again.
//   - TIOCGPGRP and TIOCGSID answer on the caller's controlling terminal
//     only (ENOTTY on another); TIOCSPGRP checks as tiocspgrp does: a
//     caller in a background group gets SIGTTOU unless it blocks or
//     ignores it (the call then gives EINTR: stops are not modelled), or
//     ENOTTY when its group is orphaned; then ENOTTY off its controlling
//     terminal, EINVAL for a negative group, ESRCH for a group of no
//     process, EPERM for one of another session.
//   - /dev/tty opens the caller's controlling terminal again (ENXIO with
//     none).
//
// Reads from a background group (SIGTTIN) and the other terminal modes
// are not modelled.

// terminal is one host terminal the guest uses, by host device.
type terminal struct {
	dev  uint64 // the host's device number
	path string // a host path that opens it again (/dev/tty)
	sid  uint64 // the session it is the controlling terminal of (0: none)
	fg   uint64 // that session's foreground process group
}

// Terminal ioctls (the same numbers on arm64 and s390x).
const (
	tcsbrk     = 0x5409 // tcdrain, tcsendbreak
	tcflsh     = 0x540b
	tcsets     = 0x5402
	tcsetsw    = 0x5403
	tcsetsf    = 0x5404
	tiocsctty  = 0x540e
	tiocgpgrp  = 0x540f
	tiocspgrp  = 0x5410
	tiocswinsz = 0x5414
	tiocnotty  = 0x5422
	tiocgsid   = 0x5429
	sigHUP     = 1
	sigTTOU    = 22
	termiosLen = 36 // struct termios: 4 flag words, c_line, c_cc[19]
)

// hostTerminal is the host file behind f when it is a terminal, or nil.
func (p *Process) hostTerminal(f *openFile) *os.File {
	var h *os.File
	switch f.kind {
	case kindHost:
		h = f.host
	case kindStdin:
		if p.Cfg.Terminal {
			h, _ = f.r.(*os.File)
		}
	case kindStdout:
		if p.Cfg.Terminal {
			h, _ = f.w.(*os.File)
		}
	}
	if h == nil {
		return nil
	}
	if _, err := unix.IoctlGetTermios(int(h.Fd()), unix.TCGETS); err != nil {
		return nil
	}
	return h
}

// terminalOf is the terminal f is and its host file, or nil.
func (p *Process) terminalOf(f *openFile) (*terminal, *os.File) {
	h := p.hostTerminal(f)
	if h == nil {
		return nil, nil
	}
	var st unix.Stat_t
	if unix.Fstat(int(h.Fd()), &st) != nil {
		return nil, nil
	}
	s := p.sys
	for _, t := range s.ttys {
		if t.dev == st.Rdev {
			return t, h
		}
	}
	path := h.Name()
	if f.kind == kindHost {
		path = f.path
	}
	t := &terminal{dev: st.Rdev, path: path}
	s.ttys = append(s.ttys, t)
	return t, h
}

// initTerminal gives the first process's session the terminal of its
// standard streams (Config.Terminal).
func (p *Process) initTerminal() {
	if !p.Cfg.Terminal {
		return
	}
	for fd := uint64(0); fd < 3; fd++ {
		if f, e := p.file(fd); e == 0 {
			if t, _ := p.terminalOf(f); t != nil {
				t.sid, t.fg = p.sid, p.pgid
				p.ctty = t
				return
			}
		}
	}
}

// openedTerminal is told that p opened f (flags as the guest gave
// them): a session leader without a controlling terminal acquires a
// free one unless O_NOCTTY.
func (p *Process) openedTerminal(f *openFile, flags uint64) {
	if flags&oNoctty != 0 || p.sid != p.pid || p.ctty != nil {
		return
	}
	if t, _ := p.terminalOf(f); t != nil && t.sid == 0 {
		t.sid, t.fg = p.sid, p.pgid
		p.ctty = t
	}
}

// leaderEnded frees the controlling terminal of p's session when p, its
// leader, ends.
func (p *Process) leaderEnded() {
	if t := p.ctty; t != nil && p.sid == p.pid && t.sid == p.sid {
		t.sid, t.fg = 0, 0
		for _, q := range p.sys.procs {
			if q.ctty == t {
				q.ctty = nil
			}
		}
	}
}

// orphanedGroup reports whether process group pgid is orphaned: no
// member has a parent in another group of the same session.
func (s *System) orphanedGroup(pgid uint64) bool {
	for _, q := range s.procs {
		if q.ended || q.pgid != pgid {
			continue
		}
		if par := q.parent; par != nil && !par.ended && par.pgid != pgid && par.sid == q.sid {
			return false
		}
	}
	return true
}

// ttyIoctl answers the terminal ioctls on t, whose host file is h; ok
// is false for a request that is not one.
func (p *Process) ttyIoctl(t *terminal, h *os.File, req, arg uint64) (r uint64, ok bool) {
	o := p.order()
	switch req {
	case tcgets:
		tio, err := unix.IoctlGetTermios(int(h.Fd()), unix.TCGETS)
		if err != nil {
			return hostErrno(err), true
		}
		b := make([]byte, termiosLen)
		o.PutUint32(b[0:], tio.Iflag)
		o.PutUint32(b[4:], tio.Oflag)
		o.PutUint32(b[8:], tio.Cflag)
		o.PutUint32(b[12:], tio.Lflag)
		b[16] = tio.Line
		copy(b[17:], tio.Cc[:])
		if !p.writeGuest(arg, b) {
			return errno(EFAULT), true
		}
		return 0, true
	case tcsets, tcsetsw, tcsetsf:
		b, rok := p.readGuest(arg, termiosLen)
		if !rok {
			return errno(EFAULT), true
		}
		tio, err := unix.IoctlGetTermios(int(h.Fd()), unix.TCGETS)
		if err != nil {
			return hostErrno(err), true
		}
		tio.Iflag, tio.Oflag, tio.Cflag, tio.Lflag = o.Uint32(b[0:]), o.Uint32(b[4:]), o.Uint32(b[8:]), o.Uint32(b[12:])
		tio.Line = b[16]
		copy(tio.Cc[:], b[17:])
		hreq := map[uint64]uint{tcsets: unix.TCSETS, tcsetsw: unix.TCSETSW, tcsetsf: unix.TCSETSF}[req]
		if err := unix.IoctlSetTermios(int(h.Fd()), hreq, tio); err != nil {
			return hostErrno(err), true
		}
		return 0, true
	case tiocgwinsz:
		ws, err := unix.IoctlGetWinsize(int(h.Fd()), unix.TIOCGWINSZ)
		if err != nil {
			return hostErrno(err), true
		}
		b := make([]byte, 8)
		o.PutUint16(b[0:], ws.Row)
		o.PutUint16(b[2:], ws.Col)
		o.PutUint16(b[4:], ws.Xpixel)
		o.PutUint16(b[6:], ws.Ypixel)
		if !p.writeGuest(arg, b) {
			return errno(EFAULT), true
		}
		return 0, true
	case tiocswinsz:
		b, rok := p.readGuest(arg, 8)
		if !rok {
			return errno(EFAULT), true
		}
		ws := &unix.Winsize{Row: o.Uint16(b[0:]), Col: o.Uint16(b[2:]), Xpixel: o.Uint16(b[4:]), Ypixel: o.Uint16(b[6:])}
		if err := unix.IoctlSetWinsize(int(h.Fd()), unix.TIOCSWINSZ, ws); err != nil {
			return hostErrno(err), true
		}
		return 0, true
	case tcsbrk, tcflsh:
		if err := unix.IoctlSetInt(int(h.Fd()), uint(req), int(int32(arg))); err != nil {
			return hostErrno(err), true
		}
		return 0, true
	case tiocgpgrp, tiocgsid:
		if p.ctty != t || t.sid == 0 {
			return errno(ENOTTY), true
		}
		v := t.fg
		if req == tiocgsid {
			v = t.sid
		}
		if !p.Mem.Store(arg, 4, v, o) {
			return errno(EFAULT), true
		}
		return 0, true
	case tiocspgrp:
		return p.tcsetpgrp(t, arg), true
	case tiocsctty:
		switch {
		case p.sid == p.pid && t.sid == p.sid:
			return 0, true // already ours
		case p.sid != p.pid || p.ctty != nil:
			return errno(EPERM), true
		case t.sid != 0:
			if arg != 1 { // guest is root: arg 1 steals it, as CAP_SYS_ADMIN may
				return errno(EPERM), true
			}
			for _, q := range p.sys.procs {
				if q.ctty == t {
					q.ctty = nil
				}
			}
		}
		t.sid, t.fg = p.sid, p.pgid
		p.ctty = t
		return 0, true
	case tiocnotty:
		if p.ctty != t {
			return errno(ENOTTY), true
		}
		if p.sid != p.pid {
			p.ctty = nil
			return 0, true
		}
		p.disassociate(t)
		return 0, true
	}
	return 0, false
}

// disassociate takes t, its controlling terminal, from session leader
// p's session: the foreground group gets SIGHUP and SIGCONT, as
// Linux's disassociate_ctty.
func (p *Process) disassociate(t *terminal) {
	fg := t.fg
	t.sid, t.fg = 0, 0
	for _, q := range p.sys.procs {
		if q.ctty == t {
			q.ctty = nil
		}
	}
	for _, sig := range []int{sigHUP, sigCONT} {
		for _, q := range p.sys.procs {
			if !q.ended && q.pgid == fg {
				in := p.killInfo(sig, siKernel)
				in.cause = "its controlling terminal's session leader gave it up and sent the program"
				q.sendSignal(in)
			}
		}
	}
}

// tcsetpgrp is TIOCSPGRP: pgrp (an int at arg) becomes t's foreground
// group (see the top of this file for the checks).
func (p *Process) tcsetpgrp(t *terminal, arg uint64) uint64 {
	if p.ctty == t && t.fg != p.pgid {
		if !p.sig.blocked(sigTTOU) && p.sigact[sigTTOU].handler != sigIgn {
			if p.sys.orphanedGroup(p.pgid) {
				return errno(ENOTTY) // tty_check_change's EIO, as tiocspgrp reports it
			}
			for _, q := range p.sys.procs {
				if !q.ended && q.pgid == p.pgid {
					in := p.killInfo(sigTTOU, siKernel)
					in.cause = "tcsetpgrp from a background process group sent the program"
					q.sendSignal(in)
				}
			}
			return errno(EINTR)
		}
	}
	if p.ctty != t || t.sid != p.sid {
		return errno(ENOTTY)
	}
	v, ok := p.Mem.Load(arg, 4, p.order())
	if !ok {
		return errno(EFAULT)
	}
	pgrp := int32(v)
	if pgrp < 0 {
		return errno(EINVAL)
	}
	found, same := false, false
	for _, q := range p.sys.procs {
		if !q.ended && q.pgid == uint64(pgrp) {
			found = true
			same = same || q.sid == p.sid
		}
	}
	switch {
	case !found:
		return errno(ESRCH)
	case !same:
		return errno(EPERM)
	}
	t.fg = uint64(pgrp)
	return 0
}
