package linux_test

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// sigreturnAt loads the signal program "abort" for arch, writes frame at
// a 16-aligned place on its stack (plus off), points the stack pointer
// there and runs the trampoline's rt_sigreturn; with handler set, a
// SIGSEGV handler at the program's entry is installed first. It returns
// the process after the trampoline ran.
func sigreturnAt(t testing.TB, arch string, frame []byte, off uint64, handler bool) (*linux.Process, *cpu.Exit) {
	p := newSigProcess(t, arch)
	var st cpu.State
	p.Core.State(&st)
	sp := (st.GPR[p.Arch.DwarfSP]-0x4000)&^15 + off
	require.NoError(t, p.Mem.Poke(sp-0x3000, make([]byte, 0x3000+0x2000)))
	require.NoError(t, p.Mem.Poke(sp, frame))
	if handler {
		// rt_sigaction(SIGSEGV, {entry, SA_SIGINFO}) through the syscall
		// table, as the guest would.
		act := sp - 0x1000
		b := make([]byte, 32)
		o := p.Arch.ByteOrder
		o.PutUint64(b, p.Image.Entry)
		o.PutUint64(b[8:], 4)
		require.NoError(t, p.Mem.Poke(act, b))
		require.Equal(t, uint64(0), callSyscall(t, p, "rt_sigaction", 11, act, 0, 8))
		p.Core.State(&st)
	}
	st.GPR[p.Arch.DwarfSP] = sp
	st.PC = p.SigTramp()
	steps := uint64(2) // mov x8, #139; svc #0
	if arch == "s390x" {
		st.PC += 2 // svc 173
		steps = 1
	}
	p.Core.(cpu.StateWriter).SetState(&st)
	exit, err := p.RunFor(steps)
	require.NoError(t, err)
	return p, exit
}

// newSigProcess loads a signal program for arch, ready to run.
func newSigProcess(t testing.TB, arch string) *linux.Process {
	bins := programs.SignalBinaries(arch)
	require.NotEmpty(t, bins)
	path := bins[0].Path
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	p, err := linux.NewProcess(path, data, linux.Config{})
	require.NoError(t, err)
	return p
}

// callSyscall runs one syscall by name through the process's table with
// the core's registers as the arguments.
func callSyscall(t testing.TB, p *linux.Process, name string, args ...uint64) uint64 {
	var st cpu.State
	p.Core.State(&st)
	nr := p.Arch.Syscalls[name]
	if p.Arch.Name == "arm64" {
		copy(st.GPR, args)
		st.GPR[8] = nr
	} else {
		copy(st.GPR[2:], args)
		st.GPR[1] = nr
	}
	p.Core.(cpu.StateWriter).SetState(&st)
	p.Syscall(p.Machine)
	p.Core.State(&st)
	return st.GPR[p.Arch.SyscallResult]
}

// a64Frame is a valid arm64 rt_sigframe (4688 bytes) returning to pc,
// edited by fn.
func a64Frame(pc uint64, fn func(b []byte)) []byte {
	b := make([]byte, 4688)
	le := binary.LittleEndian
	le.PutUint64(b[128+176+264:], pc)
	le.PutUint64(b[128+176+256:], 0x5500000000) // sp
	r := b[592:]
	le.PutUint32(r, 0x46508001)
	le.PutUint32(r[4:], 528)
	if fn != nil {
		fn(b)
	}
	return b
}

// s390Frame is a valid s390x rt_sigframe (1320 bytes) returning to pc.
func s390Frame(pc uint64, fn func(b []byte)) []byte {
	b := make([]byte, 1320)
	be := binary.BigEndian
	be.PutUint64(b[296+40:], 0x0705000180000000)
	be.PutUint64(b[296+48:], pc)
	if fn != nil {
		fn(b)
	}
	return b
}

