package arm64

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// sysMachine is a machine whose code is a run of svc instructions, so a
// test can issue syscalls one at a time with chosen registers.
type sysMachine struct {
	t      *testing.T
	m      *cpu.Machine
	c      *Core
	out    bytes.Buffer
	notes  bytes.Buffer
	data   uint64 // a writable scratch page
	seed   uint64
	strict bool
}

func newSysMachine(t *testing.T, seed uint64, strict bool) *sysMachine {
	s := &sysMachine{t: t, data: 0x410000, seed: seed, strict: strict}
	code := make([]uint32, 64)
	for i := range code {
		code[i] = 0xd4000001 // svc #0
	}
	img := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, code...), make([]byte, 2*cpu.PageSize))
	m, err := linux.New("sys", img, linux.Config{Stdout: &s.out, Stderr: &s.out, Notes: &s.notes, Seed: seed, Strict: strict})
	require.NoError(t, err)
	s.m, s.c = m, m.Core.(*Core)
	return s
}

// sys runs one syscall and returns x0.
func (s *sysMachine) sys(nr uint64, args ...uint64) uint64 {
	s.t.Helper()
	s.c.x[8] = nr
	for i := 0; i < 6; i++ {
		s.c.x[i] = 0
		if i < len(args) {
			s.c.x[i] = args[i]
		}
	}
	_, err := s.m.RunFor(1)
	require.NoError(s.t, err)
	return s.c.x[0]
}

func (s *sysMachine) poke(addr uint64, b []byte) { require.NoError(s.t, s.m.Mem.Poke(addr, b)) }

func (s *sysMachine) peek(addr uint64, n int) []byte {
	b, err := s.m.Mem.ReadBytes(addr, n)
	require.NoError(s.t, err)
	return b
}

func neg(e int) uint64 { return uint64(-int64(e)) }

func TestSyscallsIO(t *testing.T) {
	s := newSysMachine(t, 1, false)
	s.poke(s.data, []byte("hello\n"))
	assert.Equal(t, uint64(6), s.sys(64, 1, s.data, 6))             // write(1)
	assert.Equal(t, neg(linux.EBADF), s.sys(64, 7, s.data, 6))      // write(7)
	assert.Equal(t, neg(linux.EFAULT), s.sys(64, 1, 0x12340000, 6)) // bad buffer
	iov := binary.LittleEndian.AppendUint64(nil, s.data)            // iov[0] = {data, 2}
	iov = binary.LittleEndian.AppendUint64(iov, 2)
	iov = binary.LittleEndian.AppendUint64(iov, s.data+4) // iov[1] = {data+4, 2}
	iov = binary.LittleEndian.AppendUint64(iov, 2)
	s.poke(s.data+0x100, iov)
	assert.Equal(t, uint64(4), s.sys(66, 2, s.data+0x100, 2)) // writev(2)
	assert.Equal(t, "hello\nheo\n", s.out.String())
	assert.Equal(t, uint64(0), s.sys(63, 0, s.data, 16))             // read(0): empty stdin
	assert.Equal(t, neg(linux.ENOTTY), s.sys(29, 1, 0x5413, s.data)) // ioctl TIOCGWINSZ
	assert.Equal(t, neg(linux.ESPIPE), s.sys(62, 1, 0, 0))           // lseek
	assert.Equal(t, uint64(0), s.sys(80, 1, s.data))                 // fstat(1)
	mode := binary.LittleEndian.Uint32(s.peek(s.data+16, 4))
	assert.Equal(t, uint32(0o010000), mode&0o170000, "stdout is a pipe here (S_IFIFO), mode %o", mode)
	s.poke(s.data+0x200, []byte{0})
	assert.Equal(t, uint64(0), s.sys(79, 2, s.data+0x200, s.data, 0x1000))      // newfstatat(2, "", AT_EMPTY_PATH)
	assert.Equal(t, neg(linux.ENOENT), s.sys(56, ^uint64(99), s.data+0x200, 0)) // openat
	assert.Equal(t, uint64(0), s.sys(57, 2))                                    // close(2)
	assert.Equal(t, neg(linux.EBADF), s.sys(64, 2, s.data, 1))                  // write(2) after close
}

