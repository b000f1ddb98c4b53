package profile

import (
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadBuildID: the build-id of a bundled dynamic program is what
// readelf -n prints for it.
func TestReadBuildID(t *testing.T) {
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		t.Skip("no readelf")
	}
	path := "../../programs/dynamic/bin/aarch64-dyn-O2/sortsearch"
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("%v", err)
	}
	defer f.Close()
	out, err := exec.Command(readelf, "-n", path).Output()
	require.NoError(t, err)
	_, after, found := strings.Cut(string(out), "Build ID: ")
	require.True(t, found, "readelf -n names no build-id")
	want := strings.Fields(after)[0]
	assert.Equal(t, want, hex.EncodeToString(ReadBuildID(f)))
	assert.Nil(t, ReadBuildID(strings.NewReader("not an ELF file")))
}
