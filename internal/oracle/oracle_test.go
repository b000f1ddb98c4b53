package oracle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var arches = []string{"arm64", "s390x"}

// needQemu skips the test when the qemu-user binary for arch is missing.
// (The project's differential tests use Require instead, which fails.)
func needQemu(t *testing.T, arch string) {
	t.Helper()
	if Available(arch) != nil {
		_, err := exec.LookPath(qemuBinary[arch])
		t.Skipf("%s not installed (apt-get install qemu-user): %v", qemuBinary[arch], err)
	}
}

// collect traces prog and returns copies of all records.
func collect(t *testing.T, prog string, opt Options) ([]Record, *Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var recs []Record
	res, err := Trace(ctx, prog, opt, func(r *Record) error {
		recs = append(recs, *r)
		return nil
	})
	return recs, res, err
}

func TestTraceHi(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			p := progHi(arch)
			prog := writeELF(t, t.TempDir(), "hi", arch, p.code)
			recs, res, err := collect(t, prog, Options{FP: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Arch != arch || res.Insns != p.insns || len(recs) != int(p.insns) {
				t.Fatalf("arch %s, %d insns, %d records; want %s, %d", res.Arch, res.Insns, len(recs), arch, p.insns)
			}
			if string(res.Stdout) != "hi\n" || res.Status != 7 || res.Signal != 0 {
				t.Fatalf("stdout %q status %d signal %d, want \"hi\\n\" 7 0", res.Stdout, res.Status, res.Signal)
			}
			for i, r := range recs {
				if r.N != uint64(i) || r.PC != codeVA+p.pcs[i] {
					t.Fatalf("record %d: N=%d PC=%#x, want PC=%#x", i, r.N, r.PC, codeVA+p.pcs[i])
				}
			}
			one := uint64(0x3ff0000000000000) // 1.0
			type check struct {
				rec  int
				what string
				got  any
				want any
			}
			var checks []check
			if arch == "arm64" {
				sp := recs[0].R[31]
				if sp == 0 || sp&15 != 0 {
					t.Errorf("initial sp %#x", sp)
				}
				checks = []check{
					{1, "x0", recs[1].R[0], uint64(1)},
					{2, "x1 (adr)", recs[2].R[1], uint64(codeVA + 0x2c)},
					{5, "x0 after write", recs[5].R[0], uint64(3)},
					{6, "NZCV after cmp 3,3", recs[6].F, uint8(6)},
					{7, "q0 after fmov d0", recs[7].V[0], [2]uint64{0, one}},
					{8, "q1 after mov v1.d[1]", recs[8].V[1], [2]uint64{3, 0}},
					{10, "x8", recs[10].R[8], uint64(94)},
					{10, "sp", recs[10].R[31], sp},
				}
			} else {
				checks = []check{
					{1, "r2", recs[1].R[2], uint64(1)},
					{2, "r3 (larl)", recs[2].R[3], uint64(codeVA + 0x28)},
					{4, "r2 after write", recs[4].R[2], uint64(3)},
					{5, "cc after cghi 3,4", recs[5].F, uint8(1)},
					{6, "r5", recs[6].R[5], one},
					{7, "v0 after ldgr f0", recs[7].V[0], [2]uint64{one, 0}},
					{8, "v1 after vlvgg element 1", recs[8].V[1], [2]uint64{0, 3}},
					{9, "r2", recs[9].R[2], uint64(7)},
				}
				if recs[0].R[15] == 0 {
					t.Errorf("initial r15 is 0")
				}
			}
			for _, c := range checks {
				if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
					t.Errorf("record %d: %s = %#x, want %#x", c.rec, c.what, c.got, c.want)
				}
			}

			// without FP: same general registers, no vector registers
			recs2, res2, err := collect(t, prog, Options{})
			if err != nil || res2.Insns != p.insns {
				t.Fatalf("without FP: %v, %+v", err, res2)
			}
			for i := range recs2 {
				if recs2[i].R != recs[i].R || recs2[i].PC != recs[i].PC || recs2[i].F != recs[i].F {
					t.Fatalf("record %d differs without FP", i)
				}
				if recs2[i].V != ([32][2]uint64{}) {
					t.Fatalf("record %d has vector registers without FP", i)
				}
			}

			// Max
			recs3, res3, err := collect(t, prog, Options{Max: 3})
			if err != nil || len(recs3) != 3 || res3.Insns != p.insns {
				t.Fatalf("Max 3: %d records, %d insns, %v", len(recs3), res3.Insns, err)
			}
		})
	}
}

