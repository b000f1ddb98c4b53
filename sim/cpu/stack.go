package cpu

import "fmt"

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

// setupStack maps the stack and writes the process's initial stack in the
// layout Linux (and qemu-user) use, top down:
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
func (m *Machine) setupStack() (uint64, error) {
	base, ok := m.Mem.FindFree(m.os.mmapNext, stackSize+PageSize, 1<<56)
	if !ok {
		return 0, fmt.Errorf("no room for the stack above 0x%x", m.os.mmapNext)
	}
	if err := m.Mem.Map(base, PageSize, 0); err != nil { // guard page
		return 0, err
	}
	if err := m.Mem.Map(base+PageSize, stackSize, PermRW); err != nil {
		return 0, err
	}
	top := base + PageSize + stackSize
	m.os.stackTop = top
	m.os.mmapNext = top
	if m.Arch.SigTramp != nil {
		if err := m.Mem.Map(top, PageSize, PermR|PermX); err != nil {
			return 0, err
		}
		if err := m.Mem.Poke(top, m.Arch.SigTramp); err != nil {
			return 0, err
		}
		m.os.sigTramp = top
		m.os.mmapNext = top + PageSize
	}

	order := m.Arch.ByteOrder
	p := top - 8
	push := func(s string) uint64 {
		p -= uint64(len(s) + 1)
		_ = m.Mem.Poke(p, append([]byte(s), 0))
		return p
	}
	args, env := m.Cfg.Args, m.Cfg.Env
	if len(args)+len(env) > 1<<16 {
		return 0, fmt.Errorf("too many arguments and environment strings (%d)", len(args)+len(env))
	}
	size := len(m.Image.Path) + 1
	for _, s := range append(append([]string(nil), args...), env...) {
		size += len(s) + 1
	}
	if size > stackSize/4 {
		return 0, fmt.Errorf("arguments and environment take %d bytes: more than the %d the stack allows", size, stackSize/4)
	}
	execfn := push(m.Image.Path)
	envp := make([]uint64, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		envp[i] = push(env[i])
	}
	argv := make([]uint64, len(args))
	for i := len(args) - 1; i >= 0; i-- {
		argv[i] = push(args[i])
	}
	sp := p
	var platform uint64
	if m.Arch.Platform != "" {
		n := uint64(len(m.Arch.Platform)+1+7) &^ 7
		sp -= n
		platform = sp
		_ = m.Mem.Poke(sp, []byte(m.Arch.Platform))
	}
	sp = sp&^15 - 16
	random := sp
	var rnd [16]byte
	m.rng.fill(rnd[:])
	_ = m.Mem.Poke(random, rnd[:])

	aux := [][2]uint64{
		{AT_PHDR, m.Image.Phdr},
		{AT_PHENT, m.Image.Phent},
		{AT_PHNUM, m.Image.Phnum},
		{AT_PAGESZ, PageSize},
		{AT_BASE, 0},
		{AT_FLAGS, 0},
		{AT_ENTRY, m.Image.Entry},
		{AT_UID, uint64(guestUID)},
		{AT_EUID, uint64(guestUID)},
		{AT_GID, uint64(guestUID)},
		{AT_EGID, uint64(guestUID)},
		{AT_HWCAP, m.Arch.HWCAP},
		{AT_CLKTCK, 100},
		{AT_RANDOM, random},
		{AT_SECURE, 0},
		{AT_EXECFN, execfn},
	}
	if m.Arch.HasHWCAP2 {
		aux = append(aux, [2]uint64{AT_HWCAP2, m.Arch.HWCAP2})
	}
	if platform != 0 {
		aux = append(aux, [2]uint64{AT_PLATFORM, platform})
	}
	aux = append(aux, [2]uint64{AT_NULL, 0})
	m.os.auxv = aux

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
	if err := m.Mem.Poke(sp, w); err != nil {
		return 0, err
	}
	return sp, nil
}
