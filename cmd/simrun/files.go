package main

import (
	"errors"
	"fmt"
	"io"

	"simrun/sim/infile"
	"simrun/sim/outfile"
)

// What simrun reads whole, and the most it reads: every input is checked
// (a regular file, within the bound, with its magic) before it is read,
// so /dev/zero or a directory is a one-line error, not the host's memory.
var (
	// A guest program: the static ELF files simrun runs are a few MiB.
	elfInput = infile.Format{Name: "an ELF file", Magic: "\x7fELF", Max: 512 << 20}
	// A simrun record perf.data (its magic is checked by the caller, whose
	// message says what the file is not).
	perfInput = infile.Format{Name: "a perf.data file", Max: 1 << 30}
	// simrun sframe's FILE: an ELF file or a raw SFrame section.
	sframeInput = infile.Format{Name: "an ELF file or SFrame section", Max: 512 << 20}
	// simrun spe dump's FILE: a perf.data file or a raw SPE byte stream.
	speInput = infile.Format{Name: "a perf.data file or SPE byte stream", Max: 1 << 30}
)

// outputError reports a problem with an output of command cmd: an output
// that is an input or another output is a usage error (status 2, the
// message printed here); anything else fails the command (status 1).
func outputError(stderr io.Writer, cmd string, err error) error {
	if errors.Is(err, outfile.ErrConflict) {
		fmt.Fprintf(stderr, "simrun %s: %v\n", cmd, err)
		return errUsage
	}
	return err
}

// input is a file a command reads, which no output may be.
type input struct{ path, what string }

// openOutputs checks every output of a command against its inputs and
// each other before anything runs, and returns them by path. stdout is
// where "-" writes (nil: "-" is refused, stdout being the guest's). The
// caller writes them, then commits the set, and aborts it on every
// path (deferred) so no temporary file outlives it.
func openOutputs(stdout io.Writer, inputs []input, paths ...string) (*outfile.Set, map[string]*outfile.File, error) {
	set := &outfile.Set{Stdout: stdout}
	for _, in := range inputs {
		if err := set.Input(in.path, in.what); err != nil {
			return nil, nil, err
		}
	}
	files := map[string]*outfile.File{}
	for _, p := range paths {
		f, err := set.Add(p)
		if err != nil {
			set.Abort()
			return nil, nil, err
		}
		files[p] = f
	}
	return set, files, nil
}
