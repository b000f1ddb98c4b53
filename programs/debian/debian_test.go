package debian_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/programs/debian"
	_ "simrun/sim/arm64"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
)

// The acceptance test "real distribution programs": programs from Debian
// bookworm's arm64 and s390x packages (fetch.sh unpacks them into a
// sysroot per architecture) run under simrun with that sysroot and under
// qemu-user -L with the same one. Each case's steps must print the same
// stdout and end with the same status under both, and the files named
// must hold the same bytes afterwards.

const (
	// maxInsns bounds one step under simrun (the longest, xz -6 of
	// big.txt, runs 251 million on arm64).
	maxInsns = 2_000_000_000
	// qemuTimeout bounds one step under qemu.
	qemuTimeout = 2 * time.Minute
)

var arches = []string{"arm64", "s390x"}

// qemuCPU are the models whose HWCAP and ID registers (arm64) or facility
// list (s390x) equal the ones simrun shows glibc programs, so that glibc
// picks the same string and memory routines under both.
var qemuCPU = map[string]string{"arm64": "cortex-a72", "s390x": programs.S390xQemuCPU}

var qemuBin = map[string]string{"arm64": "qemu-aarch64", "s390x": "qemu-s390x"}

// TestDebianPrograms runs the table on both architectures.
func TestDebianPrograms(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			sysroot, err := debian.Sysroot(arch)
			if err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%v (CI is set: .ci/run must run programs/debian/fetch.sh before the tests)", err)
				}
				t.Skipf("%v", err)
			}
			if err := oracle.Available(arch); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatal(err)
				}
				t.Skip(err)
			}
			for _, c := range debian.Cases {
				t.Run(c.Name, func(t *testing.T) {
					t.Parallel()
					if reason := c.Known[arch]; reason != "" && os.Getenv("SIMRUN_DEBIAN_KNOWN") == "" {
						t.Skip("known failure: " + reason + " (SIMRUN_DEBIAN_KNOWN=1 runs it)")
					}
					runCase(t, arch, sysroot, c)
				})
			}
		})
	}
}

// runCase runs c's steps in two fresh directories, one for qemu and one
// for simrun, each with the prepared inputs, and compares.
func runCase(t *testing.T, arch, sysroot string, c debian.Case) {
	dir := t.TempDir()
	qdir, sdir := filepath.Join(dir, "q"), filepath.Join(dir, "s")
	for _, d := range []string{qdir, sdir} {
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, debian.Prepare(d))
	}
	observed := len(c.Files) > 0 || len(c.Restored) > 0
	for i, s := range c.Steps {
		prog := filepath.Join(sysroot, s.Prog)
		if _, err := os.Stat(prog); err != nil {
			t.Fatalf("%s is not in the sysroot (%v): is its package in fetch.sh's list?", s.Prog, err)
		}
		what := fmt.Sprintf("step %d (%s %s)", i+1, s.Prog, strings.Join(s.Args, " "))
		q, err := runQemu(arch, sysroot, qdir, prog, s)
		require.NoError(t, err, "%s under qemu", what)
		sim, err := runSim(sysroot, sdir, prog, s)
		require.NoError(t, err, "%s under simrun", what)
		// A run that met a syscall simrun does not implement has not
		// passed, whatever it printed.
		if sim.notes != "" {
			t.Errorf("%s: simrun notes:\n%s", what, sim.notes)
		}
		if sim.fault != "" {
			t.Logf("%s: simrun: %s", what, sim.fault)
		}
		if q.status != sim.status || !bytes.Equal(q.stdout, sim.stdout) {
			t.Fatalf("%s differs:\nqemu:   status %d, %d bytes of stdout, stderr:\n%s\nsimrun: status %d, %d bytes of stdout, stderr:\n%s%s\n%s",
				what, q.status, len(q.stdout), clip(q.stderr), sim.status, len(sim.stdout), clip(sim.stderr), sim.fault, firstDiff(q.stdout, sim.stdout))
		}
		t.Logf("%s: status %d, %d bytes of stdout, %d instructions", what, q.status, len(q.stdout), sim.insns)
		for _, d := range []string{qdir, sdir} {
			require.NoError(t, debian.AfterStep(d, i+1))
		}
		observed = observed || len(q.stdout) > 0 || q.status != 0
	}
	if !observed {
		t.Fatal("the case shows nothing to compare: no stdout, no output file and every status 0")
	}
	for _, f := range c.Files {
		qb, qerr := os.ReadFile(filepath.Join(qdir, f))
		sb, serr := os.ReadFile(filepath.Join(sdir, f))
		require.NoError(t, qerr, "output %s under qemu", f)
		require.NoError(t, serr, "output %s under simrun", f)
		if !bytes.Equal(qb, sb) {
			t.Fatalf("output file %s differs (qemu %d bytes, simrun %d):\n%s", f, len(qb), len(sb), firstDiff(qb, sb))
		}
	}
	in := debian.Inputs()
	for _, f := range c.Restored {
		for _, d := range []string{qdir, sdir} {
			b, err := os.ReadFile(filepath.Join(d, f))
			require.NoError(t, err)
			if !bytes.Equal(in[f], b) {
				t.Fatalf("%s in %s does not hold its prepared content after the round trip:\n%s", f, d, firstDiff(in[f], b))
			}
		}
	}
}

