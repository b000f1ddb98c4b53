// Package outfile writes a command's output files, all of them the same
// way:
//
//   - a regular file (or a path that does not exist yet) is replaced
//     atomically: the bytes go to a temporary file in the target's own
//     directory, which is synced and then renamed over the target (the
//     discipline of github.com/google/renameio, on the std lib: a reader
//     sees the old file or the whole new one, never a part);
//   - a FIFO, a character device (/dev/null, /dev/full, a terminal) or
//     "-" (standard output) is written in place, as the bytes come;
//   - a symbolic link is followed to its target, which is replaced as
//     above; the link stays.
//
// A Set holds the outputs of one command and the inputs they must not
// be. Add checks an output before anything runs: its directory exists
// and is writable, it is not a directory, and it is neither an input nor
// another output (the same path, or the same file by os.SameFile).
// Commit renames every temporary file into place together, after all of
// them were written and synced; Abort, or any failure before Commit,
// leaves every regular target as it was. Temporary files are created
// only when the outputs are written, and RemoveTemps (for a signal
// handler) removes every one still pending in the process.
//
// Limits: a byte written to a stream cannot be taken back, so a stream
// gets its bytes even if a later output fails; and if a rename fails
// half-way through Commit (the directory removed meanwhile), the outputs
// renamed before it stay committed.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// ErrConflict is wrapped by the errors of outputs that are an input or
// another output: the command line is wrong (a usage error).
var ErrConflict = errors.New("output conflict")

// ConflictError is an output that is also an input or another output.
type ConflictError struct {
	Path  string // the output
	Other string // what it collides with: "the program PROG", "the output X"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("cannot write %s: it is %s", e.Path, e.Other)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Set is the outputs of one command.
type Set struct {
	// Stdout is where "-" writes; nil: "-" is refused (the command's
	// standard output is someone else's, such as the guest program's).
	Stdout io.Writer
	files  []*File
	inputs []endpoint
}

// endpoint is a file a Set knows: an input or an output.
type endpoint struct {
	what string      // "the program x", "the output y"
	key  string      // canonical path: the resolved directory joined with the name
	info os.FileInfo // nil: does not exist (yet)
}

type kind int

const (
	regular kind = iota // replaced by rename
	stream              // written in place
)

// File is one output of a Set; it is an io.Writer (buffered) until the
// Set commits or aborts.
type File struct {
	Path   string // as given
	set    *Set
	target string // the path written: symbolic links followed
	kind   kind
	mode   os.FileMode // of the replacement: the replaced file's, else 0644
	ep     endpoint

	buf    *bufio.Writer
	tmp    *os.File  // regular: the temporary file, once written
	out    io.Writer // stream: the open destination, once written
	closer io.Closer // stream: what to close (nil for the Set's Stdout)
	err    error     // the first write error
}

// maxLinks bounds symbolic link chains, as Linux's ELOOP does (40).
const maxLinks = 40

// resolve follows symbolic links from path to the file they name,
// which need not exist (a dangling link names the file to create).
func resolve(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// locate returns the canonical key of path (symbolic links followed,
// its directory's path resolved) and its FileInfo if it exists.
func locate(path string) (target, key string, info os.FileInfo, err error) {
	target, err = resolve(path)
	if err != nil {
		return "", "", nil, err
	}
	dir, name := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", nil, unwrap(err)
	}
	if realDir, err = filepath.Abs(realDir); err != nil {
		return "", "", nil, err
	}
	di, err := os.Stat(realDir)
	if err != nil {
		return "", "", nil, unwrap(err)
	}
	if !di.IsDir() {
		return "", "", nil, errors.New("not a directory")
	}
	key = filepath.Join(realDir, name)
	if name == "" || name == "." || name == ".." {
		return target, key, di, nil
	}
	info, err = os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return target, key, nil, nil
	}
	if err != nil {
		return "", "", nil, unwrap(err)
	}
	return target, key, info, nil
}

