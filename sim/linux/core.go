package linux

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"simrun/sim/cpu"
)

// Core dumps: the ELF core file Linux's binfmt_elf writes when a process
// dies of a signal whose default action dumps core (signal(7): SIGQUIT,
// SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGXCPU, SIGXFSZ,
// SIGSYS). Its layout, as Linux 6.1 writes it (elf_core_dump, the
// regset-based fill_note_info and write_note_info):
//
//   - the ELF header: ET_CORE, the program's machine and byte order,
//     ELFOSABI_NONE, program headers only;
//   - one PT_NOTE, then one PT_LOAD per mapping in address order, the
//     first load at a page-aligned offset;
//   - the notes: the dying thread's NT_PRSTATUS, then NT_PRPSINFO,
//     NT_SIGINFO, NT_AUXV and NT_FILE, then that thread's other register
//     sets, then each other thread's NT_PRSTATUS and register sets. arm64
//     writes NT_PRFPREG and NT_ARM_TLS (and NT_ARM_PAC_MASK with
//     --pauth); s390x NT_PRFPREG, NT_S390_VXRS_LOW and NT_S390_VXRS_HIGH.
//     Names are "CORE", and "LINUX" for the architecture's own sets;
//   - the mappings' bytes under the default coredump_filter (0x33,
//     core(5)): an anonymous mapping whole if any of its pages was ever
//     written (one never written has no anon_vma and is left out), a
//     private file mapping whole if it is writable (as after its pages
//     were copied on write), otherwise only its first page when it maps
//     a file from offset 0 and that page starts an ELF header (gdb finds
//     the build id there), and nothing of a shared file mapping. Pages
//     that were never written are zeros in the file.

// CoreDumps reports whether sig's default action dumps core.
func CoreDumps(sig int) bool { return defaultCore(sig) }

// ELF constants (the ELF gABI; Linux's include/uapi/linux/elf.h).
const (
	etCore      = 4
	ptLoad      = 1
	ptNote      = 4
	emAArch64   = 183
	emS390      = 22
	elfHdrSize  = 64
	elfPhdrSize = 56

	ntPrstatus    = 1
	ntPrfpreg     = 2
	ntPrpsinfo    = 3
	ntAuxv        = 6
	ntSiginfo     = 0x53494749
	ntFile        = 0x46494c45
	ntArmTLS      = 0x401
	ntArmPACMask  = 0x406
	ntS390VxrsLow = 0x309
	ntS390VxrsHi  = 0x30a

	pfX = 1
	pfW = 2
	pfR = 4

	// prstatusRegOff is where pr_reg starts in a 64-bit elf_prstatus:
	// after pr_info (12 bytes), pr_cursig (2, padded to 8), pr_sigpend,
	// pr_sighold (8 each), four pids (16) and four timevals (64).
	prstatusRegOff = 112
	prpsinfoSize   = 136
	prArgSize      = 80 // ELF_PRARGSZ
)

// coreNote is one note: its name, type and descriptor.
type coreNote struct {
	name string
	typ  uint32
	desc []byte
}

// coreThread is one thread's state for the dump.
type coreThread struct {
	tid  uint64
	st   cpu.State
	tls  uint64
	mask uint64
	pend uint64
}

// coreMap is one mapping: its range and rights, the object it maps and
// how many of its bytes the file holds.
type coreMap struct {
	start, end uint64
	perm       cpu.Perm
	name       string // the mapped file's path; "" or "[...]" for anonymous memory
	off        uint64 // file offset of start
	dump       uint64 // bytes written (from start)
}

