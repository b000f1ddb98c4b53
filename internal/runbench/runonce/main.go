// Command runonce runs a guest program once, plain, with the timing model
// or with the timing model and SPE sampling every 4096 operations as the
// Timing benchmarks set it up (runbench.AttachSPE), and prints the
// retired instructions. It exists to be counted under callgrind, inside
// Machine.Run only (docs/speed.md):
//
//	go build -o /tmp/runonce ./internal/runbench/runonce
//	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GOGC=off valgrind --tool=callgrind \
//	    --toggle-collect='simrun/sim/cpu.(*Machine).Run' /tmp/runonce -mode spe \
//	    programs/bin/aarch64-O2/listchase
//
// With -runs N it runs the program N times on fresh machines, the heap
// collected before each run as the benchmarks do: counts for 3 runs less
// those for 1, halved, are a run in the benchmarks' steady state (warm
// host caches, reused heap).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"simrun/internal/runbench"
	_ "simrun/sim/arm64"
	_ "simrun/sim/s390x"
	"simrun/sim/timing"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("runonce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", "timed", "`plain`, timed (with runbench.Preset) or spe (timed, sampling every 4096)")
	runs := fs.Int("runs", 1, "run the program `N` times, each on a fresh machine after a collection")
	if err := fs.Parse(args); err != nil || fs.NArg() < 1 {
		fmt.Fprintln(stderr, "usage: runonce [-mode plain|timed|spe] [-runs N] PROG [ARGS]")
		return 2
	}
	if *mode != "plain" && *mode != "timed" && *mode != "spe" {
		fmt.Fprintf(stderr, "runonce: -mode %q: want plain, timed or spe\n", *mode)
		return 2
	}
	if *runs < 1 {
		fmt.Fprintf(stderr, "runonce: -runs %d: want at least 1\n", *runs)
		return 2
	}
	growStack(256)
	for k := 0; k < *runs; k++ {
		runtime.GC()
		insns, err := once(fs.Arg(0), fs.Args()[1:], *mode)
		if err != nil {
			fmt.Fprintf(stderr, "runonce: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%d instructions\n", insns)
	}
	return 0
}

// once runs the program at path with args in mode; the guest's output is
// dropped.
func once(path string, args []string, mode string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var p *timing.Preset
	if mode != "plain" {
		if p, err = timing.PresetByName(runbench.Preset); err != nil {
			return 0, err
		}
	}
	var out bytes.Buffer // (as the benchmarks keep it)
	m, err := runbench.NewMachine(path, data, p, &out, args)
	if err != nil {
		return 0, err
	}
	if mode == "spe" {
		if err := runbench.AttachSPE(m); err != nil {
			return 0, err
		}
	}
	exit, err := m.Run()
	if err != nil {
		return 0, err
	}
	if exit.Fault != nil {
		return 0, exit.Fault
	}
	return m.Insns, nil
}

// growStack grows the goroutine's stack to about n pages before the run:
// callgrind loses Machine.Run's frame when the runtime copies the stack
// to grow it, and stops counting early.
func growStack(n int) byte {
	var buf [4096]byte
	buf[n%len(buf)] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return growStack(n-1) + buf[n%len(buf)]
}
