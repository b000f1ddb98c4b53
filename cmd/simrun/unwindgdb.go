package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"simrun/sim/cpu"
	"simrun/sim/gdbstub"
	"simrun/sim/linux"
	"simrun/sim/unwind"
)

// simrun unwind check --against gdb: gdb's own unwinder as one more
// subject. The run goes on under the checker as without the flag (its
// truth, its methods), and also under simrun's gdb stub with
// gdb-multiarch attached through a Unix socket and driven over its
// machine interface (MI, gdbmi.go). At sampled points the run pauses for
// gdb (gdbstub.ErrPause: gdb sees a SIGTRAP), simrun keeps the truth at
// that instruction, and gdb lists its frames; the two are compared frame
// by frame and the disagreements reported per function.
//
// The points: every --against-every N instructions the program's first
// process retires (the default, N = 10000), or with --against-calls N
// the first instruction of every Nth function called (a call settled in
// the truth: a callee at its entry, before its prologue, where unwinders
// most often go wrong). At most --against-max points (100): after the
// last, gdb detaches and the run ends without it. A point falls on the
// instruction about to run in the thread the core runs; gdb is told that
// thread in the stop.

// againstFlags are unwind check's --against flags.
type againstFlags struct {
	against *string
	every   *uint64
	calls   *uint64
	max     *int
	gdb     *string
}

func addAgainstFlags(fs *flag.FlagSet) *againstFlags {
	return &againstFlags{
		against: fs.String("against", "", "also compare `DEBUGGER`'s backtraces with the truth at sampled points: gdb (gdb-multiarch through simrun's gdb stub; see docs/gdb.md)"),
		every:   fs.Uint64("against-every", 10000, "--against: a point every `N` instructions of the program's first process"),
		calls:   fs.Uint64("against-calls", 0, "--against: a point at the entry of every `N`th function called instead of by instructions (0: off)"),
		max:     fs.Int("against-max", 100, "--against: at most `K` points; gdb then detaches and the run ends without it"),
		gdb:     fs.String("against-gdb", "gdb-multiarch", "--against gdb: the gdb to run (`PATH`)"),
	}
}

// on reports whether --against is given; a bad value is a usage error.
func (a *againstFlags) on() (bool, error) {
	switch *a.against {
	case "":
		return false, nil
	case "gdb":
	default:
		return false, fmt.Errorf("--against %q: want gdb", *a.against)
	}
	if *a.every == 0 && *a.calls == 0 {
		return false, errors.New("--against-every 0: want a number of instructions (or --against-calls N)")
	}
	if *a.max <= 0 {
		return false, fmt.Errorf("--against-max %d: want at least 1", *a.max)
	}
	return true, nil
}

// gdbPoint is one sampled point: the truth simrun kept and gdb's frames.
type gdbPoint struct {
	insns uint64
	tid   uint64
	truth []uint64
	gdb   []gdbFrame
	stop  string // why gdb's unwinding stopped (its words)
	what  string // "" when they agree, else the first difference
	frame int    // the frame that differs
}

// gdbFrame is one frame of gdb's backtrace.
type gdbFrame struct {
	kind byte // 'n' normal, 's' signal trampoline, 'i' inlined, 't' tail call, 'o' other
	pc   uint64
	name string
}

// gdbSampler is the run's observer that pauses it for gdb at the points.
type gdbSampler struct {
	inner func(*cpu.Machine) error // the checker's
	m     *cpu.Machine             // the machine gdb debugs
	p     *linux.Process           // its process (m.Kernel is the stub's while gdb is on)
	c     *unwind.Checker
	every uint64 // instructions between points (0: by calls)
	calls uint64 // calls between points (0: by instructions)

	next      uint64 // the instruction count of the next point
	callsSeen uint64 // calls settled so far
	lastSh    *unwind.Shadow
	lastCalls uint64
	paused    bool   // paused before this instruction
	pausedAt  uint64 // m.Insns at the pause
	left      atomic.Int64
	points    chan gdbPoint
}

