// Package trace writes per-instruction traces of a cpu.Machine: a text
// listing (pc, disassembly, registers written) and JSON Lines in the schema
// of qemu-trace, the per-instruction register trace of qemu-user used as
// the oracle (schema below, at JSON), so a simrun trace diffs directly
// against qemu's.
package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"simrun/sim/cpu"
)

// qemuArch is the architecture name qemu-trace uses.
func qemuArch(a *cpu.Arch) string {
	if a.Name == "arm64" {
		return "aarch64"
	}
	return a.Name
}

// JSON writes the qemu-trace JSON Lines schema:
//
//	{"kind":"header","arch":"aarch64","state":"before","regs":[...],"flags":"nzcv","fp":false,...}
//	{"n":0,"pc":"0x4000d0","r":["0x0",...],"f":0}        registers before the instruction
//	{"kind":"exit","insns":65,"stdout":"...","status":42}
type JSON struct {
	w     *bufio.Writer
	fp    bool
	st    cpu.State
	buf   []byte
	count uint64
}

// NewJSON starts a trace of m on w; fp adds the vector registers ("v").
func NewJSON(w io.Writer, m *cpu.Machine, prog string, argv []string, fp bool) (*JSON, error) {
	t := &JSON{w: bufio.NewWriterSize(w, 1<<16), fp: fp}
	hdr := map[string]any{
		"kind": "header", "arch": qemuArch(m.Arch), "prog": prog, "argv": argv,
		"state": "before", "regs": m.Arch.GPRNames, "flags": m.Arch.FlagsName, "fp": fp,
		"simulator": "simrun",
	}
	b, err := json.Marshal(hdr)
	if err != nil {
		return nil, err
	}
	t.w.Write(b)
	t.w.WriteByte('\n')
	return t, nil
}

func appendHex(b []byte, v uint64) []byte {
	b = append(b, '"', '0', 'x')
	b = strconv.AppendUint(b, v, 16)
	return append(b, '"')
}

// Step records the state before the next instruction (use as, or inside,
// a cpu.Machine observer).
func (t *JSON) Step(m *cpu.Machine) error {
	m.Core.State(&t.st)
	b := t.buf[:0]
	b = append(b, `{"n":`...)
	b = strconv.AppendUint(b, m.Insns, 10)
	b = append(b, `,"pc":`...)
	b = appendHex(b, t.st.PC)
	b = append(b, `,"r":[`...)
	for i, v := range t.st.GPR {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendHex(b, v)
	}
	b = append(b, `],"f":`...)
	b = strconv.AppendUint(b, t.st.Flags, 10)
	if t.fp {
		b = append(b, `,"v":[`...)
		for i, v := range t.st.Vec {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"', '0', 'x')
			if v[0] != 0 {
				b = strconv.AppendUint(b, v[0], 16)
				b = append(b, fmt.Sprintf("%016x", v[1])...)
			} else {
				b = strconv.AppendUint(b, v[1], 16)
			}
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	b = append(b, "}\n"...)
	t.buf = b
	t.count++
	_, err := t.w.Write(b)
	return err
}

// Finish writes the exit line and flushes.
func (t *JSON) Finish(m *cpu.Machine, exit *cpu.Exit, stdout []byte) error {
	ex := map[string]any{"kind": "exit", "insns": m.Insns, "stdout": latin1(stdout)}
	if exit.Fault != nil {
		ex["signal"] = exit.Fault.Signal()
		ex["fault"] = exit.Fault.Error()
	} else {
		ex["status"] = exit.Status
	}
	b, err := json.Marshal(ex)
	if err != nil {
		return err
	}
	t.w.Write(b)
	t.w.WriteByte('\n')
	return t.w.Flush()
}

// latin1 decodes bytes as code points 0-255, as qemu-trace does.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// Text writes one line per retired instruction:
//
//	n  pc          bytes     disassembly                 registers written
//	0  0x4000d0    d280001d  mov x29, #0x0               x29=0x0
type Text struct {
	w       *bufio.Writer
	m       *cpu.Machine
	before  cpu.State
	after   cpu.State
	pending bool
	n       uint64
	pc      uint64
	text    string
	code    []byte
}

// NewText starts a text trace of m on w.
func NewText(w io.Writer, m *cpu.Machine) *Text {
	return &Text{w: bufio.NewWriterSize(w, 1<<16), m: m}
}

// Step is the observer: it prints the previous instruction (now that its
// results are known) and remembers the next one.
func (t *Text) Step(m *cpu.Machine) error {
	t.flushPending()
	m.Core.State(&t.before)
	t.n, t.pc = m.Insns, t.before.PC
	t.code, t.text = nil, ""
	if b, err := m.Mem.ReadBytes(t.pc, m.Arch.MaxInsnLen); err == nil || m.Arch.MaxInsnLen > 2 {
		if b == nil {
			b, _ = m.Mem.ReadBytes(t.pc, 2)
		}
		if b != nil && m.Arch.Disasm != nil {
			text, n := m.Arch.Disasm(b, t.pc)
			if n > 0 {
				t.code, t.text = b[:n], text
			}
		}
	}
	t.pending = true
	return nil
}

func (t *Text) flushPending() {
	if !t.pending {
		return
	}
	t.pending = false
	t.m.Core.State(&t.after)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%8d  0x%-10x  %-12x  %-32s", t.n, t.pc, t.code, t.text)
	names := t.m.Arch.GPRNames
	for i := range t.after.GPR {
		if t.after.GPR[i] != t.before.GPR[i] {
			fmt.Fprintf(&sb, " %s=0x%x", names[i], t.after.GPR[i])
		}
	}
	if t.after.Flags != t.before.Flags {
		fmt.Fprintf(&sb, " %s=%s", t.m.Arch.FlagsName, flagsText(t.m.Arch, t.after.Flags))
	}
	for i := range t.after.Vec {
		if t.after.Vec[i] != t.before.Vec[i] {
			v := t.after.Vec[i]
			fmt.Fprintf(&sb, " v%d=0x%016x%016x", i, v[0], v[1])
		}
	}
	t.w.WriteString(strings.TrimRight(sb.String(), " "))
	t.w.WriteByte('\n')
}

func flagsText(a *cpu.Arch, f uint64) string {
	if a.FlagsName != "nzcv" {
		return strconv.FormatUint(f, 10)
	}
	b := []byte("nzcv")
	for i, c := range "NZCV" {
		if f>>(3-i)&1 == 1 {
			b[i] = byte(c)
		}
	}
	return string(b)
}

// Finish prints the last instruction and how the run ended.
func (t *Text) Finish(exit *cpu.Exit) error {
	t.flushPending()
	if exit != nil && exit.Fault == nil {
		fmt.Fprintf(t.w, "exit status %d after %d instructions\n", exit.Status, t.m.Insns)
	}
	return t.w.Flush()
}