func TestSyscallsMemory(t *testing.T) {
	s := newSysMachine(t, 1, false)
	brk0 := s.sys(214, 0)
	assert.Equal(t, uint64(0x412000), brk0, "brk starts at the page-aligned end of the data segment")
	assert.Equal(t, brk0+100, s.sys(214, brk0+100))
	assert.True(t, s.m.Mem.Store64LE(brk0+64, 7))
	assert.Equal(t, brk0+0x3000, s.sys(214, brk0+0x3000))
	assert.Equal(t, brk0, s.sys(214, brk0))
	_, ok := s.m.Mem.Load8(brk0 + 0x1000)
	assert.False(t, ok, "shrunk brk is unmapped")

	const rw, anon = 3, 0x22
	a := s.sys(222, 0, 8192, rw, anon, ^uint64(0), 0)
	assert.Equal(t, uint64(0x5500802000), a, "first mmap lands where qemu-user puts it")
	b := s.sys(222, 0, 4096, rw, anon, ^uint64(0), 0)
	assert.Equal(t, a+8192, b)
	assert.True(t, s.m.Mem.Store64LE(a+8, 1))
	assert.Equal(t, uint64(0), s.sys(226, a, 4096, 1)) // mprotect read-only
	assert.False(t, s.m.Mem.Store64LE(a+8, 2))
	assert.Equal(t, uint64(0), s.sys(233, a+4096, 4096, 4)) // madvise DONTNEED
	assert.Equal(t, uint64(0), s.sys(215, a, 8192))         // munmap
	_, ok = s.m.Mem.Load8(a)
	assert.False(t, ok)
	assert.Equal(t, neg(linux.EBADF), s.sys(222, 0, 4096, rw, 2, 3, 0), "a file mapping of a descriptor that is not open")
	assert.Equal(t, neg(linux.EINVAL), s.sys(222, 0, 0, rw, anon, ^uint64(0), 0))
	fixed := s.sys(222, 0x600000000, 4096, rw, anon|0x10, ^uint64(0), 0)
	assert.Equal(t, uint64(0x600000000), fixed)
	assert.Equal(t, neg(linux.EEXIST), s.sys(222, 0x600000000, 4096, rw, anon|0x100000, ^uint64(0), 0))
}

func TestSyscallsClockRandomIdentity(t *testing.T) {
	s := newSysMachine(t, 5, false)
	assert.Equal(t, uint64(0), s.sys(160, s.data)) // uname
	u := s.peek(s.data, 65*5)
	field := func(i int) string { return strings.TrimRight(string(u[65*i:65*i+65]), "\x00") }
	assert.Equal(t, "Linux", field(0))
	assert.Equal(t, "aarch64", field(4))
	assert.Equal(t, uint64(0), s.sys(113, 1, s.data)) // clock_gettime(MONOTONIC)
	t1 := binary.LittleEndian.Uint64(s.peek(s.data+8, 8))
	s.sys(113, 1, s.data)
	t2 := binary.LittleEndian.Uint64(s.peek(s.data+8, 8))
	assert.Greater(t, t2, t1, "the virtual clock advances with instructions")
	s.sys(113, 0, s.data)
	assert.GreaterOrEqual(t, binary.LittleEndian.Uint64(s.peek(s.data, 8)), uint64(1767225600))
	assert.Equal(t, neg(linux.EINVAL), s.sys(113, 77, s.data))
	assert.Equal(t, uint64(16), s.sys(278, s.data, 16, 0)) // getrandom
	r1 := s.peek(s.data, 16)
	s2 := newSysMachine(t, 5, false)
	s2.sys(278, s2.data, 16, 0)
	assert.Equal(t, r1, s2.peek(s2.data, 16), "same seed, same bytes")
	s3 := newSysMachine(t, 6, false)
	s3.sys(278, s3.data, 16, 0)
	assert.NotEqual(t, r1, s3.peek(s3.data, 16))
	assert.Equal(t, uint64(1000), s.sys(172))               // getpid
	assert.Equal(t, uint64(1000), s.sys(96, s.data))        // set_tid_address
	assert.Equal(t, uint64(0), s.sys(261, 0, 3, 0, s.data)) // prlimit64(RLIMIT_STACK)
	assert.Equal(t, uint64(8<<20), binary.LittleEndian.Uint64(s.peek(s.data, 8)))
	act := make([]byte, 32)
	binary.LittleEndian.PutUint64(act, 0x400123)
	s.poke(s.data+0x100, act)
	assert.Equal(t, uint64(0), s.sys(134, 10, s.data+0x100, 0, 8)) // rt_sigaction(SIGUSR1)
	assert.Equal(t, uint64(0), s.sys(134, 10, 0, s.data+0x200, 8))
	assert.Equal(t, uint64(0x400123), binary.LittleEndian.Uint64(s.peek(s.data+0x200, 8)))
}

