// Package oracle runs arm64 and s390x Linux user-mode programs under
// qemu-user (Debian's qemu-user 7.2: qemu-aarch64, qemu-s390x) to get
// reference behaviour for the simulator's differential tests:
//
//   - Trace: a per-instruction register trace (qemu single-stepped with
//     "-d exec,cpu,nochain[,fpu]", its log read through a FIFO and parsed on
//     the fly, so the log, which can be gigabytes, is never stored);
//   - Count: the exact number of executed instructions of a normal, fast run,
//     from simrun's own TCG plugin (plugin/countinsns.c, embedded and
//     built with the host gcc on first use);
//   - MemTrace: the data addresses of a normal run's first accesses, from
//     simrun's second plugin (plugin/memtrace.c, built the same way);
//   - Available / Require: whether qemu is installed.
//
// qemu is run with an empty environment (as "env -i" gives), stdin from
// /dev/null, "-seed 1" (reproducible AT_RANDOM bytes) and, on arm64, "-cpu
// max,sve=off,sme=off,pauth=off" (Q registers instead of SVE Z registers in
// the dump; PAC instructions are NOPs).  The program path is passed to qemu
// as given and resolved in Options.Dir, so that argv[0] and the initial stack
// (hence sp) equal those of a simulator run with the same path and empty
// environment.
//
// Trace facts worth knowing (qemu 7.2):
//   - a Record is the state *before* the instruction at PC; the state after
//     the last instruction (normally exit_group) is not logged;
//   - a syscall is one instruction, the next record shows its result;
//   - qemu's initial arm64 PSTATE reads NZCV=0100 (Z set), Linux starts with
//     0: a comparison of the first records should ignore F;
//   - s390x F is the real condition code taken from the PSW mask, not qemu's
//     lazy cc_op shown after "cc" in the dump;
//   - an uncaught signal ends the trace with the faulting instruction's
//     record (Result.Status -1, Result.Signal the signal number);
//   - when an asynchronous signal (a timer, say) is pending, qemu logs the
//     next block and then "Stopped execution of TB chain" without running
//     it; that record is left out (the instruction is logged again when it
//     runs), so the trace holds executed instructions only, as Count does;
//   - asynchronous signals can also make qemu lose log data: qemu's host
//     signal handlers do not restart system calls, and a log write to the
//     full FIFO that a signal interrupts is dropped by stdio.  The parser
//     checks every record (a second dump in one record, a missing part, the
//     "Trace" pc against the dumped pc) and Trace then fails with a
//     *FormatError whose Lost field is set; only a lost "Stopped
//     execution" line on its own would go unnoticed (one extra record).
//     A reader goroutine keeps the FIFO drained to make this rare; guests
//     without asynchronous signals are not affected at all;
//   - multi-threaded guests are not supported (Trace fails when a second
//     cpu shows up in the log).
package oracle

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Options control a qemu run.
type Options struct {
	// FP also parses the SIMD/FP registers into Record.V (adds "fpu" to
	// qemu's -d option; the log then roughly doubles in size).
	FP bool
	// Max stops delivering records after Max instructions (0 = all).  qemu
	// still runs to the end and Result.Insns counts every instruction.
	Max int
	// Args are the guest's argv[1:].
	Args []string
	// Dir is qemu's working directory ("" = the current one).  The program
	// path is passed to qemu unchanged, so a relative path is relative to
	// Dir.
	Dir string
	// CPU is qemu's -cpu model ("" = arm64 max,sve=off,sme=off,pauth=off,
	// s390x qemu's default). glibc programs need the model whose ID
	// registers and HWCAP simrun shows the guest: cortex-a72 on arm64.
	CPU string
	// Plugin (Count only; MemTrace always uses plugin/memtrace.c) is the
	// counting plugin: a prebuilt shared object (".so") or a C source,
	// which is compiled with the host gcc into a cache directory once.
	// "" = simrun's own plugin/countinsns.c (embedded in the package).
	// Another plugin must write "# insns N" as the first line of the file
	// its out=FILE argument names.
	Plugin string
	// Sysroot is qemu's -L: where a dynamically linked program's
	// interpreter and libraries (every absolute path) are looked up first.
	Sysroot string
}

