package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
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
