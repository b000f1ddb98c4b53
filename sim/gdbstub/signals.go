package gdbstub

// The remote protocol names signals by gdb's own numbers (GDB manual,
// "Stop Reply Packets"; the numbering of gdb's signals.def), which differ
// from Linux's for several signals. linuxToGDB maps the Linux numbers
// 1-31 (the same on arm64 and s390x) to gdb's.
var linuxToGDB = [32]uint8{
	1:  1,  // SIGHUP
	2:  2,  // SIGINT
	3:  3,  // SIGQUIT
	4:  4,  // SIGILL
	5:  5,  // SIGTRAP
	6:  6,  // SIGABRT
	7:  10, // SIGBUS
	8:  8,  // SIGFPE
	9:  9,  // SIGKILL
	10: 30, // SIGUSR1
	11: 11, // SIGSEGV
	12: 31, // SIGUSR2
	13: 13, // SIGPIPE
	14: 14, // SIGALRM
	15: 15, // SIGTERM
	16: 0,  // SIGSTKFLT: gdb has no number for it
	17: 20, // SIGCHLD
	18: 19, // SIGCONT
	19: 17, // SIGSTOP
	20: 18, // SIGTSTP
	21: 21, // SIGTTIN
	22: 22, // SIGTTOU
	23: 16, // SIGURG
	24: 24, // SIGXCPU
	25: 25, // SIGXFSZ
	26: 26, // SIGVTALRM
	27: 27, // SIGPROF
	28: 28, // SIGWINCH
	29: 23, // SIGIO
	30: 32, // SIGPWR
	31: 12, // SIGSYS
}

// gdbSignal is gdb's number for Linux signal sig (0 when it has none).
// The real-time signals 32 and 33-64 are gdb's 77 and 45-75, 78.
func gdbSignal(sig int) int {
	switch {
	case sig > 0 && sig < 32:
		return int(linuxToGDB[sig])
	case sig == 32:
		return 77
	case sig >= 33 && sig <= 63:
		return 45 + sig - 33
	case sig == 64:
		return 78
	}
	return 0
}

// linuxSignal is the Linux number of gdb's signal g (0 when none).
func linuxSignal(g int) int {
	if g <= 0 {
		return 0
	}
	for sig := 1; sig <= 64; sig++ {
		if gdbSignal(sig) == g {
			return sig
		}
	}
	return 0
}
