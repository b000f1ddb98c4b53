package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"simrun/sim/infile"
	"simrun/sim/profile"
	"simrun/sim/record"
	"simrun/sim/report"
)

const reportExamples = `simrun record -e arm_spe/ts_enable=1/ -c 1024 programs/bin/aarch64-O2/listchase
simrun report perf.data                      # writes report.html
simrun report -o - perf.data > listchase.html
simrun report --prog ./listchase --top 10 -o lc.html perf.data   # the program moved

The page is one file with no external assets: open it in any browser,
offline.  -o replaces a regular file whole (a symbolic link is followed and
kept) and writes a FIFO or character device in place.  Exit status: 0, 1 when
the file is not a simrun recording or the report cannot be written (nothing
is left half-written), 2 for a usage error (-o is the recording or the
program).
`

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "report [flags] [perf.data]", indent(reportExamples), stderr)
	out := fs.String("o", "report.html", "write the HTML report to `FILE` (- for stdout)")
	prog := fs.String("prog", "", "the recorded program's ELF `FILE` (default: the path the recording names)")
	top := fs.Int("top", 10, "annotate the `N` most sampled functions with source, disassembly and SFrame rows")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	in := "perf.data"
	switch fs.NArg() {
	case 0:
	case 1:
		in = fs.Arg(0)
	default:
		fmt.Fprintln(stderr, "simrun report: give one recording")
		fs.Usage()
		return errUsage
	}
	if *top < 1 {
		fmt.Fprintln(stderr, "simrun report: --top must be at least 1")
		return errUsage
	}
	data, err := infile.Read(in, perfInput)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(data, []byte("PERFILE2")) {
		return fmt.Errorf("%s: %w (no PERFILE2 magic)", in, profile.ErrNotSimrun)
	}
	sum, err := profile.RecordingSummary(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	path := sum.Program
	if *prog != "" {
		path = *prog
	}
	code, err := infile.Read(path, elfInput)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && *prog == "" {
			return fmt.Errorf("%s: the recorded program %s is gone (give its copy with --prog)", in, path)
		}
		return err
	}
	// The page goes to -o when it is whole; -o is checked first, so a
	// mistake costs no report.
	set, files, err := openOutputs(stdout, []input{{in, "the recording"}, {path, "the program"}}, *out)
	if err != nil {
		return outputError(stderr, "report", err)
	}
	defer set.Abort()
	bin, err := profile.NewBinary(path, code, uint64(sum.Bias))
	if err != nil {
		return err
	}
	if bin.Arch != nil && sum.Arch != "" && bin.Arch.Name != sum.Arch {
		return fmt.Errorf("%s: the program is for %s, the recording %s for %s", path, bin.Arch.Name, in, sum.Arch)
	}
	for _, w := range bin.Warnings {
		fmt.Fprintf(stderr, "simrun report: warning: %s\n", w)
	}
	bin.Shared = record.OpenObjects(sum.Objects) // the shared objects, where they still are
	rec, err := profile.ReadRecording(data, bin)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var page bytes.Buffer
	if err := report.Write(&page, rec, bin, report.Options{HotFuncs: *top, Program: code}); err != nil {
		return err
	}
	if _, err := files[*out].Write(page.Bytes()); err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	if *out == "-" {
		return nil
	}
	fmt.Fprintf(stderr, "[ simrun report: wrote %s: %d samples, %d functions ]\n", *out, len(rec.Samples), len(report.Funcs(rec.Samples)))
	return nil
}
