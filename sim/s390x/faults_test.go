package s390x

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/elftest"
	"simrun/internal/oracle"
	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// mustHex turns hex instruction strings (constants) into code bytes.
func mustHex(insns ...string) []byte {
	var b []byte
	for _, s := range insns {
		x, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
		if err != nil {
			panic(err)
		}
		b = append(b, x...)
	}
	return b
}

func prog(code, data []byte) []byte {
	return elftest.Code(elf.EM_S390, binary.BigEndian, code, data)
}

// mmapBlock is old_mmap's argument block: an anonymous private page.
func mmapBlock() []byte {
	var b []byte
	for _, v := range []uint64{0, 4096, 3, 0x22, ^uint64(0), 0} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

const (
	noQemu = iota
	qemuTrace
	qemuCount
)

// TestBadInput runs tiny programs that end in a fault or use odd syscall
// arguments: simrun must report each with the right kind and status in one
// line, never panic, and agree with qemu on stdout, status and count.
func TestBadInput(t *testing.T) {
	truncated := make([]byte, 4096)
	copy(truncated[4094:], mustHex("e310")) // the first 2 bytes of a 6-byte lg
	tests := []struct {
		name   string
		elf    []byte
		kind   cpu.FaultKind // 0: a normal exit
		status int
		stdout string
		qemu   int // compare with qemu: noQemu, qemuTrace (lockstep) or qemuCount (exit status only)
	}{
		{"truncated instruction at the end of a segment",
			(&elftest.File{Machine: elf.EM_S390, Order: binary.BigEndian, Entry: 0x400ffe,
				Segments: []elftest.Segment{{Vaddr: 0x400000, Data: truncated, Flags: elf.PF_R | elf.PF_X}}}).Bytes(),
			cpu.FaultFetch, 139, "", qemuCount}, // qemu faults before logging the instruction
		{"undefined opcode", prog(mustHex("a7290003", "0000", "0af8"), nil), cpu.FaultUndefined, 132, "", qemuTrace},
		{"valid but unimplemented (cksm)", prog(mustHex("b2410024", "0af8"), nil), cpu.FaultUnsupported, 132, "", noQemu},
		// The architecture makes an odd instruction address a specification
		// exception (SIGILL on Linux). qemu-s390x 7.2 does not check and
		// executes at the odd address (here "10 00", lpr %r0,%r0, then on);
		// simrun follows the architecture.
		{"odd branch target", prog(mustHex("c01000000000", "41101001", "07f1", "0af8"), nil), cpu.FaultAlignment, 132, "", noQemu},
		{"unmapped access", prog(mustHex("a7290003", "e33020000004", "0af8"), nil), cpu.FaultUnmapped, 139, "", qemuTrace},
		{"store to the code segment", prog(mustHex("c01000000000", "92011000", "0af8"), nil), cpu.FaultPermission, 139, "", qemuTrace},
		{"divide by zero", prog(mustHex("a7290003", "a7390000", "b90d0023", "0af8"), nil), cpu.FaultSignal, 136, "", qemuTrace},
		{"odd register pair", prog(mustHex("b9870034", "0af8"), nil), cpu.FaultUndefined, 132, "", qemuTrace},
		{"sfpc with a reserved bit", prog(mustHex("c01100000080", "b3840010", "0af8"), nil), cpu.FaultUndefined, 132, "", qemuTrace},
		{"sfpc enabling an IEEE trap", prog(mustHex("c01180000000", "b3840010", "0af8"), nil), cpu.FaultUnsupported, 132, "", noQemu},
		{"srnmb with an invalid rounding mode", prog(mustHex("b2b80005", "0af8"), nil), cpu.FaultUndefined, 132, "", qemuTrace},
		{"srnmb with address bit 60 set", prog(mustHex("b2b80008", "0af8"), nil), cpu.FaultUndefined, 132, "", qemuTrace},
		{"srnm to round toward zero", prog(mustHex("b2990001", "0af8"), nil), cpu.FaultUnsupported, 132, "", noQemu},
		{"lfpc with a reserved bit", prog(mustHex("c01f00410000", "b29d1000", "0af8"), []byte{0, 0, 0, 0x80}), cpu.FaultUndefined, 132, "", qemuTrace},
		{"stam to an unaligned word", prog(mustHex("c01f00410000", "9b011002", "0af8"), make([]byte, 16)), cpu.FaultUndefined, 132, "", qemuTrace},
		{"lam from an unmapped word", prog(mustHex("9a010ff0", "0af8"), nil), cpu.FaultUnmapped, 139, "", qemuTrace},
		{"stfpc to an unmapped word", prog(mustHex("b29c0ff0", "0af8"), nil), cpu.FaultUnmapped, 139, "", qemuTrace},
		{"unaligned compare and swap", prog(mustHex("c01f00410000", "ba231002", "0af8"), make([]byte, 16)), cpu.FaultUndefined, 132, "", qemuTrace},
		{"misaligned svc argument pointer",
			prog(mustHex("a7290001", "c03f00410001", "a7490004", "0a04", "0af8"), []byte("\x00hi!\n")), 0, 4, "hi!\n", qemuTrace},
		{"unmapped svc argument pointer (EFAULT)",
			prog(mustHex("a7290001", "a7390010", "a7490004", "0a04", "0af8"), nil), 0, 256 - 14, "", qemuTrace},
		// larl %r1,.+10; mvi 3(%r1),42 changes the lghi after it, which
		// must run as stored: the decoded copy is dropped.
		{"code that stores over itself",
			(&elftest.File{Machine: elf.EM_S390, Order: binary.BigEndian, Entry: 0x400000,
				Segments: []elftest.Segment{{Vaddr: 0x400000, Data: mustHex("c01000000005", "922a1003", "a7290001", "0af8"),
					Flags: elf.PF_R | elf.PF_W | elf.PF_X}}}).Bytes(),
			0, 42, "", qemuTrace},
		{"old_mmap with a misaligned argument block",
			prog(mustHex("c02f00410003", "0a5a", "92072000", "e32020000090", "0af8"), append([]byte{0, 0, 0}, mmapBlock()...)), 0, 7, "", qemuTrace},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			m, err := linux.New("bad", tt.elf, linux.Config{Stdout: &out})
			require.NoError(t, err)
			exit, err := m.Run()
			require.NoError(t, err)
			require.Equal(t, tt.status, exit.Status)
			require.Equal(t, tt.stdout, out.String())
			if tt.kind == 0 {
				require.Nil(t, exit.Fault)
			} else {
				require.NotNil(t, exit.Fault)
				msg := exit.Fault.Error()
				t.Log(msg)
				require.Equal(t, tt.kind, exit.Fault.Kind, msg)
				require.NotContains(t, msg, "\n")
			}
			if tt.qemu == noQemu {
				return
			}
			oracle.Require(t, "s390x")
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			require.NoError(t, os.WriteFile(path, tt.elf, 0o755))
			if tt.qemu == qemuCount { // no instruction retires: the oracle has nothing to trace or count
				err := exec.Command("qemu-s390x", path).Run()
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee)
				ws := ee.Sys().(syscall.WaitStatus)
				require.Equal(t, tt.status, 128+int(ws.Signal()))
				return
			}
			res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: 100})
			require.NoError(t, err)
			require.GreaterOrEqual(t, res.Compared, res.Insns) // qemu also logs a faulting instruction
		})
	}
}