// Record is the CPU state before one executed instruction.
type Record struct {
	N  uint64 // index of the instruction in the run, from 0
	PC uint64
	// R are the general registers: arm64 x0..x30 at 0..30 and sp at 31;
	// s390x r0..r15 at 0..15 (16..31 stay zero).
	R [32]uint64
	// F is the condition code: arm64 NZCV as 4 bits (N=8 Z=4 C=2 V=1);
	// s390x the condition code 0..3.
	F uint8
	// V holds the 128-bit SIMD/FP registers, only with Options.FP (zero
	// otherwise): V[i][0] is the most significant 64 bits, V[i][1] the
	// least significant 64 bits, on both architectures.  arm64: V[i] is qi,
	// so di (and si, hi, bi in its low bits) is V[i][1].  s390x: V[i] is
	// vi, and the FP register fi (i < 16) is V[i][0].  On an s390x CPU
	// without the vector facility qemu only shows f0..f15; then V[i][0] =
	// fi and everything else is zero.
	V [32][2]uint64
	// FPSR is arm64's floating-point status register (only with
	// Options.FP; 0 on s390x, whose log shows no FPC).
	FPSR uint32
}

// Result describes a finished qemu run.
type Result struct {
	Arch   string // "arm64" or "s390x"
	Insns  uint64 // executed instructions (Trace: records seen, also beyond Max)
	Stdout []byte // the guest's stdout
	Stderr []byte // the guest's stderr together with qemu's own messages
	Status int    // exit status, -1 if killed by a signal
	Signal int    // the killing signal, 0 if none
}

// qemuBinary maps an arch to the qemu-user binary; a variable so that tests
// can substitute a fake qemu.
var qemuBinary = map[string]string{
	"arm64": "qemu-aarch64",
	"s390x": "qemu-s390x",
}

// qemuArgs are the options every run gets, before the tracing options.
func qemuArgs(arch string, opt Options) []string {
	if opt.Sysroot != "" {
		return append([]string{"-L", opt.Sysroot}, cpuArgs(arch, opt.CPU)...)
	}
	return cpuArgs(arch, opt.CPU)
}

func cpuArgs(arch, cpu string) []string {
	switch {
	case cpu != "":
		return []string{"-seed", "1", "-cpu", cpu}
	case arch == "arm64":
		return []string{"-seed", "1", "-cpu", "max,sve=off,sme=off,pauth=off"}
	}
	return []string{"-seed", "1"}
}

func normArch(arch string) (string, error) {
	switch arch {
	case "arm64", "aarch64":
		return "arm64", nil
	case "s390x":
		return "s390x", nil
	}
	return "", fmt.Errorf("oracle: unknown arch %q (want arm64 or s390x)", arch)
}

// Available reports whether the qemu-user binary for arch ("arm64" or
// "s390x") is on PATH.  The error names the missing binary and the Debian
// package that provides it.
func Available(arch string) error {
	a, err := normArch(arch)
	if err != nil {
		return err
	}
	bin := qemuBinary[a]
	if _, err := exec.LookPath(bin); err != nil {
		return fmt.Errorf("oracle: %s not found on PATH (install the Debian package qemu-user: apt-get install qemu-user): %w", bin, err)
	}
	return nil
}

// ArchOf returns the architecture of the ELF file prog ("arm64" for
// e_machine 183, "s390x" for 22).
func ArchOf(prog string) (string, error) {
	f, err := elf.Open(prog)
	if err != nil {
		return "", fmt.Errorf("oracle: %s: %w", prog, err)
	}
	defer f.Close()
	switch f.Machine {
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_S390:
		return "s390x", nil
	}
	return "", fmt.Errorf("oracle: %s: ELF machine %v is neither aarch64 nor s390x", prog, f.Machine)
}

// setup checks prog and returns its arch and the qemu binary path.
func setup(prog string, opt Options) (arch, bin string, err error) {
	if prog == "" {
		return "", "", errors.New("oracle: empty program path")
	}
	if strings.HasPrefix(prog, "-") {
		return "", "", fmt.Errorf("oracle: program path %q starts with '-' and would be taken as a qemu option; use ./%s", prog, prog)
	}
	path := prog
	if !filepath.IsAbs(path) && opt.Dir != "" {
		path = filepath.Join(opt.Dir, path)
	}
	if arch, err = ArchOf(path); err != nil {
		return "", "", err
	}
	if err = Available(arch); err != nil {
		return "", "", fmt.Errorf("%w (needed to run %s)", err, prog)
	}
	bin, err = exec.LookPath(qemuBinary[arch])
	return arch, bin, err
}