// TestTraceDir: a relative program path is resolved in Dir and the initial
// state does not depend on the directory.
func TestTraceDir(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			var first []Record
			for _, dir := range []string{t.TempDir(), t.TempDir()} {
				writeELF(t, dir, "hi", arch, progHi(arch).code)
				recs, res, err := collect(t, "./hi", Options{Dir: dir, Max: 1})
				if err != nil || res.Status != 7 {
					t.Fatalf("%v %+v", err, res)
				}
				first = append(first, recs[0])
			}
			if first[0] != first[1] {
				t.Fatalf("initial state depends on the directory:\n%+v\n%+v", first[0], first[1])
			}
		})
	}
}

// TestTraceSegv: death by SIGSEGV ends the trace with the faulting
// instruction's record.
func TestTraceSegv(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			p := progSegv(arch)
			dir := t.TempDir()
			prog := writeELF(t, dir, "segv", arch, p.code)
			recs, res, err := collect(t, prog, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != -1 || res.Signal != sigSEGV || res.Insns != 2 || recs[1].PC != codeVA+4 {
				t.Fatalf("%d insns, status %d, signal %d, last pc %#x; want 2, -1, 11, %#x",
					res.Insns, res.Status, res.Signal, recs[len(recs)-1].PC, codeVA+4)
			}
			if !strings.Contains(string(res.Stderr), "uncaught target signal 11") {
				t.Errorf("stderr %q", res.Stderr)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("core files left in %s: %v", dir, ents)
			}
		})
	}
}

// TestTraceAlarm: death by an asynchronous SIGALRM.  qemu logs the block it
// was about to run and then "Stopped execution of TB chain"; that record
// must not appear.
func TestTraceAlarm(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			p, loop := progAlarm(arch)
			prog := writeELF(t, t.TempDir(), "alarm", arch, p.code)
			recs, res, err := collect(t, prog, Options{})
			var fe *FormatError
			if errors.As(err, &fe) && fe.Lost {
				t.Skipf("qemu lost log data (host under load?): %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != -1 || res.Signal != sigALR {
				t.Fatalf("status %d signal %d, want -1 %d", res.Status, res.Signal, sigALR)
			}
			if len(recs) < 10 {
				t.Fatalf("only %d records", len(recs))
			}
			for i := 5; i+1 < len(recs); i++ {
				a, b := recs[i], recs[i+1]
				switch a.PC - codeVA {
				case loop:
					if b.PC != a.PC+4 || b.R[3] != a.R[3]+1 {
						t.Fatalf("record %d: pc %#x r3 %#x after pc %#x r3 %#x", i+1, b.PC, b.R[3], a.PC, a.R[3])
					}
				case loop + 4:
					if b.PC != a.PC-4 || b.R[3] != a.R[3] {
						t.Fatalf("record %d: pc %#x after %#x", i+1, b.PC, a.PC)
					}
				default:
					t.Fatalf("record %d: pc %#x outside the loop", i, a.PC)
				}
			}
		})
	}
}

// TestTraceHandledSignals: timer signals caught by a handler interrupt a
// counting loop about a hundred times.  Each time qemu logs a block it
// does not run ("Stopped execution"), runs the handler and logs the block
// again; the trace must hold every loop instruction exactly once per
// iteration.
func TestTraceHandledSignals(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			p, loop, handler := progHandled(arch)
			prog := writeELF(t, t.TempDir(), "handled", arch, p.code)
			var res *Result
			var err error
			var counts map[uint64]int
			for try := 0; ; try++ {
				counts = map[uint64]int{}
				res, err = Trace(context.Background(), prog, Options{}, func(r *Record) error {
					counts[r.PC-codeVA]++
					return nil
				})
				var fe *FormatError
				if !errors.As(err, &fe) || !fe.Lost {
					break
				}
				// Lost log data is detected and reported, which is what
				// Trace can do; a busy or slow (-race) host makes it likely.
				t.Logf("try %d: %v", try, err)
				if try == 4 {
					t.Skip("qemu lost log data in every try (host busy or slow?)")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != 0 {
				t.Fatalf("status %d signal %d", res.Status, res.Signal)
			}
			for _, off := range []uint64{loop, loop + 4, loop + 8} {
				if counts[off] != handledIters {
					t.Errorf("pc %#x traced %d times, want %d", codeVA+off, counts[off], handledIters)
				}
			}
			t.Logf("%d instructions, %d signal handler runs", res.Insns, counts[handler])
		})
	}
}

