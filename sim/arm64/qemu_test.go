package arm64_test

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/difftest"
	"simrun/internal/elftest"
	"simrun/internal/oracle"
	"simrun/programs"
	_ "simrun/sim/arm64"
)

// lockstepInsns is how far every bundled binary is compared register by
// register (general, NZCV, SIMD&FP) with qemu's trace.
const lockstepInsns = 500000

// TestQemuDifferential runs every bundled arm64 binary, the freestanding
// ones and the glibc ones, under qemu-aarch64 and simrun: same stdout, exit
// status and retired-instruction count, and the same registers before each
// of the first lockstepInsns instructions.
func TestQemuDifferential(t *testing.T) {
	oracle.Require(t, "arm64")
	bins := append(programs.Binaries("arm64"), programs.GlibcBinaries("arm64")...)
	require.NotEmpty(t, bins)
	for _, b := range bins {
		b := b
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) {
			t.Parallel()
			res, err := difftest.Compare(context.Background(), b.Path, difftest.Options{Args: b.Args, Lockstep: lockstepInsns, FP: true, CPU: b.Config.QemuCPU()})
			require.NoError(t, err)
			t.Logf("%d instructions, %d compared in lockstep, %d host values adopted", res.Insns, res.Compared, res.Adopted)
			require.Equal(t, min(res.Insns, lockstepInsns), res.Compared)
			want, status, err := b.Expected()
			require.NoError(t, err)
			require.Equal(t, string(want), string(res.Stdout), "stdout against expected/")
			require.Equal(t, status, res.Status, "status against expected/")
		})
	}
}

// TestQemuStaticPIE checks the placement of a static-PIE (ET_DYN) image and
// of the stack after it against qemu: the program reads its own address
// and the stack pointer, and exits with bits of them.
func TestQemuStaticPIE(t *testing.T) {
	oracle.Require(t, "arm64")
	code := elftest.Words(binary.LittleEndian,
		0x10000000, // adr x0, .
		0x910003e1, // mov x1, sp
		0xd34cfc00, // lsr x0, x0, #12
		0xd2800bc8, // mov x8, #94
		0xd4000001) // svc #0
	// Like gcc's static-PIE output, the image starts at address 0 (qemu
	// would take a non-zero start as a placement hint; simrun does not).
	f := &elftest.File{Machine: elf.EM_AARCH64, Type: elf.ET_DYN, Entry: 0, Segments: []elftest.Segment{
		{Vaddr: 0, Data: code, Flags: elf.PF_R | elf.PF_X},
		{Vaddr: 0x12000, Data: make([]byte, 16), Memsz: 0x3000, Flags: elf.PF_R | elf.PF_W}}}
	path := filepath.Join(t.TempDir(), "pie")
	require.NoError(t, os.WriteFile(path, f.Bytes(), 0o755))
	res, err := difftest.Compare(context.Background(), path, difftest.Options{Lockstep: 100})
	require.NoError(t, err)
	require.Equal(t, uint64(5), res.Compared)
}
