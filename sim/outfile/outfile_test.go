//go:build linux

package outfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// temps lists the temporary files left in dir.
func tempsIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			names = append(names, e.Name())
		}
	}
	return names
}

func write(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(text), 0o640))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestReplaceKinds: each kind of target is written its way and stays
// what it was.
func TestReplaceKinds(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	write(t, old, "old contents, longer than the new ones")
	real := filepath.Join(dir, "real")
	write(t, real, "old")
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("real", link))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink("made", dangling))
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))

	got := make(chan string)
	go func() { // the FIFO's reader
		b, err := os.ReadFile(fifo)
		assert.NoError(t, err)
		got <- string(b)
	}()
	var stdout bytes.Buffer
	s := &Set{Stdout: &stdout}
	paths := []string{old, link, dangling, fifo, "-", filepath.Join(dir, "new"), os.DevNull}
	for _, p := range paths {
		f, err := s.Add(p)
		require.NoError(t, err, p)
		_, err = io.WriteString(f, "new "+filepath.Base(p))
		require.NoError(t, err)
	}
	require.NoError(t, s.Commit())

	assert.Equal(t, "new old", read(t, old))
	fi, err := os.Stat(old)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the replaced file's mode is kept")
	assert.Equal(t, "new link", read(t, real), "the link's target is replaced")
	target, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, "real", target, "the link stays")
	assert.Equal(t, "new dangling", read(t, filepath.Join(dir, "made")), "a dangling link's target is made")
	assert.Equal(t, "new fifo", <-got)
	fi, err = os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeNamedPipe, "the FIFO stays a FIFO")
	assert.Equal(t, "new -", stdout.String())
	assert.Equal(t, "new new", read(t, filepath.Join(dir, "new")))
	fi, err = os.Stat(os.DevNull)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeCharDevice)
	assert.Empty(t, tempsIn(t, dir))
}

// TestAddRefuses: every mistake is found by Add, before anything is
// written, with a message naming the output.
func TestAddRefuses(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	write(t, prog, "program")
	hard := filepath.Join(dir, "hard")
	require.NoError(t, os.Link(prog, hard))
	progLink := filepath.Join(dir, "proglink")
	require.NoError(t, os.Symlink("prog", progLink))
	file := filepath.Join(dir, "file")
	write(t, file, "x")
	sock := filepath.Join(dir, "sock")
	require.NoError(t, bindSocket(sock))
	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink("loop", loop))

	for _, c := range []struct {
		name     string
		outputs  []string // the last one is refused
		conflict bool
		want     string
	}{
		{"the program", []string{prog}, true, "cannot write " + prog + ": it is the program " + prog},
		{"the program by another path", []string{dir + "/./prog"}, true, "it is the program"},
		{"a hard link to the program", []string{hard}, true, "cannot write " + hard + ": it is the program " + prog},
		{"a symlink to the program", []string{progLink}, true, "it is the program"},
		{"two outputs", []string{filepath.Join(dir, "x"), filepath.Join(dir, "x")}, true, "it is also the output"},
		{"two new outputs by two paths", []string{filepath.Join(dir, "x"), dir + "/../" + filepath.Base(dir) + "/x"}, true, "it is also the output"},
		{"stdout twice", []string{"-", "-"}, true, "it is also the output -"},
		{"missing directory", []string{filepath.Join(dir, "missing", "x")}, false, "cannot write " + filepath.Join(dir, "missing", "x") + ": no such file or directory"},
		{"under a file", []string{filepath.Join(file, "x")}, false, "not a directory"},
		{"a directory", []string{dir}, false, "cannot write " + dir + ": is a directory"},
		{"a socket", []string{sock}, false, "not a regular file, FIFO or character device (a socket)"},
		{"a link loop", []string{loop}, false, "too many levels of symbolic links"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Set{Stdout: io.Discard}
			require.NoError(t, s.Input(prog, "the program"))
			defer s.Abort()
			var err error
			for _, o := range c.outputs {
				if _, err = s.Add(o); err != nil {
					break
				}
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, c.conflict, errors.Is(err, ErrConflict), "%v", err)
			assert.Equal(t, "program", read(t, prog))
		})
	}

	// An input declared after the output is found as well.
	s := &Set{}
	_, err := s.Add(hard)
	require.NoError(t, err)
	assert.ErrorIs(t, s.Input(prog, "the program"), ErrConflict)
	s.Abort()
	// "-" with no Stdout.
	_, err = (&Set{}).Add("-")
	assert.ErrorContains(t, err, "standard output is not free here")
	assert.Empty(t, tempsIn(t, dir))
}

