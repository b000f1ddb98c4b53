// Package infile checks an input file before a command reads it whole:
// it must be a regular file (not /dev/zero, a FIFO or a directory), no
// larger than the format's bound, and begin with the format's magic. Each
// problem is one line naming the file, so a bad input costs a message,
// not the host's memory.
package infile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Format is what an input must look like.
type Format struct {
	Name  string // "an ELF file", for the messages
	Magic string // the bytes the file begins with ("" = any)
	Max   int64  // the largest size read whole (> 0)
}

// Check opens path and checks it against f without reading it whole.
func Check(path string, f Format) error {
	fh, size, err := open(path, f)
	if err != nil {
		return err
	}
	defer fh.Close()
	if f.Magic == "" {
		return nil
	}
	head := make([]byte, len(f.Magic))
	n, err := io.ReadFull(fh, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", path, unwrap(err))
	}
	return magic(path, f, head[:n], size)
}

// Read checks path against f and returns its contents.
func Read(path string, f Format) ([]byte, error) {
	fh, size, err := open(path, f)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	// The size is from fstat of the open file; a file that grows while
	// it is read is cut at the bound, not followed.
	data := make([]byte, 0, size+1) // +1: room to see the end
	data, err = readAll(fh, data, f.Max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	if int64(len(data)) > f.Max {
		return nil, tooLarge(path, f, int64(len(data)))
	}
	if f.Magic != "" {
		if err := magic(path, f, data[:min(len(data), len(f.Magic))], int64(len(data))); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// readAll reads r to its end or to max+1 bytes.
func readAll(r io.Reader, data []byte, max int64) ([]byte, error) {
	lr := io.LimitReader(r, max+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := lr.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// open opens path and checks its type and size on the open file.
func open(path string, f Format) (*os.File, int64, error) {
	// Stat first: opening a FIFO to read would wait for a writer.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	if err := regular(path, fi, f); err != nil {
		return nil, 0, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	// Again on the open file: it is what is read.
	fi, err = fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, unwrap(err))
	}
	if err := regular(path, fi, f); err != nil {
		fh.Close()
		return nil, 0, err
	}
	return fh, fi.Size(), nil
}

// regular checks what fi is: a regular file within the bound.
func regular(path string, fi fs.FileInfo, f Format) error {
	m := fi.Mode()
	switch {
	case m.IsDir():
		return fmt.Errorf("%s: is a directory, not %s", path, f.Name)
	case m&fs.ModeCharDevice != 0:
		return fmt.Errorf("%s: is a character device, not %s", path, f.Name)
	case m&fs.ModeDevice != 0:
		return fmt.Errorf("%s: is a block device, not %s", path, f.Name)
	case m&fs.ModeNamedPipe != 0:
		return fmt.Errorf("%s: is a FIFO, not %s (it is read whole: give a regular file)", path, f.Name)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s: is a socket, not %s", path, f.Name)
	case !m.IsRegular():
		return fmt.Errorf("%s: is not a regular file (%s)", path, m)
	case fi.Size() == 0:
		return fmt.Errorf("%s: is empty, not %s", path, f.Name)
	case fi.Size() > f.Max:
		return tooLarge(path, f, fi.Size())
	}
	return nil
}

func tooLarge(path string, f Format, size int64) error {
	return fmt.Errorf("%s: %s is too large for %s (at most %s)", path, bytesText(size), f.Name, bytesText(f.Max))
}

// magic checks the first bytes of a file of size bytes.
func magic(path string, f Format, head []byte, size int64) error {
	if len(head) < len(f.Magic) {
		return fmt.Errorf("%s: %d bytes is too short for %s (truncated?)", path, size, f.Name)
	}
	if !bytes.Equal(head, []byte(f.Magic)) {
		return fmt.Errorf("%s: not %s (it begins % x, not % x)", path, f.Name, head, f.Magic)
	}
	return nil
}

// bytesText writes a size in the largest binary unit that divides it
// into at least 1.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[i-1])
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