func (g *gdbSampler) observe(m *cpu.Machine) error {
	if g.paused && m == g.m && m.Insns == g.pausedAt {
		g.paused = false // the checker saw this instruction before the pause
		return nil
	}
	g.paused = false
	if err := g.inner(m); err != nil {
		return err
	}
	if m != g.m || g.left.Load() <= 0 {
		return nil
	}
	sh := g.c.Shadow()
	at := false
	if g.calls != 0 {
		if sh == g.lastSh && sh.Calls != g.lastCalls {
			g.callsSeen++
			at = g.callsSeen%g.calls == 0
		}
		g.lastSh, g.lastCalls = sh, sh.Calls
	} else if m.Insns >= g.next {
		at = true
		g.next = (m.Insns/g.every + 1) * g.every
	}
	if !at {
		return nil
	}
	g.left.Add(-1)
	tid := g.p.CurrentTid()
	select {
	case g.points <- gdbPoint{insns: m.Insns, tid: tid, truth: sh.Callchain(m.Core.PC(), nil)}:
	default:
		return nil // the driver has not taken the last point: it has left
	}
	g.paused, g.pausedAt = true, m.Insns
	return gdbstub.ErrPause
}

// gdbPython defines the gdb command simrun-bt: one line listing the
// selected thread's frames (KIND:PC:NAME, innermost first, at most ARG)
// and why gdb's unwinding stopped.
const gdbPython = `import gdb

class SimrunBt(gdb.Command):
    def __init__(self):
        super().__init__("simrun-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        limit = int(arg) if arg else 64
        kinds = {gdb.NORMAL_FRAME: "n", gdb.SIGTRAMP_FRAME: "s", gdb.INLINE_FRAME: "i", gdb.TAILCALL_FRAME: "t"}
        out = []
        stop = ""
        try:
            f = gdb.newest_frame()
            while f is not None and len(out) < limit:
                out.append("%s:%x:%s" % (kinds.get(f.type(), "o"), f.pc(), f.name() or "??"))
                r = f.unwind_stop_reason()
                older = f.older()
                if older is None:
                    stop = gdb.frame_stop_reason_string(r)
                f = older
        except gdb.error as e:
            stop = "error: " + str(e)
        print("simrun-bt " + " ".join(out) + " |" + stop)

SimrunBt()
`

// miSession is gdb driven over MI.
type miSession struct {
	in      io.Writer
	lines   chan string
	timeout time.Duration
	log     *strings.Builder // everything gdb said, for errors
}

// cmd sends an MI command and reads up to its result record, returning
// it and the console text before it.
func (s *miSession) cmd(c string) (*miRecord, string, error) {
	if _, err := io.WriteString(s.in, c+"\n"); err != nil {
		return nil, "", fmt.Errorf("gdb: %s: %w", c, err)
	}
	var console strings.Builder
	for {
		r, err := s.record()
		if err != nil {
			return nil, "", fmt.Errorf("gdb: %s: %w", c, err)
		}
		switch r.Kind {
		case '~':
			console.WriteString(r.Text)
		case '^':
			if r.Class == "error" {
				return r, console.String(), fmt.Errorf("gdb: %s: %s", c, r.get("msg"))
			}
			return r, console.String(), nil
		}
	}
}

// record reads the next record (skipping lines that are not MI, such as
// the guest's or gdb's own words on its stdout).
func (s *miSession) record() (*miRecord, error) {
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return nil, errors.New("gdb ended")
			}
			s.log.WriteString(l + "\n")
			if r, err := parseMI(l); err == nil {
				return r, nil
			}
		case <-t.C:
			return nil, fmt.Errorf("no answer in %v", s.timeout)
		}
	}
}

// stopped reads up to the *stopped record.
func (s *miSession) stopped() (*miRecord, error) {
	for {
		r, err := s.record()
		if err != nil {
			return nil, err
		}
		if r.Kind == '*' && r.Class == "stopped" {
			return r, nil
		}
	}
}

