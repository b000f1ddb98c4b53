package random_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"simrun/internal/difftest"
	"simrun/internal/oracle"
	"simrun/programs"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
)

// config is one way of building a generated program.
type config struct {
	name    string
	arch    string // simrun's name: arm64, s390x
	cc      string
	flags   []string
	dynamic bool
}

var configs = []config{
	{"aarch64-O0", "arm64", "aarch64-linux-gnu-gcc", []string{"-O0", "-static"}, false},
	{"aarch64-O2", "arm64", "aarch64-linux-gnu-gcc", []string{"-O2", "-static"}, false},
	{"aarch64-dyn-O2", "arm64", "aarch64-linux-gnu-gcc", []string{"-O2"}, true},
	{"s390x-O0", "s390x", "s390x-linux-gnu-gcc", []string{"-O0", "-static"}, false},
	{"s390x-O2", "s390x", "s390x-linux-gnu-gcc", []string{"-O2", "-static"}, false},
	{"s390x-dyn-O2", "s390x", "s390x-linux-gnu-gcc", []string{"-O2"}, true},
}

// qemuTimeout bounds one qemu run: a generated program that runs longer
// is skipped (csmith's programs end, but some only after billions of
// iterations).
const qemuTimeout = 20 * time.Second

// need skips t naming what is missing, or fails it when CI is set (CI
// must not pass by skipping its oracle).
func need(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v (CI is set: a missing tool fails the test)", err)
	}
	t.Skipf("%v (skipped; with CI set this fails)", err)
}

// toolVersion is the first line tool prints for --version, or an error
// naming the Debian package that brings tool.
func toolVersion(tool, pkg string) (string, error) {
	if _, err := exec.LookPath(tool); err != nil {
		return "", fmt.Errorf("%s not installed (apt-get install %s)", tool, pkg)
	}
	out, err := exec.Command(tool, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", tool, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}

// cacheDir is $XDG_CACHE_HOME/simrun/csmith, else ~/.cache/simrun/csmith.
func cacheDir() (string, error) {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	dir := filepath.Join(base, "simrun", "csmith")
	return dir, os.MkdirAll(dir, 0o755)
}

func key(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:12])
}

// cached returns path, making it first with make(tmp) into a temporary
// file renamed into place, so that parallel tests and interrupted runs
// never see half a file.
func cached(path string, make func(tmp string) error) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
	defer os.Remove(tmp)
	if err := make(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// TestCsmith is a differential test on random C programs: csmith writes a
// program per seed, which is built for aarch64 and s390x (-O0 and -O2,
// static, and -O2 dynamically linked) and run under qemu-user (the
// oracle) and under simrun: stdout (the program's checksum line), exit
// status and the number of retired instructions must agree. A
// disagreement is a simulator bug; the test then compares the two in
// lockstep to name the first instruction whose result differs.
//
// Environment: SIMRUN_RANDOM_SEEDS programs (default 2) from seed
// SIMRUN_RANDOM_SEED_START (default 1); SIMRUN_RANDOM_OPTS are extra
// csmith options. Sources and binaries are cached under
// $XDG_CACHE_HOME/simrun/csmith (~/.cache/simrun/csmith), keyed by seed,
// csmith version and options, compiler version and flags.
func TestCsmith(t *testing.T) {
	csmithVersion, err := toolVersion("csmith", "csmith")
	need(t, err)
	include := "/usr/include/csmith"
	if _, err := os.Stat(filepath.Join(include, "csmith.h")); err != nil {
		need(t, fmt.Errorf("%s/csmith.h missing (apt-get install libcsmith-dev)", include))
	}
	ccVersion := map[string]string{}
	for _, c := range configs {
		if _, ok := ccVersion[c.cc]; !ok {
			v, err := toolVersion(c.cc, "gcc-"+strings.TrimSuffix(c.cc, "-gcc"))
			need(t, err)
			ccVersion[c.cc] = v
		}
		if err := oracle.Available(c.arch); err != nil {
			need(t, err)
		}
		if c.dynamic {
			root := linux.DefaultSysroot(cpu.ArchByName(c.arch))
			if _, err := os.Stat(filepath.Join(root, "lib")); err != nil {
				need(t, fmt.Errorf("no sysroot %s (apt-get install libc6-dev-arm64-cross libc6-dev-s390x-cross)", root))
			}
		}
	}
	dir, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	seeds := difftest.EnvInt("SIMRUN_RANDOM_SEEDS", 2)
	start := difftest.EnvInt("SIMRUN_RANDOM_SEED_START", 1)
	opts := strings.Fields(os.Getenv("SIMRUN_RANDOM_OPTS"))
	for seed := start; seed < start+seeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			srcKey := key("csmith", csmithVersion, fmt.Sprint(seed), strings.Join(opts, " "))
			src := filepath.Join(dir, srcKey+".c")
			err := cached(src, func(tmp string) error {
				return run("csmith", append([]string{"--seed", fmt.Sprint(seed), "--output", tmp}, opts...)...)
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range configs {
				t.Run(c.name, func(t *testing.T) {
					flags := append([]string{"-w", "-I" + include}, c.flags...)
					bin := filepath.Join(dir, key(srcKey, ccVersion[c.cc], c.cc, strings.Join(flags, " ")))
					err := cached(bin, func(tmp string) error {
						return run(c.cc, append(flags, src, "-o", tmp)...)
					})
					if err != nil {
						t.Fatal(err)
					}
					compare(t, bin, c, seed)
				})
			}
		})
	}
}

// compare runs bin under qemu and simrun; on a mismatch it runs them
// once more in lockstep to find the first differing instruction.
func compare(t *testing.T, bin string, c config, seed int) {
	t.Helper()
	opt := difftest.Options{CPU: programs.Config{Arch: c.arch, Glibc: true}.QemuCPU()}
	if c.dynamic {
		opt.Sysroot = linux.DefaultSysroot(cpu.ArchByName(c.arch))
	}
	ctx, cancel := context.WithTimeout(context.Background(), qemuTimeout)
	defer cancel()
	opt.Slack = 1_000_000 // a simrun that loops for ever stops
	res, err := difftest.Compare(ctx, bin, opt)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Skipf("seed %d runs longer than %v under qemu", seed, qemuTimeout)
	}
	var mm *difftest.Mismatch
	if errors.As(err, &mm) && res != nil {
		opt.Lockstep = int(min(res.Insns+1, 20_000_000))
		_, lerr := difftest.Compare(context.Background(), bin, opt)
		t.Fatalf("seed %d %s (%s): %v\nlockstep over %d instructions: %v", seed, c.name, bin, err, opt.Lockstep, lerr)
	}
	if err != nil {
		t.Fatalf("seed %d %s (%s): %v", seed, c.name, bin, err)
	}
	if !strings.HasPrefix(string(res.Stdout), "checksum = ") {
		t.Fatalf("seed %d %s: stdout %q has no checksum line", seed, c.name, res.Stdout)
	}
	t.Logf("%s: %d instructions agree", strings.TrimSpace(string(res.Stdout)), res.Insns)
}
