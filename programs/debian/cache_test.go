package debian

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCacheDir(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	for _, c := range []struct {
		cache, xdg, want string
	}{
		{"/c/debian", "/x", "/c/debian"},
		{"", "/x", "/x/simrun/debian"},
		{"", "", filepath.Join(home, ".cache", "simrun", "debian")},
	} {
		t.Setenv("SIMRUN_DEBIAN_CACHE", c.cache)
		t.Setenv("XDG_CACHE_HOME", c.xdg)
		got, err := CacheDir()
		require.NoError(t, err)
		require.Equal(t, c.want, got)
	}
}

// TestSysroot: a sysroot counts once fetch.sh's stamp and the loader are
// there; each missing piece is named.
func TestSysroot(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("SIMRUN_DEBIAN_CACHE", cache)
	_, err := Sysroot("x86")
	require.ErrorContains(t, err, "unknown arch")
	_, err = Sysroot("arm64")
	require.ErrorContains(t, err, "stamp")
	require.ErrorContains(t, err, "fetch.sh")

	require.NoError(t, os.MkdirAll(filepath.Join(cache, "arm64", "sysroot", "lib"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cache, "arm64", "stamp"), []byte("libc6\n"), 0o644))
	_, err = Sysroot("arm64")
	require.ErrorContains(t, err, "no loader /lib/ld-linux-aarch64.so.1")

	require.NoError(t, os.WriteFile(filepath.Join(cache, "arm64", "sysroot", "lib", "ld-linux-aarch64.so.1"), nil, 0o755))
	dir, err := Sysroot("arm64")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(cache, "arm64", "sysroot"), dir)
}

// TestPrepare: every input is written, the empty directory too, and every
// time is FixedTime.
func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Prepare(dir))
	for name, data := range Inputs() {
		p := filepath.Join(dir, filepath.FromSlash(name))
		st, err := os.Stat(p)
		require.NoError(t, err, name)
		require.True(t, st.ModTime().Equal(FixedTime), "%s: %v", name, st.ModTime())
		if strings.HasSuffix(name, "/") {
			require.True(t, st.IsDir(), name)
			continue
		}
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, data, got, name)
	}
	st, err := os.Stat(filepath.Join(dir, "tree", "b"))
	require.NoError(t, err)
	require.True(t, st.ModTime().Equal(FixedTime), "directories too")
	// The check file names right sums, and the round-trip input is big
	// enough to make the compressors work.
	require.Contains(t, string(Inputs()["sums.sha256"]), "  text.txt\n")
	require.Greater(t, len(Inputs()["big.txt"]), 200<<10)
}
