package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mapsLine is the /proc/self/maps line of the region starting at addr.
func mapsLine(p *Process, addr uint64) string {
	prefix := fmt.Sprintf("%08x-", addr)
	for _, l := range strings.Split(string(p.maps()), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestFileMapsNamed: /proc/self/maps names a file mapping with its path,
// offset, device and inode (as Linux and qemu-user show them), follows
// munmap of a part, mremap's move and a mapping over it; executable
// mappings are kept for the recording's MMAP2 records.
func TestFileMapsNamed(t *testing.T) {
	p, scratch := testProcess(t, "arm64")
	path := filepath.Join(t.TempDir(), "data.bin")
	require.NoError(t, os.WriteFile(path, make([]byte, 5*4096), 0o644))
	var st syscall.Stat_t
	require.NoError(t, syscall.Stat(path, &st))
	devino := fmt.Sprintf("%02x:%02x %d", major(uint64(st.Dev)), minor(uint64(st.Dev)), st.Ino)

	fd := call(t, p, "openat", atFDCWD, putString(t, p, scratch, path), oRdonly)
	require.Less(t, fd, uint64(100))
	addr := sysMmap(p, [6]uint64{0, 4 * 4096, protRead | protExec, mapPrivate, fd, 4096})
	require.Less(t, addr, uint64(1)<<48)

	line := mapsLine(p, addr)
	assert.Regexp(t, fmt.Sprintf(`^%08x-%08x r-xp 00001000 %s +%s$`, addr, addr+4*4096, devino, path), line)
	assert.Equal(t, 73, strings.Index(line, path), "the name starts at column 74: %q", line)
	require.NotEmpty(t, p.CodeMaps())
	last := p.CodeMaps()[len(p.CodeMaps())-1]
	assert.Equal(t, CodeMap{Start: addr, Len: 4 * 4096, Pgoff: 4096, Prot: protRead | protExec, Path: path}, last)

	// Unmapping the second page splits the mapping: the tail keeps its
	// file offset.
	require.Zero(t, sysMunmap(p, [6]uint64{addr + 4096, 4096}))
	assert.Regexp(t, fmt.Sprintf(`^%08x-%08x r-xp 00001000 .* %s$`, addr, addr+4096, path), mapsLine(p, addr))
	assert.Regexp(t, fmt.Sprintf(`^%08x-%08x r-xp 00003000 .* %s$`, addr+2*4096, addr+4*4096, path), mapsLine(p, addr+2*4096))

	// Moved by mremap (the page after it taken), the tail is named at its
	// new place.
	after := sysMmap(p, [6]uint64{addr + 4*4096, 4096, protRead, mapPrivate | mapAnonymous | mapFixedNoReplace, ^uint64(0), 0})
	require.Equal(t, addr+4*4096, after)
	to := sysMremap(p, [6]uint64{addr + 2*4096, 2 * 4096, 64 * 4096, 1})
	require.Less(t, to, uint64(1)<<48)
	require.NotEqual(t, addr+2*4096, to)
	assert.Regexp(t, fmt.Sprintf(` 00003000 .* %s$`, path), mapsLine(p, to))
	assert.NotContains(t, mapsLine(p, addr+2*4096), path)

	// An anonymous mapping over the head takes its name away.
	anon := sysMmap(p, [6]uint64{addr, 4096, protRead, mapPrivate | mapAnonymous | mapFixed, ^uint64(0), 0})
	require.Equal(t, addr, anon)
	assert.NotContains(t, mapsLine(p, addr), path)
}
