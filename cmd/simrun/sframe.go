package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"simrun/sim/infile"
	"simrun/sim/linux"
	"simrun/sim/outfile"
	"simrun/sim/unwind"
)

const sframeExamples = `simrun sframe prog.o                       # as objdump --sframe=.sframe prog.o
simrun sframe programs/bin/s390x-O2/fib    # no .sframe: emitted from .eh_frame
simrun sframe --emit --sframe-version 2 prog.o
simrun sframe -o fib.sframe programs/bin/aarch64-O2/fib
simrun sframe --vma 0x10000d0 section.bin  # a raw section (objcopy --dump-section)
`

func cmdSFrame(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("sframe", "sframe [flags] FILE\n  simrun sframe --all-objects [flags] PROGRAM [ARG...]", indent(sframeExamples), stderr)
	emit := fs.Bool("emit", false, "emit SFrame from .eh_frame even when FILE has a .sframe section")
	out := fs.String("o", "", "write the raw section bytes to `FILE` (- for stdout) instead of printing them")
	version := fs.Int("sframe-version", 3, "SFrame `version` to emit: 2 (binutils 2.45) or 3 (binutils 2.46)")
	name := fs.String("section", ".sframe", "`NAME` of the SFrame section")
	vmaText := fs.String("vma", "0", "section `ADDRESS` of a raw section file, or of the section emitted for an executable")
	all := fs.Bool("all-objects", false, "run PROGRAM until it reaches its entry point, then dump the section of every object loaded by then (the program, its interpreter, each shared library), as the kernel's unwinder finds them per mapping; the guest flags below shape that run")
	guest := addGuestFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 && !(*all && fs.NArg() > 1) {
		fmt.Fprintln(stderr, "simrun sframe: want exactly one FILE")
		fs.Usage()
		return errUsage
	}
	if *version != 2 && *version != 3 {
		fmt.Fprintf(stderr, "simrun sframe: --sframe-version %d: want 2 or 3\n", *version)
		return errUsage
	}
	if *all && *out != "" {
		fmt.Fprintln(stderr, "simrun sframe: -o writes one section: not with --all-objects")
		return errUsage
	}
	vma, err := strconv.ParseUint(*vmaText, 0, 64)
	if err != nil {
		fmt.Fprintf(stderr, "simrun sframe: --vma %q: not an address\n", *vmaText)
		return errUsage
	}
	opt := unwind.SFrameOptions{Section: *name, Emit: *emit, Version: uint8(*version), VMA: vma}
	path := fs.Arg(0)
	if *all {
		cfg := linux.Config{Args: fs.Args(), Stdin: stdin, Stdout: io.Discard, Stderr: stderr}
		if err := guest.apply(&cfg, stderr); err != nil {
			return err
		}
		paths, err := loadedObjects(path, cfg)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(stdout)
		for _, p := range paths {
			data, err := infile.Read(p, sframeInput)
			if err != nil {
				return err
			}
			if err := dumpSFrame(w, stderr, p, data, opt); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	var set *outfile.Set
	var files map[string]*outfile.File
	if *out != "" {
		if set, files, err = openOutputs(stdout, []input{{path, "the input"}}, *out); err != nil {
			return outputError(stderr, "sframe", err)
		}
		defer set.Abort()
	}
	data, err := infile.Read(path, sframeInput)
	if err != nil {
		return err
	}
	if *out != "" {
		r, err := readSFrame(stderr, path, data, opt)
		if err != nil {
			return err
		}
		if r.Section == nil {
			return fmt.Errorf("%s: no %s section and no .eh_frame to emit one from", path, *name)
		}
		if _, err := files[*out].Write(r.Bytes); err != nil {
			return err
		}
		return set.Commit()
	}
	w := bufio.NewWriter(stdout)
	if err := dumpSFrame(w, stderr, path, data, opt); err != nil {
		return err
	}
	return w.Flush()
}

// dumpSFrame prints the SFrame section of one file as objdump --sframe
// does, with readSFrame's notes on stderr.
func dumpSFrame(w io.Writer, stderr io.Writer, path string, data []byte, opt unwind.SFrameOptions) error {
	r, err := readSFrame(stderr, path, data, opt)
	if err != nil {
		return err
	}
	return r.Dump(w)
}

// readSFrame reads (or emits) the SFrame section of one file and tells
// stderr what gas would warn about and when the section is emitted.
func readSFrame(stderr io.Writer, path string, data []byte, opt unwind.SFrameOptions) (*unwind.SFrameReport, error) {
	r, err := unwind.ReadSFrame(path, data, opt)
	if err != nil {
		return nil, err
	}
	// gas names the line of the function's .cfi_startproc; here the
	// function's address (and name, when the symbol table has it) do.
	var syms *unwind.Symbols
	if len(r.Warnings) > 0 {
		if obj, err := unwind.NewObject(path, data); err == nil {
			syms, _ = unwind.ReadSymbols(obj)
		}
	}
	if r.Emitted && !opt.Emit && r.Section != nil {
		// The dump looks like objdump's of the file's own section: say
		// it is not.
		fmt.Fprintf(stderr, "simrun sframe: %s has no %s section: this one is emitted from its .eh_frame, as gas --gsframe would\n", path, opt.Section)
	}
	for _, warn := range r.Warnings {
		where := fmt.Sprintf("%#x", warn.PC)
		if name := syms.Name(warn.PC); name != "?" {
			where += " <" + name + ">"
		}
		fmt.Fprintf(stderr, "%s: %s: Warning: %s\n", path, where, warn)
	}
	return r, nil
}
