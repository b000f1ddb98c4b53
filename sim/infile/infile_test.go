//go:build linux

package infile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testFormat = Format{Name: "a test file", Magic: "MAGIC", Max: 1 << 20}

// TestCheckAndRead: every kind of bad input is a one-line error naming
// the file and what is wrong with it; Check and Read agree.
func TestCheckAndRead(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	good := file("good", "MAGIC and the rest")
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(3<<30)) // sparse: costs no disk
	require.NoError(t, f.Close())
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("good", link))

	for _, c := range []struct {
		path string
		f    Format
		want string // "" = no error
	}{
		{good, testFormat, ""},
		{link, testFormat, ""},
		{good, Format{Name: "anything", Max: 100}, ""},
		{"/dev/zero", testFormat, "/dev/zero: is a character device, not a test file"},
		{dir, testFormat, dir + ": is a directory, not a test file"},
		{fifo, testFormat, fifo + ": is a FIFO, not a test file"},
		{huge, testFormat, huge + ": 3.0 GiB is too large for a test file (at most 1.0 MiB)"},
		{good, Format{Name: "a small file", Max: 10}, "18 bytes is too large for a small file (at most 10 bytes)"},
		{file("empty", ""), testFormat, "empty: is empty, not a test file"},
		{file("short", "MAG"), testFormat, "short: 3 bytes is too short for a test file (truncated?)"},
		{file("other", "#!/bin/sh\n"), testFormat, "other: not a test file (it begins 23 21 2f 62 69, not 4d 41 47 49 43)"},
		{filepath.Join(dir, "missing"), testFormat, "missing: no such file or directory"},
	} {
		checkErr := Check(c.path, c.f)
		data, readErr := Read(c.path, c.f)
		if c.want == "" {
			assert.NoError(t, checkErr, c.path)
			assert.NoError(t, readErr, c.path)
			assert.Equal(t, "MAGIC and the rest", string(data))
			continue
		}
		for _, err := range []error{checkErr, readErr} {
			if assert.Error(t, err, c.path) {
				assert.Contains(t, err.Error(), c.want)
				assert.True(t, strings.HasPrefix(err.Error(), c.path+": "), "names the file: %v", err)
				assert.NotContains(t, err.Error(), "\n")
			}
		}
		assert.Nil(t, data)
	}
}

// FuzzRead: any file content is read or refused, never more than the
// bound.
func FuzzRead(f *testing.F) {
	f.Add([]byte("MAGIC"), int64(10))
	f.Add([]byte(""), int64(1))
	f.Add([]byte("MAG"), int64(100))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content []byte, max int64) {
		if max <= 0 || max > 1<<20 {
			return
		}
		p := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(p, content, 0o644))
		data, err := Read(p, Format{Name: "x", Magic: "MAGIC", Max: max})
		ok := len(content) > 0 && int64(len(content)) <= max && strings.HasPrefix(string(content), "MAGIC")
		assert.Equal(t, ok, err == nil, "%v", err)
		if err == nil {
			assert.Equal(t, content, data)
		}
	})
}
