package unwind

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/unwind/abi"
)

// TestObjectsTracerBadObjects: a mapping whose file is missing, not ELF,
// of another machine or without unwinding data stops the walk there with
// the reason in its report; nothing panics, and the object is read once.
func TestObjectsTracerBadObjects(t *testing.T) {
	a, err := abi.ForMachine(elf.EM_AARCH64, nil)
	require.NoError(t, err)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.so")
	require.NoError(t, os.WriteFile(junk, []byte("\x7fELF garbage"), 0o644))
	files := map[uint64]string{
		0x10000: filepath.Join(dir, "missing.so"),
		0x20000: junk,
	}
	if s390x, err := filepath.Glob("/usr/s390x-linux-gnu/lib/libc.so.6"); err == nil && len(s390x) == 1 {
		files[0x30000] = s390x[0]
	}
	asked := map[string]int{}
	resolve := ResolverFunc(func(addr uint64) (Mapped, bool) {
		base := addr &^ 0xffff
		p, ok := files[base]
		if ok {
			asked[p]++
		}
		return Mapped{Start: base, End: base + 0x10000, Path: p}, ok
	})
	for _, method := range []Method{MethodSFrame, MethodEHFrame} {
		tr, err := NewObjectsTracer(a, resolve, Options{Method: method})
		require.NoError(t, err)
		for base := range files {
			for _, pc := range []uint64{base + 0x100, base + 0x200} {
				var w Walk
				tr.WalkDetail(nil, pc, testRegs{int(a.SP): 0x7000, int(a.FP): 0x7100}, &w)
				assert.Equal(t, []uint64{pc}, w.PCs)
				assert.NotEqual(t, StopNone, w.Stop.Kind)
			}
		}
		var w Walk
		tr.Walk(nil, 0x90000, testRegs{int(a.SP): 0x7000}, &w)
		assert.Equal(t, StopNoData, w.Stop.Kind, "no object there")
	}
	for p, n := range asked {
		assert.LessOrEqual(t, n, 2, "%s looked up once per tracer", p)
	}
	_, err = NewObjectsTracer(a, resolve, Options{Method: MethodFP})
	assert.Error(t, err)
}

type testRegs map[int]uint64

func (r testRegs) Reg(n int) (uint64, bool) {
	v, ok := r[n]
	return v, ok
}

// TestObjectsShared: a second tracer over the same object (another
// process of the run, another recording) takes the tables the first one
// built: the file is read and its SFrame emitted once.
func TestObjectsShared(t *testing.T) {
	libc := "/usr/aarch64-linux-gnu/lib/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		t.Skipf("no arm64 cross libc: %v", err)
	}
	a, err := abi.ForMachine(elf.EM_AARCH64, nil)
	require.NoError(t, err)
	resolve := ResolverFunc(func(addr uint64) (Mapped, bool) {
		return Mapped{Start: 0x10000000, End: 0x20000000, Path: libc}, addr >= 0x10000000 && addr < 0x20000000
	})
	var datas []*objectData
	for range 2 {
		tr, err := NewObjectsTracer(a, resolve, Options{Method: MethodSFrame})
		require.NoError(t, err)
		var w Walk
		tr.Walk(cpu.NewMemory(), 0x10000000+0x27744, testRegs{int(a.SP): 0x7000}, &w)
		x := tr.src.(*objectsSource)
		require.Contains(t, x.objects, libc)
		datas = append(datas, x.objects[libc])
	}
	require.NotNil(t, datas[0].src, "libc has SFrame (emitted): %v", datas[0].err)
	assert.Same(t, datas[0], datas[1], "the second tracer shares the first one's tables")
}
