package linux

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
)

// limitProcess is the bundled hello program of arch (not run) under a
// guest memory limit.
func limitProcess(t *testing.T, arch string, limit uint64) *Process {
	t.Helper()
	config := map[string]string{"arm64": "aarch64-O2", "s390x": "s390x-O2"}[arch]
	b, err := programs.Find(config, "hello")
	require.NoError(t, err)
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	p, err := NewProcess(b.Path, data, Config{Stdin: strings.NewReader(""), MaxMemory: limit})
	require.NoError(t, err)
	return p
}

// Past --max-memory, mmap, brk and mremap answer ENOMEM (Linux under
// its overcommit heuristic or RLIMIT_AS) and the process goes on.
func TestMaxMemoryENOMEM(t *testing.T) {
	const limit = 16 << 20
	for _, arch := range []string{"arm64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			p := limitProcess(t, arch, limit)
			rw, anon := uint64(protRead|protWrite), uint64(mapPrivate|mapAnonymous)
			mmap := func(size, prot uint64) uint64 {
				return sysMmap(p, [6]uint64{0, size, prot, anon, ^uint64(0), 0})
			}
			assert.Equal(t, errno(ENOMEM), mmap(16<<20, rw), "more than the limit")
			// Address space that cannot be written costs its bookkeeping only.
			none := mmap(1<<30, 0)
			assert.Less(t, none, uint64(1)<<48, "a 1 GiB PROT_NONE reservation: %d", int64(none))
			small := mmap(1<<20, rw)
			require.Less(t, small, uint64(1)<<48)
			assert.Equal(t, errno(ENOMEM), call(t, p, "mremap", small, 1<<20, 64<<20, 1 /* MAYMOVE */), "mremap past the limit")
			brk := call(t, p, "brk", 0)
			assert.Equal(t, brk, call(t, p, "brk", brk+32<<20), "brk past the limit stays")
			assert.Equal(t, brk+1<<20, call(t, p, "brk", brk+1<<20), "brk within it grows")
			assert.LessOrEqual(t, p.Mem.Used(), uint64(limit))
		})
	}
}

// A syscall that copies into guest memory past the limit ends the
// process as the out-of-memory killer would (SIGKILL, status 137).
func TestMaxMemoryReadKills(t *testing.T) {
	p := limitProcess(t, "arm64", 0)
	limit := (p.Mem.Used() + 5<<20) &^ cpu.PageMask
	p.Mem.SetLimit(limit)
	anon := uint64(mapPrivate | mapAnonymous)
	// Two mappings that fit one at a time, 3 MiB each; the first is
	// written whole, then a read of a file fills the second.
	a := call(t, p, "mmap", 0, 3<<20, protRead|protWrite, anon, ^uint64(0), 0)
	b := call(t, p, "mmap", 0, 3<<20, protRead|protWrite, anon, ^uint64(0), 0)
	require.Less(t, a, uint64(1)<<48)
	require.Less(t, b, uint64(1)<<48)
	for off := uint64(0); off < 3<<20; off += cpu.PageSize {
		require.True(t, p.Mem.Store8(a+off, 1))
	}
	dir := t.TempDir()
	path := putString(t, p, a, dir+"/zeros")
	require.NoError(t, os.WriteFile(dir+"/zeros", make([]byte, 3<<20), 0o644))
	fd := call(t, p, "openat", atFDCWD, path, 0, 0)
	require.Less(t, fd, uint64(100))
	regs := p.Core.(cpu.GPRWriter)
	for i, v := range []uint64{fd, b, 3 << 20} {
		regs.SetGPR(i, v)
	}
	regs.SetGPR(8, 63) // arm64 read
	p.Syscall(p.Machine)
	require.True(t, p.Exited())
	exit, err := p.Run()
	require.NoError(t, err)
	require.NotNil(t, exit.Fault)
	assert.Equal(t, cpu.FaultOutOfMemory, exit.Fault.Kind)
	assert.Equal(t, 137, exit.Status)
	assert.Contains(t, exit.Fault.Error(), "read needed a new page past the guest memory limit of "+cpu.FormatSize(limit))
	assert.LessOrEqual(t, p.Mem.Used(), limit)
}
