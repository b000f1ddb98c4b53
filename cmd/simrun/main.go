// Command simrun runs arm64 and s390x Linux programs on a simulated CPU.
//
//	simrun run [flags] PROG [ARGS...]
//
// See `simrun help` for the commands and their flags.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	_ "simrun/sim/arm64"
	_ "simrun/sim/s390x"
)

const usage = `simrun runs arm64 and s390x Linux user programs (static or dynamically
linked ELF files) on a simulated CPU.

Usage:
  simrun <command> [flags] [arguments]

Commands:
  run       run a program: its stdout, stderr and exit status pass through
  sframe    print a program's SFrame section as objdump --sframe does, or emit one from .eh_frame
  record    run a program with a virtual Arm SPE unit and write a perf.data
  spe       dump SPE data, explain SPE register values
  report    write a self-contained HTML report of a simrun record perf.data
  unwind    check stack unwinding (SFrame, eh_frame, frame pointer) against the true call stack
  help      show help for a command
  version   print simrun's version, VCS revision and Go version

Examples:
  simrun run programs/bin/aarch64-O2/hello
  simrun run --stats programs/bin/aarch64-O2/fib 25
  simrun run --trace --max-insns 20 programs/bin/aarch64-O0/hello
  simrun run --trace-json trace.jsonl --trace-fp programs/bin/aarch64-O2/vecsum
  simrun record -e arm_spe/ts_enable=1,load_filter=1/ -c 1024 --format perf,pprof,folded programs/bin/aarch64-O2/listchase
  simrun report -o report.html perf.data
  go tool pprof -top perf.pb.gz; flamegraph.pl perf.folded > flame.svg

Exit status: a program's own (128+signal after a fault); 128+signal after
SIGINT, SIGTERM or SIGHUP; 1 when simrun fails; 2 for a usage error.

Run 'simrun help <command>' for the flags of a command.
`

// exitError carries the process exit status out of a command.
type exitError struct{ status int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.status) }

func main() {
	catchInterrupts()
	os.Exit(mainStatus(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// mainStatus runs simrun with args and returns the exit status.
func mainStatus(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(args[1:], stdin, stdout, stderr)
	case "sframe":
		err = cmdSFrame(args[1:], stdin, stdout, stderr)
	case "record":
		err = cmdRecord(args[1:], stdin, stdout, stderr)
	case "spe":
		err = cmdSPE(args[1:], stdout, stderr)
	case "report":
		err = cmdReport(args[1:], stdout, stderr)
	case "unwind":
		err = cmdUnwind(args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help", "-help":
		if len(args) > 1 && !isHelp(args[1]) && args[1] != "help" {
			return mainStatus([]string{args[1], "--help"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	default:
		fmt.Fprintf(stderr, "simrun: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.status
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "simrun: %v\n", err)
	return 1
}

var errUsage = errors.New("usage")

// isHelp says whether arg asks for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// versionLine is what simrun version prints: the module's version, the
// VCS revision it was built from (+dirty for uncommitted changes) and
// the Go version.
func versionLine() string {
	version, rev, dirty := "(devel)", "", false
	goVersion := runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		goVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	line := "simrun " + version
	if rev != "" {
		line += " " + rev[:min(12, len(rev))]
		if dirty {
			line += "+dirty"
		}
	}
	return line + " " + goVersion
}

// newFlags returns a flag set that reports errors the way simrun does.
func newFlags(name, synopsis, examples string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: simrun %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(stderr, "\nExamples:\n%s", examples)
		}
	}
	return fs
}

// parseFlags parses flags up to the first non-flag argument (the program),
// so the guest's own flags pass through untouched.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// parseUint reads a decimal, 0x hex, 0o octal or 0b binary number.
func parseUint(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}