// checkAgainstGDB runs m under checker c, driven by the gdb stub with
// gdb attached, and compares gdb's backtraces with the truth at the
// sampled points.
func (a *againstFlags) checkAgainstGDB(m *cpu.Machine, c *unwind.Checker, prog string, stderr io.Writer) (*unwind.Report, *gdbReport, error) {
	p := linux.Of(m)
	if p == nil {
		return nil, nil, errors.New("--against gdb: the program is not a Linux process")
	}
	gdbPath, err := exec.LookPath(*a.gdb)
	if err != nil {
		return nil, nil, fmt.Errorf("--against gdb: %w (Debian: apt-get install gdb-multiarch)", err)
	}
	dir, err := os.MkdirTemp("", "simrun-gdb-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "simrun-bt.py")
	if err := os.WriteFile(script, []byte(gdbPython), 0o600); err != nil {
		return nil, nil, err
	}
	sock := filepath.Join(dir, "gdb.sock")
	l, err := gdbstub.Listen("unix:" + sock)
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()

	g := &gdbSampler{inner: m.Observer, m: m, p: p, c: c, every: *a.every, calls: *a.calls, points: make(chan gdbPoint, 1)}
	if g.calls != 0 {
		g.every = 0
	}
	g.next = g.every
	g.left.Store(int64(*a.max))
	m.Observer = g.observe

	cmd := exec.Command(gdbPath, "--nx", "--quiet", "--interpreter=mi2", prog)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	var gdbErr strings.Builder
	cmd.Stderr = &lockedWriter{w: &gdbErr}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("--against gdb: %w", err)
	}
	s := &miSession{in: in, lines: make(chan string, 64), timeout: 120 * time.Second, log: &strings.Builder{}}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		in.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	fail := func(err error) (*unwind.Report, *gdbReport, error) {
		cmd.Process.Kill()
		return nil, nil, fmt.Errorf("--against gdb: %w\n%s%s", err, s.log.String(), gdbErr.String())
	}
	setup := []string{"-gdb-set pagination off", "-gdb-set confirm off", "-gdb-set width 0",
		"-gdb-set backtrace past-main on", "-interpreter-exec console " + miQuote("source "+script)}
	if p.Interp != nil && p.Sysroot != "" {
		setup = append(setup, "-interpreter-exec console "+miQuote("set sysroot "+p.Sysroot))
	}
	for _, c := range setup {
		if _, _, err := s.cmd(c); err != nil {
			return fail(err)
		}
	}
	// -target-select takes its arguments as written (no C-string
	// quoting): the socket's path must have no blank.
	if strings.ContainsAny(sock, " \t\n\"") {
		return fail(fmt.Errorf("the socket's path %q has a blank or quote (TMPDIR)", sock))
	}
	if _, err := io.WriteString(in, "-target-select remote "+sock+"\n"); err != nil {
		return fail(err)
	}
	type accepted struct {
		conn io.ReadWriteCloser
		err  error
	}
	acc := make(chan accepted, 1)
	go func() {
		conn, _, err := l.Accept()
		acc <- accepted{conn, err}
	}()
	var conn io.ReadWriteCloser
	wait := time.NewTimer(60 * time.Second)
	defer wait.Stop()
	for conn == nil {
		select {
		case r := <-acc:
			if r.err != nil {
				return fail(r.err)
			}
			conn = r.conn
		case l, ok := <-s.lines:
			if !ok {
				return fail(errors.New("gdb ended before it connected"))
			}
			s.log.WriteString(l + "\n")
			if r, err := parseMI(l); err == nil && r.Kind == '^' && r.Class == "error" {
				return fail(fmt.Errorf("target-select: %s", r.get("msg")))
			}
		case <-wait.C:
			return fail(errors.New("gdb did not connect"))
		}
	}
	stub, err := gdbstub.New(p, conn, stderr)
	if err != nil {
		conn.Close()
		return fail(err)
	}
	type served struct {
		exit *cpu.Exit
		err  error
	}
	done := make(chan served, 1)
	go func() {
		exit, err := stub.Serve()
		done <- served{exit, err}
	}()
	// The run's end, whatever happens to gdb: Serve returns once the
	// program ends (gdb may die or detach before: the run goes on alone).
	finish := func() (*unwind.Report, error) {
		r := <-done
		if r.err != nil {
			return nil, r.err
		}
		return c.Finish(r.exit), nil
	}
	for {
		r, err := s.record()
		if err != nil {
			cmd.Process.Kill()
			rep, ferr := finish()
			return rep, nil, errors.Join(fmt.Errorf("--against gdb: target-select: %w\n%s%s", err, s.log.String(), gdbErr.String()), ferr)
		}
		if r.Kind == '^' {
			if r.Class == "error" {
				cmd.Process.Kill()
				rep, ferr := finish()
				return rep, nil, errors.Join(fmt.Errorf("--against gdb: target-select: %s", r.get("msg")), ferr)
			}
			break
		}
	}
	rep := &gdbReport{every: g.every, calls: g.calls, max: *a.max}
	if v, err := exec.Command(gdbPath, "--version").Output(); err == nil {
		rep.gdb, _, _ = strings.Cut(string(v), "\n")
	}
	depth := c.Shadow().ChainDepth
	if depth <= 0 {
		depth = 128
	}
	var sessionErr error
	for {
		if _, _, err := s.cmd("-exec-continue"); err != nil {
			sessionErr = err
			break
		}
		st, err := s.stopped()
		if err != nil {
			sessionErr = err
			break
		}
		reason := st.get("reason")
		if strings.HasPrefix(reason, "exited") {
			break
		}
		if reason != "signal-received" || st.get("signal-name") != "SIGTRAP" {
			continue // a fault gdb reports, then passes to the program
		}
		var pt gdbPoint
		select {
		case pt = <-g.points:
		default:
			continue // a SIGTRAP of the program's own
		}
		_, text, err := s.cmd("-interpreter-exec console " + miQuote("simrun-bt "+strconv.Itoa(depth)))
		if err != nil {
			sessionErr = err
			break
		}
		if pt.gdb, pt.stop, err = parseSimrunBt(text); err != nil {
			sessionErr = err
			break
		}
		pt.compare()
		rep.points = append(rep.points, pt)
		if g.left.Load() <= 0 {
			s.cmd("-target-detach")
			break
		}
	}
	g.left.Store(0)
	s.cmd("-gdb-exit")
	in.Close()
	if sessionErr != nil {
		cmd.Process.Kill()
		fmt.Fprintf(stderr, "simrun unwind check: --against gdb: the session ended early (%v); the run goes on without gdb\n", sessionErr)
		rep.broken = sessionErr.Error()
	}
	ur, err := finish()
	if err != nil {
		return nil, nil, err
	}
	rep.names = ur
	return ur, rep, nil
}