func TestSyscallsUnsupportedAndSignals(t *testing.T) {
	s := newSysMachine(t, 1, false)
	assert.Equal(t, neg(linux.ENOSYS), s.sys(4000))
	assert.Equal(t, neg(linux.ENOSYS), s.sys(4000))
	assert.Equal(t, 1, strings.Count(s.notes.String(), "syscall 4000 at pc"), "noted once: %q", s.notes.String())
	assert.Equal(t, neg(linux.ENOSYS), s.sys(220, 0x20000000|17), "clone: denied") // clone(CLONE_NEWPID|SIGCHLD)
	s.sys(131, 1000, 1000, 6)                                                      // tgkill(self, SIGABRT)
	require.True(t, s.m.Exited())

	st := newSysMachine(t, 1, true)
	st.sys(4000)
	require.True(t, st.m.Exited())
	exit, _ := st.m.Run()
	require.NotNil(t, exit.Fault)
	assert.Equal(t, cpu.FaultSyscall, exit.Fault.Kind)
	assert.Equal(t, 128+31, exit.Status)
	assert.Contains(t, exit.Fault.Error(), "unsupported syscall 4000: syscall_4000(")
	assert.Contains(t, exit.Fault.Error(), "(--strict)")
}

func TestSelfModifyingCode(t *testing.T) {
	// A page that is writable and executable: the program stores a new
	// instruction over one it already executed, then branches back to it.
	//
	//	0: mov x0, #1          ; replaced by "mov x0, #2" on the second pass
	//	4: cbnz x3, 20         ; second pass: exit with x0
	//	8: mov x3, #1
	//	c: ldr w2, [x5]        ; x5 -> replacement word
	//	10: str w2, [x4]       ; x4 -> offset 0
	//	14: b 0
	//	18: (unused)
	//	20: mov x8, #94 ; svc #0
	code := elftest.Words(binary.LittleEndian,
		0xd2800020, 0xb50000e3, 0xd2800023, 0xb94000a2, 0xb9000082, 0x17fffffb, 0xd503201f, 0xd503201f,
		0xd2800bc8, 0xd4000001, 0xd2800040)
	f := &elftest.File{Machine: elf.EM_AARCH64, Entry: 0x400000, Segments: []elftest.Segment{
		{Vaddr: 0x400000, Data: code, Flags: elf.PF_R | elf.PF_W | elf.PF_X}}}
	m, err := linux.New("smc", f.Bytes(), linux.Config{})
	require.NoError(t, err)
	c := m.Core.(*Core)
	c.x[4], c.x[5] = 0x400000, 0x400028
	exit, err := m.Run()
	require.NoError(t, err)
	require.Nil(t, exit.Fault)
	assert.Equal(t, 2, exit.Status, "the rewritten instruction ran")
}

func TestNextOp(t *testing.T) {
	code := elftest.Words(binary.LittleEndian,
		0xf9400020, // ldr x0, [x1]
		0xa9bf7bfd, // stp x29, x30, [sp, #-16]!
		0x54000040, // b.eq +8
		0xd63f0040, // blr x2
		0xd65f03c0, // ret
		0x4e208400, // add v0.16b, v0.16b, v0.16b
		0x1e602820, // fadd d0, d1, d0
		0xb8200020) // ldadd w0, w0, [x1]
	m, err := linux.New("op", elftest.Code(elf.EM_AARCH64, binary.LittleEndian, code, make([]byte, 64)), linux.Config{})
	require.NoError(t, err)
	c := m.Core.(*Core)
	c.x[1], c.x[2], c.x[30] = 0x410008, 0x400400, 0x400800
	c.nzcv = 4 // Z
	want := []cpu.Op{
		{PC: 0x400000, Size: 4, Class: cpu.ClassLoad, Access: 8, VA: 0x410008},
		{PC: 0x400004, Size: 4, Class: cpu.ClassStore, Access: 16, VA: c.x[rSP] - 16, Flags: cpu.OpPair},
		{PC: 0x400008, Size: 4, Class: cpu.ClassBranch, Target: 0x400010, Flags: cpu.OpConditional | cpu.OpCondPassed},
		{PC: 0x40000c, Size: 4, Class: cpu.ClassBranch, Target: 0x400400, Flags: cpu.OpIndirect | cpu.OpLink | cpu.OpCondPassed},
		{PC: 0x400010, Size: 4, Class: cpu.ClassBranch, Target: 0x400800, Flags: cpu.OpIndirect | cpu.OpReturn | cpu.OpCondPassed},
		{PC: 0x400014, Size: 4, Flags: cpu.OpSIMD},
		{PC: 0x400018, Size: 4, Flags: cpu.OpFP},
		{PC: 0x40001c, Size: 4, Class: cpu.ClassLoadAtomic, Access: 4, VA: 0x410008},
	}
	for i, w := range want {
		c.pc = w.PC
		var op cpu.Op
		require.True(t, c.NextOp(&op), "op %d", i)
		assert.Equal(t, w, op, "op %d", i)
	}
}
