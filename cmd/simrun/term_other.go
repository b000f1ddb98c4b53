//go:build !linux

package main

import (
	"io"
	"os"
)

// isTerminal reports whether w is a character device (a terminal, most
// likely), where a progress line makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
