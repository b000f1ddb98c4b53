package linux

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"simrun/sim/cpu"
)

const (
	stackSize  = 8 << 20
	brkReserve = 32 << 20
	// maxFileSize bounds the program and interpreter files simrun reads
	// whole (1 GiB).
	maxFileSize = 1 << 30
)

// DefaultSysroot is the sysroot a dynamically linked program of arch gets
// when none is given: Debian's cross-toolchain sysroot
// (/usr/aarch64-linux-gnu, /usr/s390x-linux-gnu), if its interpreter is
// there.
func DefaultSysroot(arch *cpu.Arch) string {
	if arch.GNUTriple == "" {
		return ""
	}
	return "/usr/" + arch.GNUTriple
}

// readProgram reads an executable or shared object whole, after checking
// that it is a regular file of a sensible size.
func readProgram(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return nil, &cpu.LoadError{Path: path, Msg: "is a directory, not a program"}
	case !st.Mode().IsRegular():
		return nil, &cpu.LoadError{Path: path, Msg: fmt.Sprintf("is a %s, not a regular file", fileType(st.Mode()))}
	case st.Size() > maxFileSize:
		return nil, &cpu.LoadError{Path: path, Msg: fmt.Sprintf("%d bytes: larger than simrun loads (%d)", st.Size(), maxFileSize)}
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

func fileType(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// exec lays the program out as qemu-user 7.2 does: the image (a PIE at the
// arch's mmap base, with a 32 MiB brk reservation after it), the stack,
// the interpreter at the next free place, the signal trampoline page; then
// the initial stack, with the pc at the interpreter's entry (or the
// program's, for a static one).
func (p *Process) exec(path string, data []byte, f *elf.File) error {
	arch := p.Arch
	p.mmapNext = arch.MmapBase
	img, err := cpu.LoadELF(p.Mem, path, data, arch.MmapBase)
	if err != nil {
		return err
	}
	p.Image = img
	if img.Bias != 0 {
		p.mmapNext = img.End + brkReserve
	}
	p.brkStart, p.brk = img.BrkStart, img.BrkStart
	if err := p.mapStack(); err != nil {
		return err
	}
	p.Sysroot = p.Cfg.Sysroot
	if p.root != "" {
		p.Sysroot = "" // the root is the guest's whole file system
	}
	if img.Interp != "" {
		if p.Sysroot == "" && !p.Cfg.NoSysroot && p.root == "" {
			if d := DefaultSysroot(arch); d != "" && exists(filepath.Join(d, img.Interp)) {
				p.Sysroot = d
			}
		}
		if err := p.loadInterp(path, img.Interp); err != nil {
			return err
		}
	}
	if p.Cfg.NoSysroot {
		p.Sysroot = ""
	}
	if err := p.mapSigTramp(); err != nil {
		return err
	}
	sp, err := p.writeStack()
	if err != nil {
		return err
	}
	p.Core.SetStack(sp)
	if p.Interp != nil {
		p.Core.SetPC(p.Interp.Entry)
	} else {
		p.Core.SetPC(img.Entry)
	}
	return nil
}

// loadInterp finds the program's interpreter through the sysroot and maps
// it at the first free place after the stack.
func (p *Process) loadInterp(prog, name string) error {
	host, tried := p.lookupAbs(name)
	data, err := readProgram(host)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			hint := "give the sysroot that holds it with -L DIR or SIMRUN_LD_PREFIX"
			if d := DefaultSysroot(p.Arch); d != "" {
				hint += fmt.Sprintf(" (Debian: apt-get install libc6-dev-%s-cross puts it under %s)", p.Arch.Name, d)
			}
			return &cpu.LoadError{Path: prog, Msg: fmt.Sprintf("dynamically linked, and its interpreter %s is not found (looked for %s); %s",
				name, strings.Join(tried, " and "), hint)}
		}
		return fmt.Errorf("%s: interpreter: %w", prog, err)
	}
	ef, arch, err := cpu.ParseELF(host, data)
	if err != nil {
		return fmt.Errorf("%s: interpreter: %w", prog, err)
	}
	if arch != p.Arch {
		return &cpu.LoadError{Path: host, Msg: fmt.Sprintf("interpreter of the %s program %s is a %s file", p.Arch.Name, prog, arch.Name)}
	}
	if ef.Type != elf.ET_DYN {
		return &cpu.LoadError{Path: host, Msg: fmt.Sprintf("interpreter is ELF type %v, not a shared object", ef.Type)}
	}
	var span uint64
	for _, ph := range ef.Progs {
		if ph.Type == elf.PT_LOAD {
			span = max(span, ph.Vaddr+ph.Memsz)
		}
	}
	span = (span + cpu.PageMask) &^ cpu.PageMask
	base, ok := p.Mem.FindFree(p.mmapNext, max(span, cpu.PageSize), 1<<47)
	if !ok {
		return &cpu.LoadError{Path: host, Msg: "no room in the address space for the interpreter"}
	}
	img, err := cpu.LoadELF(p.Mem, host, data, base)
	if err != nil {
		return err
	}
	if img.Interp != "" {
		return &cpu.LoadError{Path: host, Msg: fmt.Sprintf("the interpreter asks for an interpreter itself (%s)", img.Interp)}
	}
	p.Interp = img
	p.mmapNext = img.End
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