// TestSigreturnFrames: a valid frame resumes at its pc with its
// registers; a forged or corrupt one raises SIGSEGV, which ends the run
// with status 139 or, with a handler installed, enters the handler.
func TestSigreturnFrames(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	const resume, resume390 = 0x400100, 0x1000100
	tests := []struct {
		name  string
		arch  string
		frame []byte
		off   uint64
		ok    bool
	}{
		{"arm64 valid", "arm64", a64Frame(resume, nil), 0, true},
		{"arm64 misaligned sp", "arm64", a64Frame(resume, nil), 8, false},
		{"arm64 no FPSIMD record", "arm64", a64Frame(resume, func(b []byte) { le.PutUint32(b[592:], 0); le.PutUint32(b[596:], 0) }), 0, false},
		{"arm64 FPSIMD record of the wrong size", "arm64", a64Frame(resume, func(b []byte) { le.PutUint32(b[596:], 512) }), 0, false},
		{"arm64 unknown record", "arm64", a64Frame(resume, func(b []byte) { le.PutUint32(b[592+528:], 0x12345678); le.PutUint32(b[592+532:], 16) }), 0, false},
		{"arm64 record past the end", "arm64", a64Frame(resume, func(b []byte) { le.PutUint32(b[592+528:], 0x45535201); le.PutUint32(b[592+532:], 8192) }), 0, false},
		{"arm64 null record with a size", "arm64", a64Frame(resume, func(b []byte) { le.PutUint32(b[592+532:], 16) }), 0, false},
		{"arm64 pstate at EL1", "arm64", a64Frame(resume, func(b []byte) { le.PutUint64(b[128+176+272:], 5) }), 0, false},
		{"arm64 pstate with IRQs masked", "arm64", a64Frame(resume, func(b []byte) { le.PutUint64(b[128+176+272:], 0x80) }), 0, false},
		{"s390x valid", "s390x", s390Frame(resume390, nil), 0, true},
		{"s390x reserved FPC bits", "s390x", s390Frame(resume390, func(b []byte) { be.PutUint32(b[296+40+208:], 0x00000088) }), 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, exit := sigreturnAt(t, tc.arch, tc.frame, tc.off, false)
			if tc.ok {
				require.Nil(t, exit)
				want := uint64(resume)
				if tc.arch == "s390x" {
					want = resume390
				}
				require.Equal(t, want, p.Core.PC())
				return
			}
			require.NotNil(t, exit)
			require.Equal(t, 128+11, exit.Status, "%v", exit.Fault)
			require.Contains(t, exit.Fault.Error(), "bad signal frame")

			p, exit = sigreturnAt(t, tc.arch, tc.frame, tc.off, true)
			require.Nil(t, exit, "the SIGSEGV handler runs")
			var st cpu.State
			p.Core.State(&st)
			require.Equal(t, p.Image.Entry, st.PC)
			require.Equal(t, uint64(11), st.GPR[map[string]int{"arm64": 0, "s390x": 2}[tc.arch]])
		})
	}
}

// FuzzSigreturn feeds arbitrary frames to rt_sigreturn on both
// architectures: the guest resumes or gets SIGSEGV, and simrun never
// panics or reports an internal error.
func FuzzSigreturn(f *testing.F) {
	f.Add(false, a64Frame(0x400100, nil))
	f.Add(true, s390Frame(0x1000100, nil))
	f.Add(false, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, s390 bool, frame []byte) {
		if len(frame) > 8192 {
			frame = frame[:8192]
		}
		arch := "arm64"
		if s390 {
			arch = "s390x"
		}
		_, exit := sigreturnAt(t, arch, frame, 0, false)
		if exit != nil && exit.Fault != nil {
			require.NotEqual(t, cpu.FaultInternal, exit.Fault.Kind, "%v", exit.Fault)
		}
	})
}

// TestSignalSyscallErrors: out-of-range signals, SIGKILL's action, a
// wrong sigset size, a bad how and a foreign pid give Linux's errnos.
func TestSignalSyscallErrors(t *testing.T) {
	const (
		einval = 22
		esrch  = 3
		efault = 14
		enomem = 12
	)
	for _, arch := range []string{"arm64", "s390x"} {
		p := newSigProcess(t, arch)
		var st cpu.State
		p.Core.State(&st)
		buf := st.GPR[p.Arch.DwarfSP] - 0x2000
		tests := []struct {
			name string
			call string
			args []uint64
			want uint64
		}{
			{"rt_sigaction 0", "rt_sigaction", []uint64{0, 0, 0, 8}, einval},
			{"rt_sigaction 65", "rt_sigaction", []uint64{65, 0, 0, 8}, einval},
			{"rt_sigaction SIGKILL", "rt_sigaction", []uint64{9, buf, 0, 8}, einval},
			{"rt_sigaction sigset size", "rt_sigaction", []uint64{10, 0, buf, 16}, einval},
			{"rt_sigaction unmapped", "rt_sigaction", []uint64{10, 8, 0, 8}, efault},
			{"rt_sigprocmask how", "rt_sigprocmask", []uint64{7, buf, 0, 8}, einval},
			{"rt_sigpending size", "rt_sigpending", []uint64{buf, 9}, einval},
			{"kill 65", "kill", []uint64{1000, 65}, einval},
			{"kill other", "kill", []uint64{1234, 10}, esrch},
			{"tgkill 0", "tgkill", []uint64{0, 1000, 10}, einval},
			{"tgkill other", "tgkill", []uint64{1000, 1001, 10}, esrch},
			{"tkill 99", "tkill", []uint64{1000, 99}, einval},
			{"rt_sigqueueinfo unmapped", "rt_sigqueueinfo", []uint64{1000, 10, 8}, efault},
			{"sigaltstack too small", "sigaltstack", []uint64{buf + 0x100, 0}, enomem},
		}
		// buf holds {sp, flags 0, size 100} for sigaltstack at +0x100.
		o := p.Arch.ByteOrder
		ss := make([]byte, 24)
		o.PutUint64(ss, buf)
		o.PutUint64(ss[16:], 100)
		require.NoError(t, p.Mem.Poke(buf+0x100, ss))
		for _, tc := range tests {
			got := callSyscall(t, p, tc.call, tc.args...)
			require.Equal(t, -tc.want, got, "%s %s", arch, tc.name)
		}
	}
}
