package linux_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// coreNote is one note of a core file as the test reads it.
type coreNote struct {
	name string
	typ  uint32
	desc []byte
}

// readNotes splits a PT_NOTE segment (Elf64_Nhdr, name and descriptor
// padded to 4 bytes).
func readNotes(t *testing.T, b []byte, o binary.ByteOrder) []coreNote {
	t.Helper()
	var out []coreNote
	for len(b) > 0 {
		require.GreaterOrEqual(t, len(b), 12)
		nsz, dsz, typ := o.Uint32(b), o.Uint32(b[4:]), o.Uint32(b[8:])
		b = b[12:]
		pad := func(n uint32) int { return int((n + 3) &^ 3) }
		require.GreaterOrEqual(t, len(b), pad(nsz)+pad(dsz))
		out = append(out, coreNote{name: string(bytes.TrimRight(b[:nsz], "\x00")), typ: typ, desc: b[pad(nsz) : pad(nsz)+int(dsz)]})
		b = b[pad(nsz)+pad(dsz):]
	}
	return out
}

// TestWriteCore: the notes Linux writes, in its order, with its sizes,
// one NT_PRSTATUS (and register sets) per thread with the dying thread
// first, and PT_LOADs under the default coredump_filter.
func TestWriteCore(t *testing.T) {
	const (
		ntPrstatus, ntPrfpreg, ntPrpsinfo, ntAuxv = 1, 2, 3, 6
		ntSiginfo, ntFile                         = 0x53494749, 0x46494c45
		ntArmTLS, ntVxrsLow, ntVxrsHigh           = 0x401, 0x309, 0x30a
	)
	type want struct {
		machine  elf.Machine
		prstatus int // descriptor sizes
		fpreg    int
		extra    []uint32 // the architecture's own sets after NT_PRFPREG
	}
	cases := []struct {
		prog    string
		threads int
		want
	}{
		{"../../programs/signals/bin/aarch64-sig-O2/faults", 1, want{elf.EM_AARCH64, 392, 528, []uint32{ntArmTLS}}},
		{"../../programs/signals/bin/s390x-sig-O2/faults", 1, want{elf.EM_S390, 336, 136, []uint32{ntVxrsLow, ntVxrsHigh}}},
		// Stopped by --max-insns (SIGXCPU, which dumps core) while the
		// four workers and the main thread are alive.
		{"../../programs/threads/bin/aarch64-thr-O2/worksplit", 5, want{elf.EM_AARCH64, 392, 528, []uint32{ntArmTLS}}},
		{"../../programs/threads/bin/s390x-thr-O2/worksplit", 5, want{elf.EM_S390, 336, 136, []uint32{ntVxrsLow, ntVxrsHigh}}},
	}
	for _, c := range cases {
		t.Run(c.prog, func(t *testing.T) {
			cfg := linux.Config{Args: []string{c.prog}, Seed: 1}
			if c.threads > 1 {
				cfg.MaxInsns = 300_000
			}
			m, err := linux.Load(c.prog, cfg)
			require.NoError(t, err)
			exit, err := m.Run()
			require.NoError(t, err)
			require.NotNil(t, exit.Fault)
			require.True(t, linux.CoreDumps(exit.Fault.Signal()))
			p := linux.Of(m)
			require.Len(t, p.ThreadIDs(), c.threads)
			var buf bytes.Buffer
			require.NoError(t, p.WriteCore(&buf, exit.Fault))

			f, err := elf.NewFile(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			require.Equal(t, elf.ET_CORE, f.Type)
			require.Equal(t, c.machine, f.Machine)
			require.Equal(t, m.Arch.ByteOrder, f.ByteOrder)
			require.Equal(t, elf.PT_NOTE, f.Progs[0].Type)
			notes := readNotes(t, buf.Bytes()[f.Progs[0].Off:f.Progs[0].Off+f.Progs[0].Filesz], f.ByteOrder)

			// The dying thread's set, the process's notes, then each
			// other thread's.
			var types []uint32
			for _, n := range notes {
				types = append(types, n.typ)
			}
			perThread := append([]uint32{ntPrfpreg}, c.extra...)
			wantTypes := append([]uint32{ntPrstatus, ntPrpsinfo, ntSiginfo, ntAuxv, ntFile}, perThread...)
			for range c.threads - 1 {
				wantTypes = append(append(wantTypes, ntPrstatus), perThread...)
			}
			require.Equal(t, wantTypes, types)
			var tids []uint64
			for _, n := range notes {
				switch n.typ {
				case ntPrstatus:
					require.Equal(t, "CORE", n.name)
					require.Len(t, n.desc, c.prstatus)
					require.EqualValues(t, exit.Fault.Signal(), f.ByteOrder.Uint16(n.desc[12:])) // pr_cursig
					tids = append(tids, uint64(f.ByteOrder.Uint32(n.desc[32:])))
				case ntPrfpreg:
					require.Equal(t, "CORE", n.name)
					require.Len(t, n.desc, c.fpreg)
				case ntPrpsinfo:
					require.Len(t, n.desc, 136)
				case ntSiginfo:
					require.Len(t, n.desc, 128)
					require.EqualValues(t, exit.Fault.Signal(), f.ByteOrder.Uint32(n.desc))
				case ntAuxv:
					require.Equal(t, len(p.Auxv())*16, len(n.desc))
				case ntArmTLS, ntVxrsLow, ntVxrsHigh:
					require.Equal(t, "LINUX", n.name)
				}
			}
			require.Equal(t, p.CurrentTid(), tids[0], "the dying thread first")
			require.ElementsMatch(t, p.ThreadIDs(), tids)

			// The dying thread's registers are the core's.
			var st cpu.State
			m.Core.State(&st)
			pr := notes[0].desc[112:]
			if c.machine == elf.EM_AARCH64 {
				require.Equal(t, st.GPR[31], f.ByteOrder.Uint64(pr[31*8:]))
				require.Equal(t, st.PC, f.ByteOrder.Uint64(pr[32*8:]))
			} else {
				require.Equal(t, st.GPR[15], f.ByteOrder.Uint64(pr[(2+15)*8:]))
			}

			// Loads: in address order, page-aligned, the program's
			// text as its ELF header page only, the stack whole.
			var last uint64
			sawHeader, sawStack := false, false
			for _, ph := range f.Progs[1:] {
				require.Equal(t, elf.PT_LOAD, ph.Type)
				require.GreaterOrEqual(t, ph.Vaddr, last)
				require.Zero(t, ph.Off%cpu.PageSize)
				require.LessOrEqual(t, ph.Filesz, ph.Memsz)
				require.LessOrEqual(t, ph.Off+ph.Filesz, uint64(buf.Len()))
				last = ph.Vaddr + ph.Memsz
				if ph.Vaddr == p.Image.Start {
					require.Equal(t, elf.PF_R|elf.PF_X, ph.Flags)
					require.EqualValues(t, cpu.PageSize, ph.Filesz)
					require.Equal(t, "\x7fELF", string(buf.Bytes()[ph.Off:ph.Off+4]))
					sawHeader = true
				}
				if sp := st.GPR[map[elf.Machine]int{elf.EM_AARCH64: 31, elf.EM_S390: 15}[c.machine]]; sp >= ph.Vaddr && sp < ph.Vaddr+ph.Memsz {
					require.Equal(t, ph.Memsz, ph.Filesz)
					sawStack = true
				}
			}
			require.True(t, sawHeader)
			require.True(t, sawStack)
		})
	}
}