// unwrap drops the path from an *os.PathError: the caller names the file.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// same reports whether two endpoints are one file.
func same(a, b endpoint) bool {
	if a.key == b.key {
		return true
	}
	return a.info != nil && b.info != nil && os.SameFile(a.info, b.info)
}

// Input declares an input of the command (what: "the program", "the
// recording"), which no output may be. An input that does not exist is
// not an error here: reading it will say so.
func (s *Set) Input(path, what string) error {
	_, key, info, err := locate(path)
	if err != nil {
		return nil
	}
	in := endpoint{what: what + " " + path, key: key, info: info}
	for _, f := range s.files {
		if same(f.ep, in) {
			return &ConflictError{Path: f.Path, Other: in.what}
		}
	}
	s.inputs = append(s.inputs, in)
	return nil
}

// Add declares an output at path and checks that it can be written:
// an error says why not (wrapping ErrConflict when the output is an
// input or another output). Nothing is created until the File is
// written or the Set committed.
func (s *Set) Add(path string) (*File, error) {
	f := &File{Path: path, set: s, mode: 0o644}
	if path == "-" {
		if s.Stdout == nil {
			return nil, fmt.Errorf("cannot write -: standard output is not free here")
		}
		f.kind, f.ep = stream, endpoint{what: "the output -", key: "-"}
	} else {
		target, key, info, err := locate(path)
		if err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", path, err)
		}
		f.target, f.ep = target, endpoint{what: "the output " + path, key: key, info: info}
		if err := f.classify(info); err != nil {
			return nil, fmt.Errorf("cannot write %s: %w", path, err)
		}
	}
	for _, in := range s.inputs {
		if same(f.ep, in) {
			return nil, &ConflictError{Path: path, Other: in.what}
		}
	}
	for _, o := range s.files {
		if same(f.ep, o.ep) {
			return nil, &ConflictError{Path: path, Other: "also " + o.ep.what}
		}
	}
	f.buf = bufio.NewWriterSize(fileWriter{f}, 64<<10)
	s.files = append(s.files, f)
	return f, nil
}

// classify picks how an output is written from what is there now.
func (f *File) classify(info os.FileInfo) error {
	dir := filepath.Dir(f.target)
	switch {
	case info == nil: // a new file
		return writable(dir)
	case info.Mode().IsRegular():
		f.mode = info.Mode().Perm()
		return writable(dir)
	case info.IsDir():
		return errors.New("is a directory")
	case info.Mode()&fs.ModeNamedPipe != 0,
		info.Mode()&fs.ModeCharDevice != 0:
		f.kind = stream
		return writable(f.target)
	}
	return fmt.Errorf("not a regular file, FIFO or character device (%s)", describe(info.Mode()))
}

// describe names a file type.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "mode " + m.String()
}

// Write buffers p for the output.
func (f *File) Write(p []byte) (int, error) {
	if f.buf == nil {
		return 0, fmt.Errorf("%s: written after the outputs were committed or aborted", f.Path)
	}
	if f.err != nil {
		return 0, f.err
	}
	return f.buf.Write(p)
}

// fileWriter is what a File's buffer flushes into: the temporary file
// or the stream, opened at the first flush.
type fileWriter struct{ f *File }

func (w fileWriter) Write(p []byte) (int, error) {
	f := w.f
	if err := f.open(); err != nil {
		return 0, err
	}
	var n int
	var err error
	if f.kind == regular {
		n, err = f.tmp.Write(p)
	} else {
		n, err = f.out.Write(p)
	}
	if err != nil {
		f.err = fmt.Errorf("%s: %w", f.Path, unwrap(err))
		return n, f.err
	}
	return n, nil
}

