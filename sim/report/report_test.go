package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
	"simrun/sim/profile"
)

func open(t testing.TB, config, name string) (*profile.Binary, []byte) {
	t.Helper()
	b, err := programs.Find(config, name)
	require.NoError(t, err)
	data, err := os.ReadFile(b.Path)
	require.NoError(t, err)
	bin, err := profile.NewBinary(b.Path, data, 0)
	require.NoError(t, err)
	return bin, data
}

func funcs(t *testing.T, bin *profile.Binary, names ...string) []profile.Func {
	var out []profile.Func
	for _, n := range names {
		found := false
		for _, f := range bin.Funcs {
			if f.Name == n {
				out = append(out, f)
				found = true
			}
		}
		require.True(t, found, n)
	}
	return out
}

// TestSFrameS390xRegisterHeld: the s390x leaf functions of leaffpr keep
// the return address or the frame pointer in a floating-point register;
// the rows say so, as simrun sframe (objdump --sframe) prints them:
//
//	ra_in_fpr: 000000000100101c  sp+160  u      r16+0   (RA in f0)
//	many_live: 0000000001000f38  sp+160  r18+0  U       (FP in f4)
func TestSFrameS390xRegisterHeld(t *testing.T) {
	bin, data := open(t, "s390x-O2", "leaffpr")
	tables, err := SFrames(bin, data, funcs(t, bin, "ra_in_fpr", "many_live", "main"))
	require.NoError(t, err)
	require.Len(t, tables, 3)
	ra := tables[0]
	require.Len(t, ra.Rows, 3)
	assert.Equal(t, SFrameRow{Start: ra.Start + 4, End: ra.Start + 0x18, CFA: "sp+160", FP: "same", RA: "f0", InRegister: []string{"RA in f0"}}, ra.Rows[1])
	assert.Empty(t, ra.Rows[0].InRegister)
	assert.Equal(t, ra.Start+uint64(ra.Size), ra.Rows[2].End)
	live := tables[1]
	require.Len(t, live.Rows, 3)
	assert.Equal(t, []string{"FP in f4"}, live.Rows[1].InRegister)
	assert.Equal(t, "not saved", live.Rows[1].RA)
	for _, r := range tables[2].Rows {
		assert.Empty(t, r.InRegister, "main saves both on the stack")
	}
	assert.Equal(t, "[cfa-48]", tables[2].Rows[1].RA)
}

func TestSFrameAarch64(t *testing.T) {
	bin, data := open(t, "aarch64-O2", "listchase")
	tables, err := SFrames(bin, data, funcs(t, bin, "main", "_start"))
	require.NoError(t, err)
	assert.True(t, tables[0].Emitted, "no .sframe in the bundled programs: emitted from .eh_frame")
	require.NotEmpty(t, tables[0].Rows)
	assert.Equal(t, "sp+0", tables[0].Rows[0].CFA)
	assert.Equal(t, "same", tables[0].Rows[0].RA, "at entry the return address is still in lr")
	// _start marks RA undefined (.cfi_undefined): a V3 row says so.
	require.NotEmpty(t, tables[1].Rows)
	assert.True(t, tables[1].Rows[0].RAUndefined)
}

func TestWriteEscapes(t *testing.T) {
	bin, _ := open(t, "aarch64-O2", "listchase")
	rec := &profile.Recording{Summary: profile.Summary{Comm: "<b>x</b>", Args: []string{"</script><script>alert(1)</script>"}}}
	var b bytes.Buffer
	require.NoError(t, Write(&b, rec, bin, Options{}))
	assert.NotContains(t, b.String(), "<b>x</b>")
	assert.NotContains(t, b.String(), "<script>alert(1)")
	assert.Contains(t, b.String(), "var stacks = []")
	assert.Equal(t, 1, strings.Count(b.String(), "<script>"))
}

// TestWriteThreads: a recording of several threads gets a by-thread table
// and flame-graph stacks rooted at COMM-TID; one of a single thread has
// neither.
func TestWriteThreads(t *testing.T) {
	bin, _ := open(t, "aarch64-O2", "listchase")
	smp := func(tid uint32) profile.Sample {
		return profile.Sample{PC: 0x400000, Context: tid, HasCtx: true, Frames: []profile.Frame{{PC: 0x400000}}}
	}
	rec := &profile.Recording{Summary: profile.Summary{Comm: "ws"}, Samples: []profile.Sample{smp(1000), smp(1001), smp(1001)}}
	var b bytes.Buffer
	require.NoError(t, Write(&b, rec, bin, Options{}))
	page := b.String()
	assert.Contains(t, page, `id="by-thread"`)
	assert.Regexp(t, `<td class="mono">ws-1001</td><td class="n">2</td>`, page)
	assert.Contains(t, page, `"s":"ws-1001;`)

	rec.Samples = rec.Samples[1:]
	b.Reset()
	require.NoError(t, Write(&b, rec, bin, Options{}))
	assert.NotContains(t, b.String(), `id="by-thread"`)
	assert.NotContains(t, b.String(), `ws-1001`)
}
