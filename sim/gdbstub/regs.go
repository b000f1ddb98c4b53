package gdbstub

import (
	"encoding/binary"
	"fmt"
	"strings"

	"simrun/sim/cpu"
)

// reg is one register of a target description: its place in the 'g'
// packet is its index in the layout, its bytes are its value in the
// target's byte order.
type reg struct {
	name    string
	bits    int // 32, 64 or 128
	typ     string
	feature string
	// get returns the value (hi: bits 127:64 of a 128-bit register);
	// set stores one.
	get func(st *cpu.State) (lo, hi uint64)
	set func(st *cpu.State, lo, hi uint64)
}

// layout is an architecture's registers as gdb sees them.
type layout struct {
	arch  string // the tdesc <architecture>
	order binary.ByteOrder
	regs  []reg
	// typesFor maps a feature to the type definitions it needs.
	typesFor map[string]string
	xml      string
	// watchBefore: gdb treats this architecture's watchpoints as
	// non-steppable (aarch64): the target reports a hit before the
	// accessing instruction runs, as Linux's debug exception does, and
	// gdb steps over it with its watchpoints removed. Otherwise (s390x)
	// the report comes after the access.
	watchBefore bool
}

// size is the length in bytes of a 'g' packet's data.
func (l *layout) size() int {
	n := 0
	for _, r := range l.regs {
		n += r.bits / 8
	}
	return n
}

// appendReg appends register r's bytes in the target's order.
func (l *layout) appendReg(dst []byte, r *reg, st *cpu.State) []byte {
	lo, hi := r.get(st)
	var b [16]byte
	switch r.bits {
	case 32:
		l.order.PutUint32(b[:], uint32(lo))
		return append(dst, b[:4]...)
	case 64:
		l.order.PutUint64(b[:], lo)
		return append(dst, b[:8]...)
	}
	if l.order == binary.BigEndian {
		binary.BigEndian.PutUint64(b[:], hi)
		binary.BigEndian.PutUint64(b[8:], lo)
	} else {
		binary.LittleEndian.PutUint64(b[:], lo)
		binary.LittleEndian.PutUint64(b[8:], hi)
	}
	return append(dst, b[:]...)
}

// setReg stores register r from b (r.bits/8 bytes in the target's order).
func (l *layout) setReg(r *reg, st *cpu.State, b []byte) {
	switch r.bits {
	case 32:
		r.set(st, uint64(l.order.Uint32(b)), 0)
	case 64:
		r.set(st, l.order.Uint64(b), 0)
	default:
		if l.order == binary.BigEndian {
			r.set(st, binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b))
		} else {
			r.set(st, binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]))
		}
	}
}

// layoutFor returns the register layout of arch, or an error naming it;
// pauth adds arm64's pointer-authentication masks.
func layoutFor(a *cpu.Arch, pauth bool) (*layout, error) {
	var l *layout
	switch a.Name {
	case "arm64":
		l = arm64Layout()
		l.watchBefore = true
		if pauth {
			addPAuth(l)
		}
	case "s390x":
		l = s390xLayout()
	default:
		return nil, fmt.Errorf("gdb stub: no register layout for %s", a.Name)
	}
	l.xml = l.targetXML()
	return l, nil
}

func gpr(i int) (func(*cpu.State) (uint64, uint64), func(*cpu.State, uint64, uint64)) {
	return func(st *cpu.State) (uint64, uint64) { return st.GPR[i], 0 },
		func(st *cpu.State, v, _ uint64) { st.GPR[i] = v }
}

// vec128 is vector register i whole; vecHi and vecLo its halves.
func vec128(i int) (func(*cpu.State) (uint64, uint64), func(*cpu.State, uint64, uint64)) {
	return func(st *cpu.State) (uint64, uint64) { return st.Vec[i][1], st.Vec[i][0] },
		func(st *cpu.State, lo, hi uint64) { st.Vec[i] = [2]uint64{hi, lo} }
}

func vecHalf(i, half int) (func(*cpu.State) (uint64, uint64), func(*cpu.State, uint64, uint64)) {
	return func(st *cpu.State) (uint64, uint64) { return st.Vec[i][half], 0 },
		func(st *cpu.State, v, _ uint64) { st.Vec[i][half] = v }
}

func add(l *layout, name string, bits int, typ, feature string, get func(*cpu.State) (uint64, uint64), set func(*cpu.State, uint64, uint64)) {
	l.regs = append(l.regs, reg{name: name, bits: bits, typ: typ, feature: feature, get: get, set: set})
}

