package elfsym_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"simrun/internal/oracle"
	"simrun/sim/elfsym"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzBuildIDNote: any run of note bytes gives a build-id that lies
// within it, or none, and never a panic.
func FuzzBuildIDNote(f *testing.F) {
	note := []byte{4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 1, 2, 3, 0}
	f.Add(note)
	f.Add(note[:15])
	f.Fuzz(func(t *testing.T, data []byte) {
		id := elfsym.BuildIDNote(data, binary.LittleEndian)
		if id != nil && (len(id) == 0 || !bytes.Contains(data, id)) {
			t.Fatalf("build-id %x is not in the notes", id)
		}
	})
}

// TestDebugFile: a stripped program names only what .dynsym keeps; with
// its separate debug file where Debian's -dbg packages put them
// (usr/lib/debug/.build-id/XX/REST.debug under the program's root, here
// a sysroot-like directory), ReadFile names its static functions too, as
// perf --symfs and gdb do. A debug file of another build is not used.
func TestDebugFile(t *testing.T) {
	objcopy := oracle.RequireTool(t, "aarch64-linux-gnu-objcopy", "binutils-aarch64-linux-gnu")
	prog := filepath.Join("..", "..", "programs", "dynamic", "bin", "aarch64-dyn-O2", "sortsearch")
	root := t.TempDir()
	stripped := filepath.Join(root, "usr", "bin", "sortsearch")
	require.NoError(t, os.MkdirAll(filepath.Dir(stripped), 0o755))
	out, err := exec.Command(objcopy, "--strip-all", prog, stripped).CombinedOutput()
	require.NoError(t, err, "%s", out)
	f, err := elf.Open(stripped)
	require.NoError(t, err)
	defer f.Close()
	id := elfsym.BuildID(f)
	require.NotEmpty(t, id)
	has := func(tab elfsym.Table, name string) bool {
		_, ok := tab.Addr(name)
		return ok
	}

	plain, err := elfsym.ReadFile(f, stripped)
	require.NoError(t, err)
	assert.False(t, has(plain, "cmp_int"), "stripped: a static function has no name")
	assert.Empty(t, elfsym.DebugFile(stripped, id))

	h := hex.EncodeToString(id)
	dbg := filepath.Join(root, "usr", "lib", "debug", ".build-id", h[:2], h[2:]+".debug")
	require.NoError(t, os.MkdirAll(filepath.Dir(dbg), 0o755))
	out, err = exec.Command(objcopy, "--only-keep-debug", prog, dbg).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, dbg, elfsym.DebugFile(stripped, id))
	withDebug, err := elfsym.ReadFile(f, stripped)
	require.NoError(t, err)
	full := read(t, prog)
	assert.Equal(t, full, withDebug, "the debug file's table is the unstripped program's")
	assert.True(t, has(withDebug, "cmp_int"))

	// Another build's debug file under that name is ignored.
	other := filepath.Join("..", "..", "programs", "dynamic", "bin", "aarch64-dyn-O2", "wc")
	out, err = exec.Command(objcopy, "--only-keep-debug", other, dbg).CombinedOutput()
	require.NoError(t, err, "%s", out)
	again, err := elfsym.ReadFile(f, stripped)
	require.NoError(t, err)
	assert.Equal(t, plain, again)
}
