package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	"simrun/sim/unwind"
	"simrun/sim/unwind/sframe"
)

func TestSFrameCommand(t *testing.T) {
	b, err := programs.Find("s390x-O2", "leaffpr")
	require.NoError(t, err)

	st, out, errs := run(t, "sframe", b.Path)
	require.Equal(t, 0, st, errs)
	assert.True(t, strings.HasPrefix(out, "\n"+b.Path+":     file format elf64-s390\n\nContents of the SFrame section .sframe:\n  Header :\n"), out)
	assert.Contains(t, out, "Version: SFRAME_VERSION_3")
	assert.Contains(t, out, "SFRAME_F_FDE_SORTED")
	assert.Equal(t, "simrun sframe: "+b.Path+" has no .sframe section: this one is emitted from its .eh_frame, as gas --gsframe would\n", errs)
	_, _, errs = run(t, "sframe", "--emit", b.Path)
	assert.Empty(t, errs, "asked for")

	st, out, _ = run(t, "sframe", "--sframe-version", "2", b.Path)
	require.Equal(t, 0, st)
	assert.Contains(t, out, "Version: SFRAME_VERSION_2")

	// -o writes the section; decoding it gives what was printed.
	raw := filepath.Join(t.TempDir(), "leaffpr.sframe")
	st, out, errs = run(t, "sframe", "-o", raw, b.Path)
	require.Equal(t, 0, st, errs)
	assert.Empty(t, out)
	data, err := os.ReadFile(raw)
	require.NoError(t, err)
	s, err := sframe.Decode(data)
	require.NoError(t, err)
	obj, err := unwind.Open(b.Path)
	require.NoError(t, err)
	e, err := obj.EmitSFrame(3, 0)
	require.NoError(t, err)
	assert.Equal(t, len(e.Section.FDEs), len(s.FDEs))

	// A raw section prints without the file header.
	st, out, errs = run(t, "sframe", raw)
	require.Equal(t, 0, st, errs)
	assert.True(t, strings.HasPrefix(out, "Contents of the SFrame section .sframe:"), out)

	// Bad input: clear errors, status 1; bad flags: status 2.
	bad := append([]byte(nil), data...)
	bad[2] = 9
	badPath := writeFile(t, "bad.sframe", bad)
	st, _, errs = run(t, "sframe", badPath)
	assert.Equal(t, 1, st)
	assert.Contains(t, errs, "SFrame decode failure: offset 0x2: sfp_version: version 9 is not supported")
	st, _, errs = run(t, "sframe", "--sframe-version", "4", b.Path)
	assert.Equal(t, 2, st)
	assert.Contains(t, errs, "--sframe-version 4: want 2 or 3")
	st, _, _ = run(t, "sframe")
	assert.Equal(t, 2, st)
	st, _, errs = run(t, "sframe", filepath.Join(t.TempDir(), "missing"))
	assert.Equal(t, 1, st)
	assert.Contains(t, errs, "no such file")
	st, out, _ = run(t, "help", "sframe")
	assert.Equal(t, 0, st, out)
}

// TestSFrameAllObjects: --all-objects dumps the program's section, then
// its interpreter's and each library's, in the order the loader mapped
// them, each exactly as sframe dumps that file alone.
func TestSFrameAllObjects(t *testing.T) {
	for _, b := range programs.DynamicBinaries("") {
		if b.Name != "printf" {
			continue
		}
		t.Run(b.Config.Arch, func(t *testing.T) {
			sysroot := linux.DefaultSysroot(cpu.ArchByName(b.Config.Arch))
			if _, err := os.Stat(sysroot); err != nil {
				t.Skipf("no %s cross libc (Debian's libc6-dev-*-cross) to load the program with", b.Config.Arch)
			}
			st, out, errs := run(t, "sframe", "--all-objects", b.Path)
			require.Equal(t, 0, st, errs)
			var want strings.Builder
			var files []string
			for _, line := range strings.Split(out, "\n") {
				if path, _, ok := strings.Cut(line, ":     file format "); ok {
					files = append(files, path)
				}
			}
			require.Len(t, files, 3, out)
			assert.Equal(t, b.Path, files[0])
			assert.Contains(t, files[1], filepath.Join(sysroot, "lib", "ld"))
			assert.Equal(t, filepath.Join(sysroot, "lib", "libc.so.6"), files[2])
			for _, f := range files {
				st, o, e := run(t, "sframe", f)
				require.Equal(t, 0, st, e)
				want.WriteString(o)
			}
			assert.Equal(t, want.String(), out)
		})
	}
	// A static program is its only object.
	b, err := programs.Find("aarch64-O2", "fib")
	require.NoError(t, err)
	st, all, errs := run(t, "sframe", "--all-objects", b.Path)
	require.Equal(t, 0, st, errs)
	_, one, _ := run(t, "sframe", b.Path)
	assert.Equal(t, one, all)
	// -o writes one section.
	st, _, errs = run(t, "sframe", "--all-objects", "-o", filepath.Join(t.TempDir(), "x"), b.Path)
	assert.Equal(t, 2, st)
	assert.Contains(t, errs, "not with --all-objects")
}