type result struct {
	stdout, stderr []byte
	status         int // as a shell sees it: 128+signal after a signal
	insns          uint64
	notes          string // simrun's notes (unsupported syscalls)
	fault          string
}

// runQemu runs one step as oracle does: an empty environment, -seed 1,
// the CPU model simrun matches, -L sysroot.
func runQemu(arch, sysroot, dir, prog string, s debian.Step) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), qemuTimeout)
	defer cancel()
	args := append([]string{"-L", sysroot, "-seed", "1", "-cpu", qemuCPU[arch], prog}, s.Args...)
	cmd := exec.CommandContext(ctx, qemuBin[arch], args...)
	cmd.Env = []string{}
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(s.Stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := &result{stdout: out.Bytes(), stderr: errb.Bytes()}
	if ctx.Err() != nil {
		return r, fmt.Errorf("%s timed out after %v", qemuBin[arch], qemuTimeout)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.status = ee.ExitCode()
		if r.status < 0 { // killed by a signal
			r.status = 128 + signalOf(ee)
		}
	case err != nil:
		return r, err
	}
	return r, nil
}

// runSim runs one step in-process under simrun with the same sysroot.
func runSim(sysroot, dir, prog string, s debian.Step) (*result, error) {
	var out, errb, notes bytes.Buffer
	m, err := linux.Load(prog, linux.Config{
		Args:     append([]string{prog}, s.Args...),
		Stdin:    strings.NewReader(s.Stdin),
		Stdout:   &out,
		Stderr:   &errb,
		Notes:    &notes,
		Seed:     1,
		MaxInsns: maxInsns,
		Sysroot:  sysroot,
		Dir:      dir,
	})
	if err != nil {
		return nil, err
	}
	exit, err := m.Run()
	if err != nil {
		return nil, err
	}
	r := &result{stdout: out.Bytes(), stderr: errb.Bytes(), status: exit.Status, insns: m.Insns, notes: notes.String()}
	if exit.Fault != nil {
		r.fault = exit.Fault.Error()
	}
	return r, nil
}

// clip shortens a stream for a failure message.
func clip(b []byte) string {
	const n = 2000
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// firstDiff describes where two outputs first differ, by line.
func firstDiff(a, b []byte) string {
	al, bl := strings.SplitAfter(string(a), "\n"), strings.SplitAfter(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("first difference at line %d:\nqemu:   %q\nsimrun: %q", i+1, clip([]byte(x)), clip([]byte(y)))
		}
	}
	return "identical"
}

// signalOf is the signal that killed a process.
func signalOf(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