// lockedWriter serializes writes (exec copies stderr on its own
// goroutine).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// parseSimrunBt reads the simrun-bt command's line.
func parseSimrunBt(text string) ([]gdbFrame, string, error) {
	i := strings.LastIndex(text, "simrun-bt ")
	if i < 0 {
		return nil, "", fmt.Errorf("gdb: simrun-bt printed no frames: %q", text)
	}
	line, _, _ := strings.Cut(text[i+len("simrun-bt "):], "\n")
	list, stop, ok := strings.Cut(line, "|")
	if !ok {
		return nil, "", fmt.Errorf("gdb: simrun-bt: no stop reason in %q", line)
	}
	var fs []gdbFrame
	for _, f := range strings.Fields(list) {
		parts := strings.SplitN(f, ":", 3)
		if len(parts) != 3 || len(parts[0]) != 1 {
			return nil, "", fmt.Errorf("gdb: simrun-bt: bad frame %q", f)
		}
		pc, err := strconv.ParseUint(parts[1], 16, 64)
		if err != nil {
			return nil, "", fmt.Errorf("gdb: simrun-bt: bad frame %q", f)
		}
		fs = append(fs, gdbFrame{kind: parts[0][0], pc: pc, name: parts[2]})
	}
	return fs, strings.TrimSpace(stop), nil
}

// real is gdb's frames that stand for a machine frame: inlined
// functions and the tail calls gdb infers from DWARF call sites have no
// frame of their own on the stack, so the truth has none for them.
func (p *gdbPoint) real() []uint64 {
	var pcs []uint64
	for _, f := range p.gdb {
		if f.kind != 'i' && f.kind != 't' {
			pcs = append(pcs, f.pc)
		}
	}
	return pcs
}