// open creates the temporary file or opens the stream, once.
func (f *File) open() error {
	if f.err != nil {
		return f.err
	}
	if f.tmp != nil || f.out != nil {
		return nil
	}
	var err error
	switch {
	case f.kind == regular:
		f.tmp, err = createTemp(f.target)
	case f.Path == "-":
		f.out = f.set.Stdout
	default:
		var o *os.File
		// A FIFO blocks here until it has a reader, as for any writer.
		o, err = os.OpenFile(f.target, os.O_WRONLY, 0)
		if err == nil {
			f.out, f.closer = o, o
		}
	}
	if err != nil {
		f.err = fmt.Errorf("cannot write %s: %w", f.Path, unwrap(err))
	}
	return f.err
}

// Commit flushes every output, syncs and closes the temporary files,
// closes the streams and then renames the temporary files over their
// targets. On an error nothing more is renamed and every temporary file
// is removed. The Set is done either way.
func (s *Set) Commit() error {
	defer s.Abort()
	for _, f := range s.files {
		if err := f.buf.Flush(); err != nil {
			return err
		}
		if err := f.open(); err != nil { // an empty output still replaces its target
			return err
		}
	}
	for _, f := range s.files {
		if err := f.finish(); err != nil {
			return fmt.Errorf("%s: %w", f.Path, unwrap(err))
		}
	}
	dirs := map[string]bool{}
	for _, f := range s.files {
		if f.kind != regular {
			continue
		}
		if err := commitTemp(f.tmp.Name(), f.target); err != nil {
			return fmt.Errorf("cannot write %s: %w", f.Path, unwrap(err))
		}
		f.tmp = nil
		dirs[filepath.Dir(f.target)] = true
	}
	// The renames are durable once their directories are synced.
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("%s: %w", d, unwrap(err))
		}
	}
	return nil
}

// finish syncs and closes a temporary file (with its final mode), or
// closes a stream.
func (f *File) finish() error {
	if f.kind == stream {
		c := f.closer
		f.closer = nil
		if c != nil {
			return c.Close()
		}
		return nil
	}
	if err := f.tmp.Chmod(f.mode); err != nil {
		return err
	}
	if err := f.tmp.Sync(); err != nil {
		return err
	}
	return f.tmp.Close()
}

// Abort removes the temporary files not renamed yet and closes the
// streams; the Set is done. Abort after Commit does nothing.
func (s *Set) Abort() {
	for _, f := range s.files {
		if f.tmp != nil {
			f.tmp.Close()
			removeTemp(f.tmp.Name())
			f.tmp = nil
		}
		if f.closer != nil {
			f.closer.Close()
			f.closer = nil
		}
		f.buf = nil
	}
	s.files = nil
}

// The process's temporary files, for RemoveTemps.
var temps struct {
	sync.Mutex
	names   map[string]bool
	stopped bool // RemoveTemps ran: no more are created
}

var errStopped = errors.New("the process is stopping")

// createTemp creates a temporary file beside target, registered for
// RemoveTemps.
func createTemp(target string) (*os.File, error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	temps.Lock()
	defer temps.Unlock()
	if temps.stopped {
		return nil, errStopped
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return nil, err
	}
	if temps.names == nil {
		temps.names = map[string]bool{}
	}
	temps.names[f.Name()] = true
	return f, nil
}

// commitTemp renames a temporary file over its target.
func commitTemp(tmp, target string) error {
	temps.Lock()
	defer temps.Unlock()
	if temps.stopped {
		return errStopped
	}
	if err := os.Rename(tmp, target); err != nil {
		return err
	}
	delete(temps.names, tmp)
	return nil
}

func removeTemp(name string) {
	temps.Lock()
	defer temps.Unlock()
	if temps.names[name] {
		os.Remove(name)
		delete(temps.names, name)
	}
}

// RemoveTemps removes every temporary file of every Set of the process
// and makes later ones fail: what a signal handler calls before it
// exits. It returns how many it removed.
func RemoveTemps() int {
	temps.Lock()
	defer temps.Unlock()
	temps.stopped = true
	n := 0
	for name := range temps.names {
		if os.Remove(name) == nil {
			n++
		}
		delete(temps.names, name)
	}
	return n
}