// TestCount compares the plugin counts with the traces.
func TestCount(t *testing.T) {
	RequireTool(t, "gcc", "gcc") // the host C compiler builds the counting plugin
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			dir := t.TempDir()
			for _, tc := range []struct {
				name string
				p    testProg
			}{{"hi", progHi(arch)}, {"segv", progSegv(arch)}} {
				prog := writeELF(t, dir, tc.name, arch, tc.p.code)
				cres, err := Count(context.Background(), prog, Options{})
				if err != nil {
					t.Fatal(err)
				}
				_, tres, err := collect(t, prog, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if cres.Insns != tc.p.insns || cres.Insns != tres.Insns {
					t.Errorf("%s: Count %d, Trace %d, want %d", tc.name, cres.Insns, tres.Insns, tc.p.insns)
				}
				if string(cres.Stdout) != string(tres.Stdout) || cres.Status != tres.Status || cres.Signal != tres.Signal {
					t.Errorf("%s: Count %+v, Trace %+v", tc.name, cres, tres)
				}
			}
			// a prebuilt plugin
			lib, err := countPlugin.lib("")
			if err != nil {
				t.Fatal(err)
			}
			res, err := Count(context.Background(), writeELF(t, dir, "hi", arch, progHi(arch).code), Options{Plugin: lib})
			if err != nil || res.Insns != progHi(arch).insns {
				t.Fatalf("Count with %s: %v %+v", lib, err, res)
			}
		})
	}
}

// TestCountOracleBinaries compares Count and Trace on larger programs: the
// qemu oracle suite's (kept beside the repository as ../shared/oracle),
// built in a writable copy of it, whose build/ directory
// SIMRUN_ORACLE_BUILD names. It is opt-in because building them is slow;
// cmd/simrun's TestOracleSuite runs the suite itself.
func TestCountOracleBinaries(t *testing.T) {
	build := os.Getenv("SIMRUN_ORACLE_BUILD")
	if build == "" {
		t.Skip("opt-in: set SIMRUN_ORACLE_BUILD to the build/ directory of a built copy of the qemu oracle suite (../shared/oracle)")
	}
	for _, name := range []string{"aarch64-O2/qsort", "s390x-z13O2/qsort", "s390x-O2/switch"} {
		prog := filepath.Join(build, name)
		arch, err := ArchOf(prog)
		if err != nil {
			t.Fatal(err)
		}
		needQemu(t, arch)
		cres, err := Count(context.Background(), prog, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tres, err := Trace(context.Background(), prog, Options{FP: true}, func(*Record) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if cres.Insns != tres.Insns || string(cres.Stdout) != string(tres.Stdout) || cres.Status != tres.Status {
			t.Errorf("%s: Count %d insns status %d, Trace %d insns status %d", name, cres.Insns, cres.Status, tres.Insns, tres.Status)
		}
		t.Logf("%s: %d instructions", name, cres.Insns)
	}
}

// TestTraceAbort: an error from the callback kills qemu and is returned.
func TestTraceAbort(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			prog := writeELF(t, t.TempDir(), "spin", arch, progSpin(arch).code)
			stop := errors.New("enough")
			done := make(chan struct{})
			var res *Result
			var err error
			go func() {
				defer close(done)
				res, err = Trace(context.Background(), prog, Options{}, func(r *Record) error {
					if r.N == 100 {
						return stop
					}
					return nil
				})
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("Trace did not return after the callback failed")
			}
			if err != stop || res == nil || res.Insns != 101 {
				t.Fatalf("err %v res %+v, want the callback's error after 101 records", err, res)
			}
		})
	}
}

