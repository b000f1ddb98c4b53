package replay

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs/debian"
	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
)

// recorder is the kernel of a recorded run: the process's, each entry
// logged in the history (as sim/gdbstub's kernel does).
type recorder struct {
	h     *History
	inner *linux.Process
}

func (r recorder) Syscall(m *cpu.Machine) {
	r.h.Begin()
	r.inner.Syscall(m)
	r.h.End(Syscall, false)
}

func (r recorder) TakeFault(m *cpu.Machine, f *cpu.Fault) bool {
	r.h.Begin()
	taken := r.inner.TakeFault(m, f)
	r.h.End(Fault, taken)
	return taken
}

func (r recorder) Preempt(m *cpu.Machine) {
	r.h.Begin()
	r.inner.Preempt(m)
	r.h.End(Boundary, false)
}

// runFor runs the recorded machine n more instructions at most, taking
// the snapshots the history asks for (cpu.ErrStopped).
func runFor(t *testing.T, h *History, m *cpu.Machine, n uint64) *cpu.Exit {
	t.Helper()
	exit, err := m.RunFor(n)
	if errors.Is(err, cpu.ErrStopped) {
		m.ClearStop()
		h.Mark()
		return nil
	}
	require.NoError(t, err)
	return exit
}

// point is the machine at one clock: its registers and a digest of its
// mappings and memory.
type point struct {
	state cpu.State
	mem   [32]byte
}

func look(m *cpu.Machine) point {
	var p point
	m.Core.State(&p.state)
	d := sha256.New()
	for _, r := range m.Mem.Regions() {
		d.Write([]byte{byte(r.Perm)})
		for a := r.Start; a < r.End; a += cpu.PageSize {
			if pg := m.Mem.PageAt(a); pg != nil && pg.Touched() {
				d.Write([]byte{byte(a >> 12), byte(a >> 20), byte(a >> 28), byte(a >> 36)})
				d.Write(pg.Bytes()[:])
			}
		}
	}
	copy(p.mem[:], d.Sum(nil))
	return p
}

type program struct {
	name, path string
	args       []string
	cfg        linux.Config
	watchSym   string // a function whose entries ScanBack finds
}

func programs(t *testing.T) []program {
	ps := []program{
		{name: "arm64-fib", path: "../../programs/bin/aarch64-O2/fib", args: []string{"12"}, watchSym: "fib_rec"},
		{name: "s390x-fib", path: "../../programs/bin/s390x-O2/fib", args: []string{"12"}, watchSym: "fib_rec"},
	}
	// Faults turned into signals whose handlers run (and mprotect, mmap).
	for _, c := range []struct{ arch, dir string }{{"arm64", "aarch64-sig-O2"}, {"s390x", "s390x-sig-O2"}} {
		for _, name := range []string{"faults", "altstack"} {
			ps = append(ps, program{name: c.arch + "-" + name, path: "../../programs/signals/bin/" + c.dir + "/" + name})
		}
	}
	// Threads on one core: switches happen in the kernel (a quantum's
	// end, a blocking call), timers fire at instruction boundaries.
	for _, c := range []struct{ arch, dir string }{{"arm64", "aarch64-thr-O2"}, {"s390x", "s390x-thr-O2"}} {
		for _, name := range []string{"timers", "worksplit", "prodcons"} {
			ps = append(ps, program{name: c.arch + "-" + name, path: "../../programs/threads/bin/" + c.dir + "/" + name})
		}
	}
	// A dynamically linked program that maps its libraries and reads a
	// file: Debian's cat, when the sysroots are there.
	dir := t.TempDir()
	file := filepath.Join(dir, "in.txt")
	require.NoError(t, os.WriteFile(file, bytes.Repeat([]byte("the quick brown fox\n"), 300), 0o644))
	for _, arch := range []string{"arm64", "s390x"} {
		root, err := debian.Sysroot(arch)
		if err != nil {
			t.Logf("no Debian %s sysroot (%v): cat not replayed", arch, err)
			continue
		}
		ps = append(ps, program{name: arch + "-cat", path: filepath.Join(root, "bin/cat"), args: []string{file},
			cfg: linux.Config{Sysroot: root}})
	}
	return ps
}

func load(t *testing.T, pr program, out *bytes.Buffer) *cpu.Machine {
	cfg := pr.cfg
	cfg.Args = append([]string{pr.path}, pr.args...)
	cfg.Stdout, cfg.Seed = out, 1
	m, err := linux.Load(pr.path, cfg)
	require.NoError(t, err)
	return m
}

func symbol(t *testing.T, path, name string) uint64 {
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.Symbols()
	require.NoError(t, err)
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}