// arm64Layout follows the register sets gdb knows for AArch64 Linux: the
// org.gnu.gdb.aarch64.core feature (x0-x30, sp, pc, cpsr) and
// org.gnu.gdb.aarch64.fpu (v0-v31, fpsr, fpcr), in that order, so gdb's
// numbers 0-67 are the remote numbers too. cpsr holds NZCV in bits 31:28
// (Arm ARM, PSTATE and SPSR); a user program's other bits read as zero.
func arm64Layout() *layout {
	const core, fpu = "org.gnu.gdb.aarch64.core", "org.gnu.gdb.aarch64.fpu"
	l := &layout{arch: "aarch64", order: binary.LittleEndian}
	for i := 0; i < 31; i++ {
		g, s := gpr(i)
		add(l, fmt.Sprintf("x%d", i), 64, "int", core, g, s)
	}
	g, s := gpr(31)
	add(l, "sp", 64, "data_ptr", core, g, s)
	add(l, "pc", 64, "code_ptr", core,
		func(st *cpu.State) (uint64, uint64) { return st.PC, 0 },
		func(st *cpu.State, v, _ uint64) { st.PC = v })
	add(l, "cpsr", 32, "cpsr_flags", core,
		func(st *cpu.State) (uint64, uint64) { return (st.Flags & 15) << 28, 0 },
		func(st *cpu.State, v, _ uint64) { st.Flags = v >> 28 & 15 })
	for i := 0; i < 32; i++ {
		g, s := vec128(i)
		add(l, fmt.Sprintf("v%d", i), 128, "aarch64v", fpu, g, s)
	}
	add(l, "fpsr", 32, "int", fpu,
		func(st *cpu.State) (uint64, uint64) { return st.FPSR, 0 },
		func(st *cpu.State, v, _ uint64) { st.FPSR = v })
	add(l, "fpcr", 32, "int", fpu,
		func(st *cpu.State) (uint64, uint64) { return st.FPCR, 0 },
		func(st *cpu.State, v, _ uint64) { st.FPCR = v })
	l.typesFor = map[string]string{
		core: `<flags id="cpsr_flags" size="4">` +
			`<field name="V" start="28" end="28"/><field name="C" start="29" end="29"/>` +
			`<field name="Z" start="30" end="30"/><field name="N" start="31" end="31"/></flags>`,
		fpu: `<vector id="v2d" type="ieee_double" count="2"/>` +
			`<vector id="v2u" type="uint64" count="2"/>` +
			`<vector id="v2i" type="int64" count="2"/>` +
			`<vector id="v4f" type="ieee_single" count="4"/>` +
			`<vector id="v4u" type="uint32" count="4"/>` +
			`<vector id="v4i" type="int32" count="4"/>` +
			`<vector id="v8u" type="uint16" count="8"/>` +
			`<vector id="v8i" type="int16" count="8"/>` +
			`<vector id="v16u" type="uint8" count="16"/>` +
			`<vector id="v16i" type="int8" count="16"/>` +
			`<union id="vnd"><field name="f" type="v2d"/><field name="u" type="v2u"/><field name="s" type="v2i"/></union>` +
			`<union id="vns"><field name="f" type="v4f"/><field name="u" type="v4u"/><field name="s" type="v4i"/></union>` +
			`<union id="vnh"><field name="u" type="v8u"/><field name="s" type="v8i"/></union>` +
			`<union id="vnb"><field name="u" type="v16u"/><field name="s" type="v16i"/></union>` +
			`<union id="vnq"><field name="u" type="uint128"/><field name="s" type="int128"/></union>` +
			`<union id="aarch64v"><field name="d" type="vnd"/><field name="s" type="vns"/>` +
			`<field name="h" type="vnh"/><field name="b" type="vnb"/><field name="q" type="vnq"/></union>`,
	}
	return l
}

// pacMask is the mask of the bits pointer authentication puts its code
// in, for data and instruction addresses alike: bits 54:48, the bits
// above a 48-bit virtual address but the top byte (bit 55 selects the
// address half), as Linux reports it to a debugger (its
// ptrauth_user_pac_mask, the NT_ARM_PAC_MASK regset; the core writer's
// note holds the same).
const pacMask = 0x007f000000000000

// addPAuth adds the org.gnu.gdb.aarch64.pauth feature (pauth_dmask,
// pauth_cmask) after the FP/SIMD registers, numbered 68 and 69 as gdb
// numbers them when the feature is there. gdb strips the code from
// signed return addresses with pauth_cmask when it unwinds a frame whose
// CFI says its return address is signed. Linux's regset is read-only: a
// write is accepted and changes nothing.
func addPAuth(l *layout) {
	const pauth = "org.gnu.gdb.aarch64.pauth"
	get := func(*cpu.State) (uint64, uint64) { return pacMask, 0 }
	set := func(*cpu.State, uint64, uint64) {}
	add(l, "pauth_dmask", 64, "int", pauth, get, set)
	add(l, "pauth_cmask", 64, "int", pauth, get, set)
}

