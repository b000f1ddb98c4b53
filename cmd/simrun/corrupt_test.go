package main

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/programs"
)

// A corrupt debug or unwind section costs its feature with one warning
// naming the section, never the recording (issue 40, item 15).
func TestRecordCorruptDebugSection(t *testing.T) {
	sort, err := programs.Find("aarch64-O2", "sort")
	require.NoError(t, err)
	orig, err := os.ReadFile(sort.Path)
	require.NoError(t, err)
	f, err := elf.NewFile(bytes.NewReader(orig))
	require.NoError(t, err)
	for _, tc := range []struct {
		section string
		warn    []string // substrings of the one warning line
	}{
		{".eh_frame", []string{"--callchain sframe", ".eh_frame", "without callchains"}},
		{".debug_info", []string{".debug_info", "no source lines"}},
		{".debug_line", []string{".debug_line", "no source lines"}},
		{".debug_str", []string{".debug_str", "no source lines"}},
		{".debug_abbrev", []string{".debug_info", "no source lines"}}, // found while decoding .debug_info
	} {
		t.Run(tc.section, func(t *testing.T) {
			s := f.Section(tc.section)
			require.NotNil(t, s)
			data := bytes.Clone(orig)
			for i := s.Offset; i < s.Offset+s.Size; i++ {
				data[i] = 0xff
			}
			dir := t.TempDir()
			prog := filepath.Join(dir, "sort")
			require.NoError(t, os.WriteFile(prog, data, 0o755))
			out := filepath.Join(dir, "perf.data")
			var stdout, stderr bytes.Buffer
			st := mainStatus([]string{"record", "--quiet", "-c", "1024", "--format", "perf,folded", "-o", out, prog},
				strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, 103, st, "the program's own status (programs/expected/sort.status); stderr: %s", stderr.String())
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			require.Len(t, lines, 1, "one warning line, got %q", stderr.String())
			assert.True(t, strings.HasPrefix(lines[0], "simrun record: warning: "), lines[0])
			for _, w := range tc.warn {
				assert.Contains(t, lines[0], w)
			}
			pd, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(pd, []byte("PERFILE2")))
			folded, err := os.ReadFile(filepath.Join(dir, "perf.folded"))
			require.NoError(t, err)
			assert.NotEmpty(t, folded, "the samples are there")
			// report reads the recording, with the same warning.
			var rout, rerr bytes.Buffer
			st = mainStatus([]string{"report", "-o", filepath.Join(dir, "r.html"), out}, strings.NewReader(""), &rout, &rerr)
			assert.Equal(t, 0, st, "report: %s", rerr.String())
		})
	}
}