// TestSeek records a run, goes back and forth to points of it and finds
// the machine exactly as it was there; the kernel never runs again (the
// output is written once), and the run ends as without a history.
func TestSeek(t *testing.T) {
	for _, pr := range programs(t) {
		t.Run(pr.name, func(t *testing.T) {
			var plainOut bytes.Buffer
			pm := load(t, pr, &plainOut)
			plainExit, err := pm.Run()
			require.NoError(t, err)
			total := Clock(pm)

			var out bytes.Buffer
			m := load(t, pr, &out)
			h, err := New(m)
			require.NoError(t, err)
			h.Interval = max(total/16, 1000) // a dozen snapshots
			m.Kernel = recorder{h: h, inner: linux.Of(m)}
			var bp uint64
			if pr.watchSym != "" {
				bp = symbol(t, pr.path, pr.watchSym)
			}

			// Forward: the state at sampled clocks, and the last clock at
			// which the pc was at bp.
			stop := total - 200
			rng := rand.New(rand.NewSource(1))
			samples := []uint64{0, 1, stop - 1}
			for range 24 {
				samples = append(samples, uint64(rng.Int63n(int64(stop))))
			}
			slices.Sort(samples)
			samples = slices.Compact(samples)
			seen := map[uint64]point{}
			var lastBP uint64
			found := false
			if bp != 0 {
				m.Observer = func(m *cpu.Machine) error {
					if m.Core.PC() == bp {
						lastBP, found = Clock(m), true
					}
					return nil
				}
			}
			for _, c := range append(samples, stop) {
				for Clock(m) < c {
					h.Mark()
					runFor(t, h, m, min(c-Clock(m), h.UntilMark()))
				}
				require.Equal(t, c, Clock(m))
				seen[c] = look(m)
			}
			m.Observer = nil
			h.Mark()
			require.Greater(t, h.Snapshots(), 4)
			require.Greater(t, m.Syscalls, uint64(1))
			written := out.String()
			newest := look(m)

			// Back and forth, in random order.
			rng.Shuffle(len(samples), func(i, j int) { samples[i], samples[j] = samples[j], samples[i] })
			for _, c := range samples {
				require.NoError(t, h.Seek(c, nil))
				require.Equal(t, c, Clock(m))
				require.False(t, h.Live())
				require.Equal(t, seen[c], look(m), "at clock %d", c)
			}
			require.Equal(t, written, out.String(), "replay wrote nothing")

			if bp != 0 {
				tb, ok, err := h.ScanBack(stop, func(m *cpu.Machine) bool { return m.Core.PC() == bp })
				require.NoError(t, err)
				require.Equal(t, found, ok)
				require.Equal(t, lastBP, tb)
			}

			// Forward to the newest point by replaying, observed.
			require.NoError(t, h.Seek(samples[0], nil))
			var steps uint64
			require.NoError(t, h.Seek(stop, func(*cpu.Machine) error { steps++; return nil }))
			require.True(t, h.Live())
			// One look per instruction boundary; a fault taken while
			// fetching (a jump to unmapped memory) enters the handler at
			// the same clock, one more look.
			require.GreaterOrEqual(t, steps, stop-samples[0])
			require.LessOrEqual(t, steps, stop-samples[0]+8)
			require.Equal(t, newest, look(m))

			exit, err := m.Run()
			require.NoError(t, err)
			require.Equal(t, plainExit.Status, exit.Status)
			require.Equal(t, plainOut.String(), out.String(), "the output, once")
			require.Equal(t, total, Clock(m))
		})
	}
}

// TestLimit: past the memory bound the oldest snapshots go, the start of
// history moves on, and what is left still replays exactly.
func TestLimit(t *testing.T) {
	pr := programs(t)[0]
	pr.args = []string{"20"}
	var out bytes.Buffer
	m := load(t, pr, &out)
	h, err := New(m)
	require.NoError(t, err)
	h.Interval, h.Limit = 2000, 1 // every snapshot holds more than a byte
	m.Kernel = recorder{h: h, inner: linux.Of(m)}
	for Clock(m) < 40000 {
		h.Mark()
		require.Nil(t, runFor(t, h, m, h.UntilMark()))
	}
	want := look(m)
	c := Clock(m)
	require.Equal(t, 1, h.Snapshots())
	require.Greater(t, h.Start(), uint64(0))
	require.NoError(t, h.Seek(h.Start(), nil))
	require.Error(t, h.Seek(h.Start()-1, nil))
	require.NoError(t, h.Seek(c, func(*cpu.Machine) error { return nil }))
	require.Equal(t, want, look(m))
}

// TestDrop: a dropped history refuses to go back and says why.
func TestDrop(t *testing.T) {
	pr := programs(t)[0]
	var out bytes.Buffer
	m := load(t, pr, &out)
	h, err := New(m)
	require.NoError(t, err)
	h.Mark()
	_, err = m.RunFor(100)
	require.NoError(t, err)
	h.Drop("two threads")
	require.EqualError(t, h.Seek(10, nil), "two threads")
	_, _, err = h.ScanBack(50, func(*cpu.Machine) bool { return true })
	require.EqualError(t, err, "two threads")
	h.Resume()
	h.Mark()
	require.Equal(t, Clock(m), h.Start())
}

// TestLogBound: a program that makes many syscalls between two
// snapshots gets one early, so the bound holds for the log too.
func TestLogBound(t *testing.T) {
	pr := program{path: "../../programs/threads/bin/aarch64-thr-O2/prodcons"}
	var out bytes.Buffer
	m := load(t, pr, &out)
	h, err := New(m)
	require.NoError(t, err)
	h.Interval = 1 << 40 // no snapshot for the interval
	h.Limit = 64 << 10
	m.Kernel = recorder{h: h, inner: linux.Of(m)}
	for !m.Exited() && m.Syscalls < 10000 {
		h.Mark()
		runFor(t, h, m, h.UntilMark())
	}
	// 10000 syscalls log about 5 MiB: snapshots were taken for the
	// log's size, and the old ones dropped with their log.
	require.Greater(t, h.Start(), uint64(0))
	require.Less(t, h.Held(), uint64(1<<20))
}
