package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"simrun/sim/linux"
	"simrun/sim/outfile"
)

// Interrupts (SIGINT, SIGTERM, SIGHUP) end simrun the way they end perf
// record: the first one stops the guest at an instruction boundary and
// the command writes what it has (record: every output, marked as
// interrupted; run: the --trace-json trace), then exits 128+signal. A
// second signal, or the first one in a command that runs no guest,
// removes every temporary file and exits 128+signal at once.
type interruptState struct {
	mu     sync.Mutex
	sig    syscall.Signal       // the first signal; 0: none yet
	held   bool                 // a command writes its outputs after the first signal
	stop   func(syscall.Signal) // stops the running guest
	stderr io.Writer
	exit   func(int)
}

var interrupts = &interruptState{stderr: os.Stderr, exit: os.Exit}

// interruptSignals are the signals that end simrun through interrupts.
var interruptSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// catchInterrupts routes the interrupt signals to interrupts (main
// calls it; in-process tests do not).
func catchInterrupts() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, interruptSignals...)
	go func() {
		for s := range ch {
			if sig, ok := s.(syscall.Signal); ok {
				interrupts.deliver(sig)
			}
		}
	}()
}

// deliver acts on one signal.
func (s *interruptState) deliver(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sig == 0 && s.held {
		s.sig = sig
		if s.stop != nil {
			s.stop(sig)
		}
		return
	}
	n := outfile.RemoveTemps()
	what := "nothing written"
	if n > 0 {
		what = fmt.Sprintf("%d partly written outputs removed", n)
	}
	fmt.Fprintf(s.stderr, "\nsimrun: %s: stopped at once, %s\n", linux.SignalName(int(sig)), what)
	s.exit(128 + int(sig))
}

// hold makes the first signal stop the guest (see setStop) instead of
// ending simrun, until release; the command then asks signal().
func (s *interruptState) hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.held, s.stop = false, nil
	}
}

// setStop names what stops the guest; a signal that came before is
// acted on at once.
func (s *interruptState) setStop(stop func(syscall.Signal)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return
	}
	s.stop = stop
	if s.sig != 0 && stop != nil {
		stop(s.sig)
	}
}

// signal is the first signal received, 0 if none.
func (s *interruptState) signal() syscall.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig
}