// command builds the qemu command with the common settings.
func command(ctx context.Context, bin string, args []string, opt Options, stdout, stderr *bytes.Buffer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = opt.Dir
	cmd.Env = []string{} // empty, not nil: nil would mean our environment
	cmd.Stdin = nil      // /dev/null
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// bound the wait for stdout/stderr if the guest left children behind
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// fillStatus copies the exit status of a finished command into res.
func fillStatus(res *Result, ps *os.ProcessState) {
	if ps == nil {
		res.Status = -1
		return
	}
	res.Status = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Status = -1
		res.Signal = int(ws.Signal())
	}
}

// waitErr turns the error of cmd.Wait into nil for a plain non-zero exit or
// death by a signal (both are results, not failures).
func waitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return err
}

// stderrNote formats qemu's stderr for an error message.
func stderrNote(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return "; qemu stderr: " + s
}

// Trace runs prog under qemu-user, single-stepped with logging, and calls fn
// for every executed instruction's record, in order, as the log is parsed.
// The *Record is reused for the next call: copy it to keep it.  If fn
// returns an error, qemu is killed and Trace returns that error unchanged
// (with the partial Result).  Other errors name the program; a log that
// does not look like qemu 7.2's gives a *FormatError inside.  A guest that
// exits with a non-zero status or dies of a signal is not an error: see
// Result.Status and Result.Signal.
func Trace(ctx context.Context, prog string, opt Options, fn func(*Record) error) (*Result, error) {
	arch, bin, err := setup(prog, opt)
	if err != nil {
		return nil, err
	}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("oracle: trace %s: "+format, append([]any{prog}, a...)...)
	}
	p, err := newParser(arch, opt, fn)
	if err != nil {
		return nil, err
	}

	tmp, err := os.MkdirTemp("", "simrun-oracle-")
	if err != nil {
		return nil, fail("%w", err)
	}
	defer os.RemoveAll(tmp)
	fifo := filepath.Join(tmp, "log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, fail("mkfifo %s: %w", fifo, err)
	}

	items := "exec,cpu,nochain"
	if opt.FP {
		items += ",fpu"
	}
	args := append(qemuArgs(arch, opt), "-singlestep", "-d", items, "-D", fifo, prog)
	args = append(args, opt.Args...)
	var stdout, stderr bytes.Buffer
	cmd := command(ctx, bin, args, opt, &stdout, &stderr)
	if err := cmd.Start(); err != nil {
		return nil, fail("start %s: %w", bin, err)
	}
	limitChild(cmd.Process.Pid)

	// Reaper: wait for qemu, then make sure our blocking open of the FIFO
	// returns even if qemu died before opening it, by briefly opening the
	// write end ourselves.  A non-blocking open for writing fails (ENXIO)
	// until a reader is blocked in open, so retry until ours has returned.
	var opened atomic.Bool
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		for !opened.Load() {
			fd, e := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
			if e == nil {
				syscall.Close(fd)
				break
			}
			time.Sleep(time.Millisecond)
		}
		waited <- err
	}()

	// A blocking descriptor outside Go's netpoller: registered there, the
	// FIFO would wake the poller for each of qemu's writes (edge-triggered
	// epoll), costing about as much CPU time as qemu itself.
	var fd int
	for {
		fd, err = syscall.Open(fifo, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	opened.Store(true)
	openErr := err
	var perr error
	if openErr == nil {
		f := os.NewFile(uintptr(fd), fifo)
		lr := startLogReader(f, growPipe(f))
		perr = p.run(lr)
		if perr != nil {
			cmd.Process.Kill() // it may block writing to the FIFO otherwise
		}
		lr.stop()
		f.Close()
	}
	if openErr != nil {
		cmd.Process.Kill()
	}
	werr := waitErr(<-waited)

	res := &Result{Arch: arch, Insns: p.n, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	fillStatus(res, cmd.ProcessState)

	var fe fnError
	switch {
	case errors.As(perr, &fe):
		return res, fe.err
	case ctx.Err() != nil:
		return res, fail("%w", ctx.Err())
	case openErr != nil:
		return res, fail("open log FIFO: %w", openErr)
	case perr != nil:
		var fmtErr *FormatError
		if errors.As(perr, &fmtErr) {
			return res, fail("%w (qemu %s -d %s)%s", perr, bin, items, stderrNote(res.Stderr))
		}
		return res, fail("reading qemu log: %w", perr)
	case werr != nil:
		return res, fail("%s: %w", bin, werr)
	case p.n == 0:
		return res, fail("qemu logged no instruction (exit status %d, signal %d)%s", res.Status, res.Signal, stderrNote(res.Stderr))
	}
	return res, nil
}

// Count runs prog under qemu-user normally (translation blocks of many
// instructions, chained: fast) with the counting plugin and returns the exact
// number of executed instructions in Result.Insns.  Options.FP and
// Options.Max are ignored.  The count equals Trace's Insns for the same
// program and arguments.  qemu 7.2 does not call the plugin's exit hook when
// the guest is killed by a signal; then Count runs prog once more under
// Trace (single-stepped, slow) to count.
func Count(ctx context.Context, prog string, opt Options) (*Result, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("oracle: count %s: "+format, append([]any{prog}, a...)...)
	}
	res, data, err := runPlugin(ctx, prog, opt, countPlugin, opt.Plugin, nil, fail)
	if err != nil {
		return res, err
	}
	if data == nil && res.Signal != 0 {
		// qemu 7.2 does not run plugin exit callbacks when the guest is
		// killed by a signal: count in a traced run instead (only the
		// "Trace" lines are looked at beyond the first record).
		tres, terr := Trace(ctx, prog, Options{Max: 1, Args: opt.Args, Dir: opt.Dir, CPU: opt.CPU, Sysroot: opt.Sysroot}, func(*Record) error { return nil })
		if terr != nil {
			return res, fail("guest killed by signal %d, no plugin counts, and the traced run failed: %w", res.Signal, terr)
		}
		if tres.Signal != res.Signal {
			return res, fail("guest killed by signal %d, no plugin counts, and the traced run ended differently (status %d, signal %d)", res.Signal, tres.Status, tres.Signal)
		}
		res.Insns = tres.Insns
		return res, nil
	}
	if data == nil {
		return res, fail("plugin wrote no counts (exit status %d, signal %d)%s", res.Status, res.Signal, stderrNote(res.Stderr))
	}
	line, _, _ := strings.Cut(string(data), "\n")
	n, ok := strings.CutPrefix(line, "# insns ")
	if !ok {
		return res, fail("unexpected plugin output %q", line)
	}
	if res.Insns, err = strconv.ParseUint(n, 10, 64); err != nil {
		return res, fail("unexpected plugin output %q", line)
	}
	return res, nil
}

// runPlugin runs prog under qemu-user normally with the plugin pl (its
// source or object overridden by override, see plugin.lib) given the
// arguments out=FILE and extra, and returns the run's result and what the
// plugin wrote to FILE (nil if it wrote nothing: it writes at the guest's
// exit, which qemu 7.2 skips when a signal kills the guest). fail formats
// the errors.
func runPlugin(ctx context.Context, prog string, opt Options, pl *plugin, override string, extra []string, fail func(string, ...any) error) (*Result, []byte, error) {
	arch, bin, err := setup(prog, opt)
	if err != nil {
		return nil, nil, err
	}
	lib, err := pl.lib(override)
	if err != nil {
		return nil, nil, fail("%w", err)
	}
	tmp, err := os.MkdirTemp("", "simrun-oracle-")
	if err != nil {
		return nil, nil, fail("%w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "out")
	if strings.Contains(lib, ",") || strings.Contains(out, ",") {
		return nil, nil, fail("plugin path %q or output %q contains a comma, which qemu's -plugin option cannot take", lib, out)
	}
	spec := strings.Join(append([]string{lib, "out=" + out}, extra...), ",")
	args := append(qemuArgs(arch, opt), "-plugin", spec, prog)
	args = append(args, opt.Args...)
	var stdout, stderr bytes.Buffer
	cmd := command(ctx, bin, args, opt, &stdout, &stderr)
	if err := cmd.Start(); err != nil {
		return nil, nil, fail("start %s: %w", bin, err)
	}
	limitChild(cmd.Process.Pid)
	werr := waitErr(cmd.Wait())
	res := &Result{Arch: arch, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	fillStatus(res, cmd.ProcessState)
	if ctx.Err() != nil {
		return res, nil, fail("%w", ctx.Err())
	}
	if werr != nil {
		return res, nil, fail("%s: %w", bin, werr)
	}
	data, err := os.ReadFile(out)
	if errors.Is(err, os.ErrNotExist) {
		return res, nil, nil
	}
	if err != nil {
		return res, nil, fail("reading the plugin's output: %w", err)
	}
	return res, data, nil
}