// TestUnwritableDirectory: a directory this process may not write is
// refused by Add (root may write anywhere: then nothing to check).
func TestUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any directory")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dir, 0o555))
	_, err := (&Set{}).Add(filepath.Join(dir, "x"))
	assert.ErrorContains(t, err, "permission denied")
}

// TestAllOrNothing: when one output fails, no regular target changes
// and no temporary file is left.
func TestAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, a, "old a")
	full := fullDevice(t, dir)

	s := &Set{}
	fa, err := s.Add(a)
	require.NoError(t, err)
	fb, err := s.Add(b)
	require.NoError(t, err)
	ff, err := s.Add(full)
	require.NoError(t, err)
	big := bytes.Repeat([]byte("x"), 100<<10) // past the buffer: the temporary files exist
	for _, f := range []*File{fa, fb} {
		_, err = f.Write(big)
		require.NoError(t, err)
	}
	assert.Len(t, tempsIn(t, dir), 2)
	_, err = ff.Write([]byte("y"))
	require.NoError(t, err) // buffered
	err = s.Commit()
	require.Error(t, err)
	assert.Contains(t, err.Error(), full+": no space left on device")
	assert.Equal(t, "old a", read(t, a))
	assert.NoFileExists(t, b)
	assert.Empty(t, tempsIn(t, dir))
	fi, err := os.Stat(full)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeCharDevice, "the device stays")

	// Abort without Commit; RemoveTemps: same.
	s = &Set{}
	fa, err = s.Add(a)
	require.NoError(t, err)
	_, err = fa.Write(big)
	require.NoError(t, err)
	assert.Len(t, tempsIn(t, dir), 1)
	s.Abort()
	assert.Empty(t, tempsIn(t, dir))
	assert.Equal(t, "old a", read(t, a))
	_, err = fa.Write(big)
	assert.ErrorContains(t, err, "after the outputs were committed or aborted")
}

// TestRemoveTemps: the signal handler's clean-up removes what is
// pending and stops new temporary files. (It runs last: it stops the
// package for the rest of the process.)
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	s := &Set{}
	f, err := s.Add(filepath.Join(dir, "x"))
	require.NoError(t, err)
	_, err = f.Write(bytes.Repeat([]byte("x"), 100<<10))
	require.NoError(t, err)
	assert.Len(t, tempsIn(t, dir), 1)
	assert.Equal(t, 1, RemoveTemps())
	assert.Empty(t, tempsIn(t, dir))
	err = s.Commit()
	assert.Error(t, err)
	assert.NoFileExists(t, filepath.Join(dir, "x"))
	s = &Set{}
	f, err = s.Add(filepath.Join(dir, "y"))
	require.NoError(t, err)
	_, err = f.Write(bytes.Repeat([]byte("x"), 100<<10))
	assert.ErrorIs(t, err, errStopped)
	assert.Empty(t, tempsIn(t, dir))
	temps.Lock()
	temps.stopped = false
	temps.Unlock()
}

// bindSocket makes a Unix socket at path.
func bindSocket(path string) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Bind(fd, &syscall.SockaddrUnix{Name: path})
}

// fullDevice is a /dev/full (character device 1:7, every write fails
// with ENOSPC): a node of its own in dir when root may make one, which
// a bug could replace without harm; else /dev/full itself, which only
// root could replace.
func fullDevice(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() == 0 {
		p := filepath.Join(dir, "full")
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|7); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	return "/dev/full"
}
