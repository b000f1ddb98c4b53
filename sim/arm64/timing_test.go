package arm64_test

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/internal/timingtest"
	"simrun/programs"
)

// TestBlockTimingExact: timing straight-line runs from their summaries
// gives exactly the cycles, statistics and per-operation details of
// timing every operation on its own, with and without detail requests
// (which force the slow path around the wanted operations).
func TestBlockTimingExact(t *testing.T) {
	for _, b := range programs.Binaries("arm64") {
		t.Run(b.Config.Name+"/"+b.Name, func(t *testing.T) { timingtest.CheckExact(t, b.Path, b.Args) })
	}
}

// TestBlockTimingExactCores: with several cores, runs with stores are
// timed from their summaries only where operation-by-operation timing
// would give the same: every core's statistics equal the summaries-off
// run's, on the false-sharing pair and worksplit.
func TestBlockTimingExactCores(t *testing.T) {
	for _, b := range programs.ThreadBinaries("arm64") {
		if b.Config.Name == "aarch64-thr-O2" && (b.Name == "falseshare" || b.Name == "padded" || b.Name == "worksplit") {
			t.Run(b.Name, func(t *testing.T) { timingtest.CheckExactCores(t, b.Path) })
		}
	}
}

// TestBlockTimingSelfModifying: a run summarised on the first pass is not
// reused after the program rewrites an instruction inside it (the second
// pass multiplies where the first added, and the next add waits for it).
func TestBlockTimingSelfModifying(t *testing.T) {
	code := elftest.Words(binary.LittleEndian,
		0xd2a00804, // movz x4, #0x40, lsl #16   (x4 = this page)
		0x9100f085, // add x5, x4, #0x3c           (x5 -> the new word)
		0xd2800020, // mov x0, #1
		0x91000421, // add x1, x1, #1              (becomes mul x1, x1, x1)
		0x91000422, // add x2, x1, #1
		0xb5000103, // cbnz x3, exit
		0xd2800023, // mov x3, #1
		0xb94000a6, // ldr w6, [x5]
		0xb9000c86, // str w6, [x4, #0xc]
		0xd2801588, // mov x8, #172 (getpid: the batch ends here)
		0xd4000001, // svc #0
		0x17fffff5, // b start (the summary from the first pass starts there)
		0xd503201f, // nop
		0xd2800bc8, // exit: mov x8, #94
		0xd4000001, // svc #0
		0x9b017c21) // mul x1, x1, x1
	f := &elftest.File{Machine: elf.EM_AARCH64, Entry: 0x400000, Segments: []elftest.Segment{
		{Vaddr: 0x400000, Data: code, Flags: elf.PF_R | elf.PF_W | elf.PF_X}}}
	path := filepath.Join(t.TempDir(), "smc")
	require.NoError(t, os.WriteFile(path, f.Bytes(), 0o755))
	ref, _, _ := timingtest.Timed(t, path, nil, "neoverse-n1", true, false)
	got, _, _ := timingtest.Timed(t, path, nil, "neoverse-n1", false, false)
	require.Equal(t, ref, got)
}