// s390xPSWMask is the PSW mask qemu-user shows for a 64-bit program (the
// extended and basic addressing-mode bits, z/Architecture Principles of
// Operation, "Program-Status Word"); the condition code is bits 18-19
// of the PSW, that is bits 45:44 of the 64-bit mask.
const s390xPSWMask = 0x180000000

// s390xLayout follows gdb's s390x Linux register sets: org.gnu.gdb.s390.core
// (pswm, pswa, r0-r15), .acr (acr0-acr15), .fpr (fpc, f0-f15) and .vx
// (v0l-v15l, the low halves of v0-v15 whose high halves are f0-f15, and
// v16-v31), numbered in that order as gdb numbers them.
func s390xLayout() *layout {
	const core, acr, fpr, vx = "org.gnu.gdb.s390.core", "org.gnu.gdb.s390.acr", "org.gnu.gdb.s390.fpr", "org.gnu.gdb.s390.vx"
	l := &layout{arch: "s390:64-bit", order: binary.BigEndian}
	add(l, "pswm", 64, "uint64", core,
		func(st *cpu.State) (uint64, uint64) { return s390xPSWMask | (st.Flags&3)<<44, 0 },
		func(st *cpu.State, v, _ uint64) { st.Flags = v >> 44 & 3 })
	add(l, "pswa", 64, "uint64", core,
		func(st *cpu.State) (uint64, uint64) { return st.PC, 0 },
		func(st *cpu.State, v, _ uint64) { st.PC = v })
	for i := 0; i < 16; i++ {
		g, s := gpr(i)
		add(l, fmt.Sprintf("r%d", i), 64, "uint64", core, g, s)
	}
	for i := 0; i < 16; i++ {
		i := i
		add(l, fmt.Sprintf("acr%d", i), 32, "uint32", acr,
			func(st *cpu.State) (uint64, uint64) { return uint64(st.AR[i]), 0 },
			func(st *cpu.State, v, _ uint64) { st.AR[i] = uint32(v) })
	}
	add(l, "fpc", 32, "uint32", fpr,
		func(st *cpu.State) (uint64, uint64) { return st.FPCR, 0 },
		func(st *cpu.State, v, _ uint64) { st.FPCR = v })
	for i := 0; i < 16; i++ {
		g, s := vecHalf(i, 0)
		add(l, fmt.Sprintf("f%d", i), 64, "ieee_double", fpr, g, s)
	}
	for i := 0; i < 16; i++ {
		g, s := vecHalf(i, 1)
		add(l, fmt.Sprintf("v%dl", i), 64, "uint64", vx, g, s)
	}
	for i := 16; i < 32; i++ {
		g, s := vec128(i)
		add(l, fmt.Sprintf("v%d", i), 128, "vec128", vx, g, s)
	}
	l.typesFor = map[string]string{
		vx: `<vector id="v4f" type="ieee_single" count="4"/>` +
			`<vector id="v2d" type="ieee_double" count="2"/>` +
			`<vector id="v16i8" type="int8" count="16"/>` +
			`<vector id="v8i16" type="int16" count="8"/>` +
			`<vector id="v4i32" type="int32" count="4"/>` +
			`<vector id="v2i64" type="int64" count="2"/>` +
			`<union id="vec128"><field name="v4_float" type="v4f"/><field name="v2_double" type="v2d"/>` +
			`<field name="v16_int8" type="v16i8"/><field name="v8_int16" type="v8i16"/>` +
			`<field name="v4_int32" type="v4i32"/><field name="v2_int64" type="v2i64"/>` +
			`<field name="uint128" type="uint128"/></union>`,
	}
	return l
}

// targetXML is the whole target description in one document (GDB
// manual, "Target Descriptions"): the architecture, the Linux OS ABI and
// one <feature> per register set, each register numbered in layout
// order.
func (l *layout) targetXML() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><!DOCTYPE target SYSTEM "gdb-target.dtd"><target version="1.0">`)
	fmt.Fprintf(&b, "<architecture>%s</architecture><osabi>GNU/Linux</osabi>", l.arch)
	feature := ""
	for i, r := range l.regs {
		if r.feature != feature {
			if feature != "" {
				b.WriteString("</feature>")
			}
			feature = r.feature
			fmt.Fprintf(&b, `<feature name="%s">%s`, feature, l.typesFor[feature])
		}
		fmt.Fprintf(&b, `<reg name="%s" bitsize="%d" type="%s" regnum="%d"/>`, r.name, r.bits, r.typ, i)
	}
	b.WriteString("</feature></target>")
	return b.String()
}