// WriteCore writes the process as an ELF core file to w, as Linux writes
// it when f (the fault or signal that ended the run) kills the process.
// It is meant for after the run: the running thread is the one that
// died.
func (p *Process) WriteCore(w io.Writer, f *cpu.Fault) error {
	var machine uint16
	switch p.Arch.Name {
	case "arm64":
		machine = emAArch64
	case "s390x":
		machine = emS390
	default:
		return fmt.Errorf("core dump: no core file layout for %s", p.Arch.Name)
	}
	o := p.appendOrder()
	sig := f.Signal()
	info, threads, err := p.coreThreads(f)
	if err != nil {
		return err
	}
	maps := p.coreMaps()
	if len(maps)+1 >= 0xffff {
		// Linux then writes PN_XNUM and a section header holding the
		// count; simrun does not.
		return fmt.Errorf("core dump: %d mappings are more than a core without extended numbering holds", len(maps))
	}

	// Notes, in write_note_info's order.
	var notes []coreNote
	for i := range threads {
		t := &threads[i]
		regs := p.coreRegsets(t)
		notes = append(notes, coreNote{"CORE", ntPrstatus, p.prstatus(t, sig)})
		if i == 0 {
			notes = append(notes,
				coreNote{"CORE", ntPrpsinfo, p.prpsinfo()},
				coreNote{"CORE", ntSiginfo, p.coreSiginfo(info)},
				coreNote{"CORE", ntAuxv, p.coreAuxv()},
				coreNote{"CORE", ntFile, p.coreFileNote(maps)})
		}
		notes = append(notes, regs...)
	}
	var noteBytes []byte
	for _, n := range notes {
		noteBytes = appendNote(noteBytes, o, n)
	}

	// Headers: PT_NOTE right after the program headers, the loads from
	// the next page boundary on.
	phnum := 1 + len(maps)
	noteOff := uint64(elfHdrSize + elfPhdrSize*phnum)
	dataOff := (noteOff + uint64(len(noteBytes)) + cpu.PageMask) &^ uint64(cpu.PageMask)
	var h []byte
	h = append(h, 0x7f, 'E', 'L', 'F', 2 /* ELFCLASS64 */, elfData(o), 1 /* EV_CURRENT */, 0 /* ELFOSABI_NONE */)
	h = append(h, make([]byte, 8)...)
	h = o.AppendUint16(h, etCore)
	h = o.AppendUint16(h, machine)
	h = o.AppendUint32(h, 1)           // e_version
	h = o.AppendUint64(h, 0)           // e_entry
	h = o.AppendUint64(h, elfHdrSize)  // e_phoff
	h = o.AppendUint64(h, 0)           // e_shoff
	h = o.AppendUint32(h, 0)           // e_flags
	h = o.AppendUint16(h, elfHdrSize)  // e_ehsize
	h = o.AppendUint16(h, elfPhdrSize) // e_phentsize
	h = o.AppendUint16(h, uint16(phnum))
	h = o.AppendUint16(h, 0) // e_shentsize
	h = o.AppendUint16(h, 0) // e_shnum
	h = o.AppendUint16(h, 0) // e_shstrndx
	h = appendPhdr(h, o, ptNote, 0, noteOff, 0, uint64(len(noteBytes)), 0, 4)
	off := dataOff
	for _, m := range maps {
		var fl uint32
		if m.perm&cpu.PermR != 0 {
			fl |= pfR
		}
		if m.perm&cpu.PermW != 0 {
			fl |= pfW
		}
		if m.perm&cpu.PermX != 0 {
			fl |= pfX
		}
		h = appendPhdr(h, o, ptLoad, fl, off, m.start, m.dump, m.end-m.start, cpu.PageSize)
		off += m.dump
	}
	h = append(h, noteBytes...)
	h = append(h, make([]byte, dataOff-uint64(len(h)))...)
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, m := range maps {
		for a := m.start; a < m.start+m.dump; a += cpu.PageSize {
			b := zeroPage[:]
			if pg := p.Mem.PageAt(a); pg != nil {
				b = pg.Bytes()[:]
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
	}
	return nil
}

var zeroPage [cpu.PageSize]byte

// appendOrder is the guest's byte order (binary's orders both append).
func (p *Process) appendOrder() binary.AppendByteOrder {
	return p.Arch.ByteOrder.(binary.AppendByteOrder)
}

func elfData(o binary.AppendByteOrder) byte {
	if o == binary.BigEndian {
		return 2 // ELFDATA2MSB
	}
	return 1 // ELFDATA2LSB
}

func appendPhdr(b []byte, o binary.AppendByteOrder, typ, flags uint32, off, vaddr, filesz, memsz, align uint64) []byte {
	b = o.AppendUint32(b, typ)
	b = o.AppendUint32(b, flags)
	b = o.AppendUint64(b, off)
	b = o.AppendUint64(b, vaddr)
	b = o.AppendUint64(b, 0) // p_paddr
	b = o.AppendUint64(b, filesz)
	b = o.AppendUint64(b, memsz)
	return o.AppendUint64(b, align)
}

// appendNote appends an Elf64_Nhdr, the name (NUL-terminated) and the
// descriptor, each padded to 4 bytes.
func appendNote(b []byte, o binary.AppendByteOrder, n coreNote) []byte {
	b = o.AppendUint32(b, uint32(len(n.name)+1))
	b = o.AppendUint32(b, uint32(len(n.desc)))
	b = o.AppendUint32(b, n.typ)
	b = append(b, n.name...)
	b = append(b, make([]byte, 4-len(n.name)%4)...) // the NUL and the padding
	b = append(b, n.desc...)
	return append(b, make([]byte, (4-len(n.desc)%4)%4)...)
}

// coreThreads is the siginfo of the death and every thread's state, the
// dying (running) thread first and the others in tid order.
func (p *Process) coreThreads(f *cpu.Fault) (sigInfo, []coreThread, error) {
	sig := f.Signal()
	var info sigInfo
	adjustPC, resume := false, uint64(0)
	switch {
	case p.fatal != nil && p.fatal.signo == sig:
		// Its default action ended the process: the registers are
		// as the signal found them.
		info = *p.fatal
	default:
		// The run ended at the fault itself (no handler): the
		// registers are as Linux leaves them for the signal, the pc
		// where the signal frame would resume (after a suppressing
		// s390x program exception).
		info = sigInfo{signo: sig, code: siKernel, kind: siKindKill}
		if abi := sigABIFor(p.Arch); abi != nil && !f.Retired {
			if in, r, ok := abi.faultSignal(p, f); ok && in.signo == sig {
				info, adjustPC, resume = in, true, r
			}
		}
	}
	ids := p.ThreadIDs()
	cur := p.CurrentTid()
	slices.SortStableFunc(ids, func(a, b uint64) int {
		switch {
		case a == cur && b != cur:
			return -1
		case b == cur && a != cur:
			return 1
		}
		return 0
	})
	var out []coreThread
	for _, tid := range ids {
		t := coreThread{tid: tid}
		tls, ok := p.ThreadState(tid, &t.st)
		if !ok {
			if tid != cur {
				continue
			}
			p.Core.State(&t.st) // a core without thread contexts: the one thread
		}
		t.tls = tls
		if th := p.threadByTid(tid); th != nil {
			t.mask, t.pend = th.sig.mask, th.sig.pendingSet()
		}
		if tid == cur && adjustPC {
			t.st.PC = resume
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return info, nil, fmt.Errorf("core dump: no thread state")
	}
	return info, out, nil
}

// prstatus is a thread's struct elf_prstatus: the signal, its masks, the
// ids, zero times, the general registers (elf_gregset_t) and pr_fpvalid.
func (p *Process) prstatus(t *coreThread, sig int) []byte {
	o := p.appendOrder()
	b := make([]byte, 0, 400)
	b = o.AppendUint32(b, uint32(sig)) // pr_info.si_signo
	b = o.AppendUint32(b, 0)           // si_code
	b = o.AppendUint32(b, 0)           // si_errno
	b = o.AppendUint16(b, uint16(sig)) // pr_cursig
	b = append(b, 0, 0)
	b = o.AppendUint64(b, t.pend)
	b = o.AppendUint64(b, t.mask)
	b = o.AppendUint32(b, uint32(t.tid))              // pr_pid
	b = o.AppendUint32(b, 1)                          // pr_ppid (getppid's)
	b = o.AppendUint32(b, uint32(p.selfPID()))        // pr_pgrp
	b = o.AppendUint32(b, uint32(p.selfPID()))        // pr_sid
	b = append(b, make([]byte, 64)...)                // pr_utime, pr_stime, pr_cutime, pr_cstime
	b = p.appendGregs(b, t)                           // pr_reg
	b = o.AppendUint32(b, 1)                          // pr_fpvalid
	return append(b, make([]byte, (8-len(b)%8)%8)...) // the struct's alignment
}

// appendGregs appends elf_gregset_t: arm64's struct user_pt_regs (x0-x30,
// sp, pc, pstate), s390x's s390_regs (the PSW mask and address, r0-r15,
// a0-a15, orig_gpr2).
func (p *Process) appendGregs(b []byte, t *coreThread) []byte {
	o := p.appendOrder()
	st := &t.st
	if p.Arch.Name == "arm64" {
		for i := 0; i < 32; i++ {
			b = o.AppendUint64(b, st.GPR[i])
		}
		b = o.AppendUint64(b, st.PC)
		return o.AppendUint64(b, (st.Flags&15)<<28)
	}
	b = o.AppendUint64(b, s390xUserPSWMask|(st.Flags&3)<<44)
	b = o.AppendUint64(b, st.PC)
	for i := 0; i < 16; i++ {
		b = o.AppendUint64(b, st.GPR[i])
	}
	for i := 0; i < 16; i++ {
		b = o.AppendUint32(b, st.AR[i])
	}
	return o.AppendUint64(b, 0) // orig_gpr2: not in a syscall
}

// s390xUserPSWMask is the PSW mask of a 64-bit program as qemu-user
// keeps it (extended and basic addressing, z/Architecture Principles of
// Operation, "Program-Status Word"), the condition code going in bits
// 45:44; the gdb stub shows the same.
const s390xUserPSWMask = 0x180000000

// coreRegsets are a thread's register sets after NT_PRSTATUS.
func (p *Process) coreRegsets(t *coreThread) []coreNote {
	o := p.appendOrder()
	st := &t.st
	var fp []byte
	if p.Arch.Name == "arm64" {
		// struct user_fpsimd_state: v0-v31, fpsr, fpcr, two reserved words.
		for i := 0; i < 32; i++ {
			fp = o.AppendUint64(fp, st.Vec[i][1])
			fp = o.AppendUint64(fp, st.Vec[i][0])
		}
		fp = o.AppendUint32(fp, uint32(st.FPSR))
		fp = o.AppendUint32(fp, uint32(st.FPCR))
		fp = append(fp, make([]byte, 8)...)
		notes := []coreNote{{"CORE", ntPrfpreg, fp}, {"LINUX", ntArmTLS, o.AppendUint64(nil, t.tls)}}
		if pa, ok := p.Core.(interface{ PAuthEnabled() bool }); ok && pa.PAuthEnabled() {
			// struct user_pac_mask: the data and instruction masks,
			// bits 54:48 for 48-bit virtual addresses (Linux's
			// ptrauth_user_pac_mask).
			const mask = 0x007f000000000000
			notes = append(notes, coreNote{"LINUX", ntArmPACMask, o.AppendUint64(o.AppendUint64(nil, mask), mask)})
		}
		return notes
	}
	// s390_fp_regs: fpc, a pad word, f0-f15 (the high halves of v0-v15).
	fp = o.AppendUint32(fp, uint32(st.FPCR))
	fp = o.AppendUint32(fp, 0)
	var low, high []byte
	for i := 0; i < 16; i++ {
		fp = o.AppendUint64(fp, st.Vec[i][0])
		low = o.AppendUint64(low, st.Vec[i][1])
	}
	for i := 16; i < 32; i++ {
		high = o.AppendUint64(high, st.Vec[i][0])
		high = o.AppendUint64(high, st.Vec[i][1])
	}
	return []coreNote{{"CORE", ntPrfpreg, fp}, {"LINUX", ntS390VxrsLow, low}, {"LINUX", ntS390VxrsHi, high}}
}

// prpsinfo is struct elf_prpsinfo: state R, the flags of a process
// dumping core after a signal (PF_DUMPCORE|PF_SIGNALED), the ids, the
// command name and the arguments joined by spaces.
func (p *Process) prpsinfo() []byte {
	o := p.appendOrder()
	b := make([]byte, 0, prpsinfoSize)
	b = append(b, 0, 'R', 0, 0)
	b = append(b, 0, 0, 0, 0)
	b = o.AppendUint64(b, 0x600)
	b = o.AppendUint32(b, guestUID)
	b = o.AppendUint32(b, guestUID)
	b = o.AppendUint32(b, uint32(p.selfPID()))
	b = o.AppendUint32(b, 1)
	b = o.AppendUint32(b, uint32(p.selfPID()))
	b = o.AppendUint32(b, uint32(p.selfPID()))
	var fname [16]byte
	copy(fname[:15], p.comm())
	b = append(b, fname[:]...)
	var args [prArgSize]byte
	copy(args[:prArgSize-1], strings.Join(p.Cfg.Args, " "))
	return append(b, args[:]...)
}

// coreSiginfo is the 128-byte siginfo_t of the signal that killed.
func (p *Process) coreSiginfo(in sigInfo) []byte {
	o := p.order()
	b := make([]byte, 128)
	o.PutUint32(b, uint32(in.signo))
	o.PutUint32(b[4:], uint32(in.errno))
	o.PutUint32(b[8:], uint32(in.code))
	switch in.kind {
	case siKindKill:
		o.PutUint32(b[16:], in.pid)
		o.PutUint32(b[20:], in.uid)
	case siKindRT:
		o.PutUint32(b[16:], in.pid)
		o.PutUint32(b[20:], in.uid)
		o.PutUint64(b[24:], in.value)
	case siKindFault:
		o.PutUint64(b[16:], in.addr)
	}
	return b
}

// coreAuxv is the auxiliary vector, AT_NULL included.
func (p *Process) coreAuxv() []byte {
	var b []byte
	for _, a := range p.auxv {
		b = p.appendOrder().AppendUint64(b, a[0])
		b = p.appendOrder().AppendUint64(b, a[1])
	}
	return b
}

// coreFileNote is NT_FILE: the count, the page size, each file
// mapping's start, end and offset in pages, then the names.
func (p *Process) coreFileNote(maps []coreMap) []byte {
	o := p.appendOrder()
	var files []coreMap
	for _, m := range maps {
		if isFileName(m.name) {
			files = append(files, m)
		}
	}
	b := o.AppendUint64(nil, uint64(len(files)))
	b = o.AppendUint64(b, cpu.PageSize)
	for _, m := range files {
		b = o.AppendUint64(b, m.start)
		b = o.AppendUint64(b, m.end)
		b = o.AppendUint64(b, m.off/cpu.PageSize)
	}
	for _, m := range files {
		b = append(b, m.name...)
		b = append(b, 0)
	}
	return b
}

func isFileName(name string) bool { return name != "" && !strings.HasPrefix(name, "[") }

// coreMaps lists the mappings as /proc/self/maps does, with how much of
// each the core holds (coredump_filter 0x33, see the top of the file).
func (p *Process) coreMaps() []coreMap {
	var out []coreMap
	for _, r := range p.Mem.Regions() {
		for _, part := range p.splitByObject(r) {
			name, off, _, _ := p.regionName(part.Start)
			m := coreMap{start: part.Start, end: part.End, perm: part.Perm, name: name, off: off}
			switch {
			case !isFileName(name):
				if p.anyTouched(m.start, m.end) {
					m.dump = m.end - m.start
				}
			case p.sharedAt(m.start):
				// MAP_SHARED file mappings: not in the default filter.
			case m.perm&cpu.PermW != 0, p.wroteFileMap(m.start, m.end):
				// Writable, or written once (a RELRO page ld.so relocated
				// and then made read-only): Linux keeps the written pages
				// of a private file mapping as anonymous memory and dumps
				// such a mapping whole (coredump_filter bit 0).
				m.dump = m.end - m.start
			case m.off == 0 && m.perm&cpu.PermR != 0 && p.elfHeaderAt(m.start):
				m.dump = cpu.PageSize
			}
			out = append(out, m)
		}
	}
	return out
}

// wroteFileMap reports whether the process wrote into the private file
// mapping [start, end): whether a page's bytes differ from the file's
// where the file backs them. (simrun keeps no dirty bit for file pages;
// a page written back with its own bytes counts as unwritten.)
func (p *Process) wroteFileMap(start, end uint64) bool {
	for a := start; a < end; a += cpu.PageSize {
		pg := p.Mem.PageAt(a)
		if pg == nil || !pg.Touched() {
			continue
		}
		for _, r := range p.fileBacking(a) {
			f, err := os.Open(r.host)
			if err != nil {
				continue
			}
			want := make([]byte, r.n)
			n, _ := f.ReadAt(want, int64(r.off))
			f.Close()
			got := pg.Bytes()[r.pageOff : r.pageOff+r.n]
			// Past the file's end the page reads as zeros.
			if !bytes.Equal(got[:n], want[:n]) || !allZero(got[n:]) {
				return true
			}
		}
	}
	return false
}

// backing is the part of a page a file backs: bytes [pageOff,
// pageOff+n) of the page are the file's at off.
type backing struct {
	host       string
	off        uint64
	pageOff, n uint64
}

// fileBacking lists what files back the page at addr: an mmap of a
// file backs it whole; a segment of the program or the interpreter
// backs the bytes of its file image (not the bss after them, nor a
// neighbouring segment's bytes sharing the page).
func (p *Process) fileBacking(addr uint64) []backing {
	if m, ok := p.fileMapAt(addr); ok {
		return []backing{{host: m.path, off: m.off + addr - m.start, pageOff: 0, n: cpu.PageSize}}
	}
	var out []backing
	for _, img := range []*cpu.Image{p.Image, p.Interp} {
		if img == nil || addr < img.Start || addr >= img.End {
			continue
		}
		for _, sg := range img.Segments {
			lo, hi := max(addr, sg.Vaddr), min(addr+cpu.PageSize, sg.Vaddr+sg.Filesz)
			if lo < hi {
				out = append(out, backing{host: exePath(img.Path), off: sg.Offset + lo - sg.Vaddr, pageOff: lo - addr, n: hi - lo})
			}
		}
	}
	return out
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func (p *Process) anyTouched(start, end uint64) bool {
	for a := start; a < end; a += cpu.PageSize {
		if pg := p.Mem.PageAt(a); pg != nil && pg.Touched() {
			return true
		}
	}
	return false
}

func (p *Process) elfHeaderAt(addr uint64) bool {
	pg := p.Mem.PageAt(addr)
	return pg != nil && bytes.HasPrefix(pg.Bytes()[:], []byte("\x7fELF"))
}

func (p *Process) sharedAt(addr uint64) bool {
	for _, s := range p.shared {
		if addr >= s.addr && addr-s.addr < s.size {
			return true
		}
	}
	return false
}
