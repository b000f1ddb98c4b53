// Command peakmem runs a command several times and reports the medians of
// its memory at exit, split into what the process allocated (anonymous
// memory) and what it maps from files (its own executable's pages):
//
//	go run ./internal/peakmem -n 7 -- ./simrun record -o /tmp/x.data programs/bin/aarch64-O2/sort
//
// Peak RSS (getrusage's ru_maxrss, `/usr/bin/time -f %M`) mixes the two.
// The file-backed part follows the size of the executable rather than
// what the program does: Linux maps the page-cache pages around each
// faulting address (fault-around, 64 KiB by default), so even `simrun
// version` has most of simrun's text and read-only data resident. The
// anonymous part is the memory simrun uses.
//
// The command is started under ptrace with PTRACE_O_TRACEEXIT, so it stops
// just before its exit with its address space still there; peakmem reads
// /proc/PID/smaps_rollup (Rss, Anonymous) and /proc/PID/status (VmHWM,
// the peak RSS) then, and lets it exit. Linux only.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// sample is one run's memory at exit, in KiB.
type sample struct {
	rss, anon, hwm uint64
}

func main() {
	n := flag.Int("n", 5, "runs")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: peakmem [-n RUNS] -- COMMAND [ARGS]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	var runs []sample
	for i := 0; i < *n; i++ {
		s, err := measure(flag.Args())
		if err != nil {
			fmt.Fprintln(os.Stderr, "peakmem:", err)
			os.Exit(1)
		}
		runs = append(runs, s)
	}
	// stat gives the median and the range of one figure over the runs.
	stat := func(f func(sample) uint64) string {
		v := make([]uint64, len(runs))
		for i, s := range runs {
			v[i] = f(s)
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return fmt.Sprintf("%d (%d–%d)", v[len(v)/2], v[0], v[len(v)-1])
	}
	fmt.Printf("KiB, median (min–max) of %d runs: peak RSS %s; at exit: anonymous %s, file-backed %s\n", len(runs),
		stat(func(s sample) uint64 { return s.hwm }),
		stat(func(s sample) uint64 { return s.anon }),
		stat(func(s sample) uint64 { return s.rss - s.anon }))
}

// measure runs args once, stopping it at its exit to read its memory.
func measure(args []string) (sample, error) {
	// ptrace requests must come from the thread that attached.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = nil, nil // discarded
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	// The first stop is the SIGTRAP of execve under PTRACE_TRACEME.
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return sample{}, err
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
		return sample{}, err
	}
	// Only the main thread is traced (no PTRACE_O_TRACECLONE): its exit
	// stop comes before the address space goes, whichever thread exits.
	var s sample
	var readErr error
	sig := 0
	for {
		if err := syscall.PtraceCont(pid, sig); err != nil {
			return sample{}, err
		}
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			return sample{}, err
		}
		if ws.Exited() || ws.Signaled() {
			break
		}
		sig = 0
		switch {
		case !ws.Stopped():
		case ws.StopSignal() == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			s, readErr = read(pid)
		case ws.StopSignal() != syscall.SIGTRAP:
			sig = int(ws.StopSignal()) // deliver it
		}
	}
	if readErr != nil {
		return sample{}, readErr
	}
	if s.rss == 0 {
		return sample{}, fmt.Errorf("%s: exited without a readable exit stop", args[0])
	}
	return s, nil
}

// read returns pid's RSS, anonymous memory and peak RSS.
func read(pid int) (sample, error) {
	var s sample
	if err := fields(fmt.Sprintf("/proc/%d/smaps_rollup", pid), map[string]*uint64{"Rss:": &s.rss, "Anonymous:": &s.anon}); err != nil {
		return s, err
	}
	err := fields(fmt.Sprintf("/proc/%d/status", pid), map[string]*uint64{"VmHWM:": &s.hwm})
	return s, err
}

// fields reads the kB values of the named lines of a /proc file.
func fields(path string, want map[string]*uint64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) >= 2 {
			if p, ok := want[w[0]]; ok {
				v, err := strconv.ParseUint(w[1], 10, 64)
				if err != nil {
					return fmt.Errorf("%s: %q: %v", path, sc.Text(), err)
				}
				*p = v
				delete(want, w[0])
			}
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("%s: no %v line", path, want)
	}
	return sc.Err()
}
