package linux

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
)

// The package's runs on several CPUs check every calm scheduling
// decision against the full one (calmDecision).
func init() { os.Setenv("SIMRUN_CHECK_SCHED", "1") }

// coresProcess is testProcess with Config.CPUs n.
func coresProcess(t *testing.T, arch string, n int) (*Process, uint64) {
	t.Helper()
	config := map[string]string{"arm64": "aarch64-O2", "s390x": "s390x-O2"}[arch]
	b, err := programs.Find(config, "hello")
	require.NoError(t, err)
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	p, err := NewProcess(b.Path, data, Config{Stdin: strings.NewReader(""), CPUs: n})
	require.NoError(t, err)
	scratch := sysMmap(p, [6]uint64{0, 1 << 16, protRead | protWrite, mapPrivate | mapAnonymous, ^uint64(0), 0})
	require.Less(t, scratch, uint64(1)<<48, "mmap failed: %d", int64(scratch))
	return p, scratch
}

// TestCPUsBounds: Config.CPUs outside 1..MaxCPUs is refused with an
// error that says the range; 0 is one CPU.
func TestCPUsBounds(t *testing.T) {
	b, err := programs.Find("aarch64-O2", "hello")
	require.NoError(t, err)
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	for _, n := range []int{-1, MaxCPUs + 1, 100000} {
		_, err := NewProcess(b.Path, data, Config{CPUs: n})
		require.ErrorContains(t, err, "1 to 64", "CPUs %d", n)
	}
	p, err := NewProcess(b.Path, data, Config{})
	require.NoError(t, err)
	require.Equal(t, 1, p.sys.cpus)
}

// TestSeveralCPUs: with four CPUs, sched_getaffinity reports them,
// threads are placed on core (tid-1000) mod 4, getcpu names the running
// thread's core, sched_setaffinity with a mask naming no present CPU is
// EINVAL (as Linux's), and one that leaves the thread's core out moves
// it to the next allowed core.
func TestSeveralCPUs(t *testing.T) {
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p, buf := coresProcess(t, arch, 4)
			o := p.order()
			require.Equal(t, uint64(8), call(t, p, "sched_getaffinity", 0, 8, buf))
			require.Equal(t, uint64(0xf), o.Uint64(guestBytes(t, p, buf, 8)), "CPUs 0-3")

			getcpu := func() uint64 {
				require.True(t, p.Mem.Store(buf+8, 4, 99, o))
				require.Equal(t, uint64(0), call(t, p, "getcpu", buf+8, 0, 0))
				v, _ := p.Mem.Load(buf+8, 4, o)
				return v
			}
			require.Equal(t, uint64(0), getcpu())

			var tids []uint64
			for range 5 {
				tids = append(tids, dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...))
			}
			for i, tid := range tids {
				core, ok := p.CoreOf(tid)
				require.True(t, ok)
				require.Equal(t, (i+1)%4, core, "thread %d", tid)
			}

			for _, bad := range []uint64{0, 0xf0, 1 << 63} {
				require.True(t, p.Mem.Store(buf, 8, bad, o))
				require.Equal(t, errno(EINVAL), call(t, p, "sched_setaffinity", 0, 8, buf), "mask %#x", bad)
			}
			// thread tids[0], on core 1, restricted to CPUs 2 and 3
			// (and an absent 5): it moves to core 2
			require.True(t, p.Mem.Store(buf, 8, 0x2c, o))
			require.Equal(t, uint64(0), call(t, p, "sched_setaffinity", tids[0], 8, buf))
			core, _ := p.CoreOf(tids[0])
			require.Equal(t, 2, core)
			require.Equal(t, uint64(8), call(t, p, "sched_getaffinity", tids[0], 8, buf))
			require.Equal(t, uint64(0xc), o.Uint64(guestBytes(t, p, buf, 8)), "the absent CPU dropped")
			// a thread it creates inherits the mask
			require.True(t, p.Mem.Store(buf, 8, 0x8, o))
			require.Equal(t, uint64(0), call(t, p, "sched_setaffinity", 0, 8, buf))
			require.True(t, p.resched, "the running thread leaves core 0 at the next scheduling point")
			tid := dispatch(t, p, "clone", threadCloneArgs(arch, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
			core, _ = p.CoreOf(tid)
			require.Equal(t, 3, core, "tid %d would go to core %d; the inherited mask allows only 3", tid, (tid-guestPID)%4)

			// the running thread, after a scheduling point, runs on core 3
			for p.cur.tid != guestPID {
				dispatch(t, p, "sched_yield")
			}
			require.Equal(t, uint64(3), getcpu())
		})
	}
}