// compare sets what and frame: the first frame where gdb's pcs and the
// truth's differ, or where one ends first.
func (p *gdbPoint) compare() {
	g := p.real()
	for i := 0; i < len(g) && i < len(p.truth); i++ {
		if g[i] != p.truth[i] {
			p.what, p.frame = fmt.Sprintf("wrong frame %d", i), i
			return
		}
	}
	switch {
	case len(g) < len(p.truth):
		p.what, p.frame = fmt.Sprintf("gdb stops after %d of %d frames", len(g), len(p.truth)), len(g)
	case len(g) > len(p.truth):
		p.what, p.frame = fmt.Sprintf("gdb has %d frames more than the truth's %d", len(g)-len(p.truth), len(p.truth)), len(p.truth)
	}
}

// gdbReport is the comparison's result.
type gdbReport struct {
	gdb          string
	every, calls uint64
	max          int
	points       []gdbPoint
	broken       string
	names        *unwind.Report
}

// disagreements counts the points where gdb and the truth differ.
func (r *gdbReport) disagreements() int {
	n := 0
	for _, p := range r.points {
		if p.what != "" {
			n++
		}
	}
	return n
}

// Write prints the comparison: totals, a line per function (of frame 0
// in the truth), then the first disagreements in detail.
func (r *gdbReport) Write(w io.Writer, examples int) error {
	var b strings.Builder
	how := fmt.Sprintf("every %d instructions", r.every)
	if r.calls != 0 {
		how = fmt.Sprintf("at the entry of every %d calls", r.calls)
		if r.calls == 1 {
			how = "at every function's entry"
		}
	}
	fmt.Fprintf(&b, "\nagainst gdb (%s): %d points, %s, at most %d\n", r.gdb, len(r.points), how, r.max)
	if r.broken != "" {
		fmt.Fprintf(&b, "  the session ended early: %s\n", r.broken)
	}
	bad := r.disagreements()
	fmt.Fprintf(&b, "  agree: %d, disagree: %d\n", len(r.points)-bad, bad)
	type tally struct {
		name      string
		n, bad    int
		firstWhat string
	}
	by := map[string]*tally{}
	for _, p := range r.points {
		name := r.names.FuncName(p.truth[0])
		t := by[name]
		if t == nil {
			t = &tally{name: name}
			by[name] = t
		}
		t.n++
		if p.what != "" {
			t.bad++
			if t.firstWhat == "" {
				t.firstWhat = p.what
			}
		}
	}
	var ts []*tally
	for _, t := range by {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].bad != ts[j].bad {
			return ts[i].bad > ts[j].bad
		}
		if ts[i].n != ts[j].n {
			return ts[i].n > ts[j].n
		}
		return ts[i].name < ts[j].name
	})
	if len(ts) > 0 {
		b.WriteString("  by function (frame 0):\n")
	}
	for _, t := range ts {
		fmt.Fprintf(&b, "    %-32s %d points, %d disagree", t.name, t.n, t.bad)
		if t.firstWhat != "" {
			fmt.Fprintf(&b, " (first: %s)", t.firstWhat)
		}
		b.WriteString("\n")
	}
	shown := 0
	for _, p := range r.points {
		if p.what == "" || shown >= examples {
			continue
		}
		shown++
		fmt.Fprintf(&b, "  at instruction %d, thread %d, %s: %s\n", p.insns, p.tid, r.names.Name(p.truth[0]), p.what)
		for i, pc := range p.truth {
			fmt.Fprintf(&b, "    truth #%-2d %#x %s\n", i, pc, r.names.Name(pc))
		}
		for i, f := range p.gdb {
			note := ""
			switch f.kind {
			case 'i':
				note = " (inlined)"
			case 't':
				note = " (tail call)"
			case 's':
				note = " (signal frame)"
			}
			fmt.Fprintf(&b, "    gdb   #%-2d %#x %s%s\n", i, f.pc, f.name, note)
		}
		if p.stop != "" {
			fmt.Fprintf(&b, "    gdb stopped: %s\n", p.stop)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
