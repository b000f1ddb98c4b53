package linux

import (
	"fmt"
	"simrun/sim/cpu"
)

// Auxiliary vector entry types.
const (
	AT_NULL     = 0
	AT_PHDR     = 3
	AT_PHENT    = 4
	AT_PHNUM    = 5
	AT_PAGESZ   = 6
	AT_BASE     = 7
	AT_FLAGS    = 8
	AT_ENTRY    = 9
	AT_UID      = 11
	AT_EUID     = 12
	AT_GID      = 13
	AT_EGID     = 14
	AT_PLATFORM = 15
	AT_HWCAP    = 16
	AT_CLKTCK   = 17
	AT_SECURE   = 23
	AT_RANDOM   = 25
	AT_HWCAP2   = 26
	AT_EXECFN   = 31
)

// mapStack maps the stack (8 MiB below a guard page) at the first free
// place from mmapNext, as qemu-user 7.2 does after loading the program.
func (p *Process) mapStack() error {
	base, ok := p.Mem.FindFree(p.mmapNext, stackSize+cpu.PageSize, 1<<56)
	if !ok {
		return fmt.Errorf("no room for the stack above 0x%x", p.mmapNext)
	}
	if err := p.Mem.Map(base, cpu.PageSize, 0); err != nil { // guard page
		return err
	}
	if err := p.Mem.Map(base+cpu.PageSize, stackSize, cpu.PermRW); err != nil {
		return err
	}
	p.stackTop = base + cpu.PageSize + stackSize
	p.mmapNext = p.stackTop
	return nil
}

// mapSigTramp maps the page with the arch's rt_sigreturn trampoline at
// the next free place, as qemu-user 7.2 does after the program and its
// interpreter.
func (p *Process) mapSigTramp() error {
	if p.Arch.SigTramp == nil {
		return nil
	}
	at, ok := p.Mem.FindFree(p.mmapNext, cpu.PageSize, 1<<56)
	if !ok {
		return fmt.Errorf("no room for the signal trampoline above 0x%x", p.mmapNext)
	}
	if err := p.Mem.Map(at, cpu.PageSize, cpu.PermR|cpu.PermX); err != nil {
		return err
	}
	if err := p.Mem.Poke(at, p.Arch.SigTramp); err != nil {
		return err
	}
	p.sigTramp = at
	p.mmapNext = at + cpu.PageSize
	return nil
}

// writeStack writes the process's initial stack in the layout Linux (and
// qemu-user) use, top down:
//
//	top ─▶ 8 zero bytes
//	       execfn string            (AT_EXECFN)
//	       envp strings, argv strings (in order, argv[0] lowest)
//	       platform string, padded to 8 (AT_PLATFORM)
//	       16 random bytes, 16-aligned   (AT_RANDOM)
//	       auxv pairs, AT_NULL
//	       NULL, envp[], NULL, argv[], argc ◀─ sp (16-aligned)
//
// It returns the initial stack pointer.
func (p *Process) writeStack() (uint64, error) {
	top := p.stackTop
	order := p.Arch.ByteOrder
	at := top - 8
	push := func(s string) uint64 {
		at -= uint64(len(s) + 1)
		_ = p.Mem.Poke(at, append([]byte(s), 0))
		return at
	}
	args, env := p.Cfg.Args, p.Cfg.Env
	if len(args)+len(env) > 1<<16 {
		return 0, fmt.Errorf("too many arguments and environment strings (%d)", len(args)+len(env))
	}
	size := len(p.Image.Path) + 1
	for _, s := range append(append([]string(nil), args...), env...) {
		size += len(s) + 1
	}
	if size > stackSize/4 {
		return 0, fmt.Errorf("arguments and environment take %d bytes: more than the %d the stack allows", size, stackSize/4)
	}
	execfn := push(p.Image.Path)
	envp := make([]uint64, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		envp[i] = push(env[i])
	}
	argv := make([]uint64, len(args))
	for i := len(args) - 1; i >= 0; i-- {
		argv[i] = push(args[i])
	}
	sp := at
	var platform uint64
	if p.Arch.Platform != "" {
		n := uint64(len(p.Arch.Platform)+1+7) &^ 7
		sp -= n
		platform = sp
		_ = p.Mem.Poke(sp, []byte(p.Arch.Platform))
	}
	sp = sp&^15 - 16
	random := sp
	var rnd [16]byte
	p.rng.fill(rnd[:])
	_ = p.Mem.Poke(random, rnd[:])

	var interpBase uint64
	if p.Interp != nil {
		interpBase = p.Interp.Bias
	}
	aux := [][2]uint64{
		{AT_PHDR, p.Image.Phdr},
		{AT_PHENT, p.Image.Phent},
		{AT_PHNUM, p.Image.Phnum},
		{AT_PAGESZ, cpu.PageSize},
		{AT_BASE, interpBase},
		{AT_FLAGS, 0},
		{AT_ENTRY, p.Image.Entry},
		{AT_UID, uint64(guestUID)},
		{AT_EUID, uint64(guestUID)},
		{AT_GID, uint64(guestUID)},
		{AT_EGID, uint64(guestUID)},
		{AT_HWCAP, p.Arch.HWCAP},
		{AT_CLKTCK, 100},
		{AT_RANDOM, random},
		{AT_SECURE, 0},
		{AT_EXECFN, execfn},
	}
	if p.Arch.HasHWCAP2 {
		aux = append(aux, [2]uint64{AT_HWCAP2, p.Arch.HWCAP2})
	}
	if platform != 0 {
		aux = append(aux, [2]uint64{AT_PLATFORM, platform})
	}
	aux = append(aux, [2]uint64{AT_NULL, 0})
	p.auxv = aux

	words := 1 + len(argv) + 1 + len(envp) + 1 + 2*len(aux)
	sp = (sp - uint64(words)*8) &^ 15
	w := make([]byte, 0, words*8)
	put := func(v uint64) { w = appendU64(order, w, v) }
	put(uint64(len(argv)))
	for _, a := range argv {
		put(a)
	}
	put(0)
	for _, e := range envp {
		put(e)
	}
	put(0)
	for _, a := range aux {
		put(a[0])
		put(a[1])
	}
	if err := p.Mem.Poke(sp, w); err != nil {
		return 0, err
	}
	return sp, nil
}