// TestTraceCancel: cancelling the context ends an endless program.
func TestTraceCancel(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch, func(t *testing.T) {
			needQemu(t, arch)
			prog := writeELF(t, t.TempDir(), "spin", arch, progSpin(arch).code)
			// long enough for qemu to start and log on a loaded machine
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			t0 := time.Now()
			res, err := Trace(ctx, prog, Options{}, func(*Record) error { return nil })
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(t0); d > 30*time.Second {
				t.Fatalf("took %v", d)
			}
			if res.Insns == 0 {
				t.Errorf("no instructions before the deadline")
			}
		})
	}
}

func TestBadProgram(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	x86 := filepath.Join(dir, "x86")
	os.WriteFile(x86, x86ELF(), 0o755)
	for _, tc := range []struct{ prog, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{text, "bad magic"},
		{x86, "neither aarch64 nor s390x"},
		{"-version", "qemu option"},
	} {
		_, err := Trace(context.Background(), tc.prog, Options{}, func(*Record) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.prog) {
			t.Errorf("Trace(%s): %v, want an error naming the program and %q", tc.prog, err, tc.want)
		}
		_, err = Count(context.Background(), tc.prog, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Count(%s): %v, want %q", tc.prog, err, tc.want)
		}
	}
}

// x86ELF is an ELF header for EM_X86_64.
func x86ELF() []byte {
	b := make([]byte, 64)
	copy(b, "\x7fELF\x02\x01\x01")
	b[16], b[18], b[20] = 2, 62, 1
	b[52], b[54], b[58] = 64, 56, 64
	return b
}

// fakeQemu makes Trace and Count run a shell script instead of qemu.
func fakeQemu(t *testing.T, script string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-qemu")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh for the fake qemu")
	}
	old := qemuBinary["arm64"]
	qemuBinary["arm64"] = p
	t.Cleanup(func() { qemuBinary["arm64"] = old })
}

// traceSoon runs Trace with a watchdog.
func traceSoon(t *testing.T, prog string, opt Options, fn func(*Record) error) (*Result, error) {
	t.Helper()
	type out struct {
		res *Result
		err error
	}
	c := make(chan out, 1)
	go func() {
		res, err := Trace(context.Background(), prog, opt, fn)
		c <- out{res, err}
	}()
	select {
	case o := <-c:
		return o.res, o.err
	case <-time.After(time.Minute):
		t.Fatal("Trace hangs")
	}
	return nil, nil
}

// TestQemuDiesEarly: qemu exits without ever opening the log FIFO (here a
// fake that fails at once).  Trace must return an error, not hang.
func TestQemuDiesEarly(t *testing.T) {
	fakeQemu(t, "echo 'fake-qemu: cannot do it' >&2\nexit 3\n")
	prog := writeELF(t, t.TempDir(), "hi", "arm64", progHi("arm64").code)
	for i := 0; i < 20; i++ { // the reaper races with our open
		res, err := traceSoon(t, prog, Options{}, func(*Record) error { return nil })
		if err == nil || !strings.Contains(err.Error(), "no instruction") || !strings.Contains(err.Error(), "cannot do it") {
			t.Fatalf("err %v", err)
		}
		if res.Status != 3 {
			t.Fatalf("status %d, want 3", res.Status)
		}
	}
}