// requireSysCPU checks /sys/devices/system/cpu: online, possible and
// present say list, the directory holds the cpuN, and any other
// path below it gives ENOENT.
func requireSysCPU(t *testing.T, p *Process, list string, cpus ...string) {
	t.Helper()
	for _, name := range []string{"online", "possible", "present"} {
		f, e, ok := p.openSpecial(sysCPUDir+"/"+name, oRdonly)
		require.True(t, ok)
		require.Zero(t, e)
		require.Equal(t, list+"\n", string(f.data), name)
	}
	f, e, ok := p.openSpecial(sysCPUDir, oRdonly)
	require.True(t, ok)
	require.Zero(t, e)
	var names []string
	for _, d := range f.list() {
		names = append(names, d.name)
	}
	require.Equal(t, append(cpus, "offline", "online", "possible", "present"), names)
	for _, c := range cpus {
		_, e, _ := p.openSpecial(sysCPUDir+"/"+c, oRdonly)
		require.Zero(t, e, c)
	}
	for _, bad := range []string{"cpu" + strconv.Itoa(len(cpus)), "cpu01", "cpu0/topology/core_id", "kernel_max", "cpufreq"} {
		_, e, ok := p.openSpecial(sysCPUDir+"/"+bad, oRdonly)
		require.True(t, ok, bad)
		require.Equal(t, errno(ENOENT), e, bad)
	}
}

func TestCPUList(t *testing.T) {
	for mask, want := range map[uint64]string{1: "0", 0xf: "0-3", 0xd: "0,2-3", 1 << 63: "63", ^uint64(0): "0-63", 0x2a: "1,3,5"} {
		require.Equal(t, want, cpuList(mask), "%#x", mask)
	}
}

// TestCPUsProcFiles: /proc/cpuinfo, /proc/stat and
// /sys/devices/system/cpu list one CPU, and N with Config.CPUs N;
// cpuinfo's features are HWCAP's and its arm64 CPU fields MIDR_EL1's.
func TestCPUsProcFiles(t *testing.T) {
	want1 := map[string]string{
		"s390x": "vendor_id       : IBM/S390\n# processors    : 1\nbogomips per cpu: 13370.00\nmax thread id   : 0\nfeatures\t: esan3 zarch ldisp eimm highgprs vx\nprocessor 0: version = 00,  identification = 000000,  machine = 2964\n\ncpu number      : 0\ncpu MHz dynamic : 5000\ncpu MHz static  : 5000\n",
		"arm64": "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd aes pmull sha1 sha2 crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n",
	}
	for _, arch := range []string{"arm64", "s390x"} {
		p, _ := coresProcess(t, arch, 1)
		require.Equal(t, want1[arch], string(p.Arch.CPUInfo(p.sys.cpus)))
		requireSysCPU(t, p, "0", "cpu0")
		require.Equal(t, "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\nbtime 1767225600\nprocesses 1\nprocs_running 1\n", string(p.procMisc("/proc/stat")))
		p, _ = coresProcess(t, arch, 3)
		info := string(p.Arch.CPUInfo(p.sys.cpus))
		requireSysCPU(t, p, "0-2", "cpu0", "cpu1", "cpu2")
		stat := string(p.procMisc("/proc/stat"))
		for _, s := range []string{"cpu2 ", "cpu1 ", "cpu0 "} {
			require.Contains(t, stat, s)
		}
		if arch == "arm64" {
			require.Equal(t, 3, strings.Count(info, "processor\t: "), info)
		} else {
			require.Contains(t, info, "# processors    : 3\n")
			require.Contains(t, info, "processor 2: version")
			require.Contains(t, info, "cpu number      : 2\n")
		}
	}
}