// fakeLogQemu is a fake qemu that copies the log file $FAKELOG (baked in)
// to its -D argument, prints "hi" and exits with status 5.
func fakeLogQemu(t *testing.T, log string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(f, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeQemu(t, fmt.Sprintf(`while [ $# -gt 0 ]; do
  if [ "$1" = -D ]; then cat '%s' > "$2"; fi
  shift
done
echo hi
exit 5
`, f))
}

// TestTraceFakeLog runs the FIFO machinery on recorded logs, no qemu needed.
func TestTraceFakeLog(t *testing.T) {
	prog := writeELF(t, t.TempDir(), "hi", "arm64", progHi("arm64").code)
	golden := readGolden(t, "arm64-vecloops.jsonl.gz")
	fakeLogQemu(t, string(readGz(t, "arm64-vecloops.log.gz")))
	i := 0
	res, err := traceSoon(t, prog, Options{FP: true}, func(r *Record) error {
		checkGolden(t, r, &golden[i], 32, true)
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Insns != uint64(len(golden)) || i != len(golden) || string(res.Stdout) != "hi\n" || res.Status != 5 {
		t.Fatalf("%+v", res)
	}

	// a log in another format
	fakeLogQemu(t, "Trace 0: 0x7f0000000100 [0000000000009201/0000000000001000/00000001/00000201] sym\nPC=0000000000001000\n")
	_, err = traceSoon(t, prog, Options{}, func(*Record) error { return nil })
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "unexpected qemu log format") || !strings.Contains(err.Error(), prog) {
		t.Fatalf("err %v, want a FormatError naming the program", err)
	}

	// an empty log
	fakeLogQemu(t, "")
	_, err = traceSoon(t, prog, Options{}, func(*Record) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no instruction") {
		t.Fatalf("err %v", err)
	}
}

// fakeTB records Require's verdict.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

func TestRequire(t *testing.T) {
	old := qemuBinary["s390x"]
	qemuBinary["s390x"] = "qemu-s390x-not-installed"
	defer func() { qemuBinary["s390x"] = old }()

	t.Setenv("SIMRUN_ALLOW_NO_QEMU", "")
	f := &fakeTB{TB: t}
	Require(f, "s390x")
	if !strings.Contains(f.fatal, "qemu-s390x-not-installed not found") || !strings.Contains(f.fatal, "qemu-user") || f.skip != "" {
		t.Errorf("missing qemu: fatal %q skip %q", f.fatal, f.skip)
	}
	t.Setenv("SIMRUN_ALLOW_NO_QEMU", "1")
	f = &fakeTB{TB: t}
	Require(f, "s390x")
	if f.fatal != "" || !strings.Contains(f.skip, "not found") {
		t.Errorf("missing qemu, SIMRUN_ALLOW_NO_QEMU=1: fatal %q skip %q", f.fatal, f.skip)
	}
	f = &fakeTB{TB: t}
	Require(f, "mips")
	if f.skip == "" && f.fatal == "" {
		t.Errorf("unknown arch accepted")
	}
	if Available("arm64") == nil {
		f = &fakeTB{TB: t}
		Require(f, "arm64")
		if f.fatal != "" || f.skip != "" {
			t.Errorf("installed qemu: fatal %q skip %q", f.fatal, f.skip)
		}
	}
}

func TestRequireMemTrace(t *testing.T) {
	for _, tc := range []struct {
		name, qemu, gcc, ci, fatal, skip string
	}{
		{"no qemu", "qemu-s390x-not-installed", "gcc", "", "", "qemu-s390x-not-installed not found"},
		{"no qemu in CI", "qemu-s390x-not-installed", "gcc", "true", "qemu-s390x-not-installed not found", ""},
		{"no gcc", "", "gcc-not-installed", "", "", "gcc-not-installed not found"},
		{"no gcc in CI", "", "gcc-not-installed", "1", "gcc-not-installed not found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldQ, oldG := qemuBinary["s390x"], gccBinary
			defer func() { qemuBinary["s390x"], gccBinary = oldQ, oldG }()
			if tc.qemu != "" {
				qemuBinary["s390x"] = tc.qemu
			} else if Available("s390x") != nil {
				t.Skip("qemu-s390x not installed")
			}
			gccBinary = tc.gcc
			t.Setenv("CI", tc.ci)
			f := &fakeTB{TB: t}
			RequireMemTrace(f, "s390x")
			if tc.fatal == "" && f.fatal != "" || !strings.Contains(f.fatal, tc.fatal) || tc.skip == "" && f.skip != "" || !strings.Contains(f.skip, tc.skip) {
				t.Errorf("fatal %q skip %q, want fatal %q skip %q", f.fatal, f.skip, tc.fatal, tc.skip)
			}
		})
	}
	if Available("arm64") == nil && PluginAvailable() == nil {
		f := &fakeTB{TB: t}
		RequireMemTrace(f, "arm64")
		if f.fatal != "" || f.skip != "" {
			t.Errorf("everything installed: fatal %q skip %q", f.fatal, f.skip)
		}
	}
}
