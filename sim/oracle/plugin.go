package oracle

import (
	"crypto/sha256"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// countPlugin is the source of simrun's own counting plugin
// (plugin/countinsns.c), built with the host gcc on first use.
//
//go:embed plugin/countinsns.c
var countPlugin []byte

var (
	pluginMu    sync.Mutex
	pluginBuilt = map[string]string{} // source path ("" = the embedded one) -> shared object
)

// pluginLib returns the absolute path of the counting plugin's shared
// object, building it from source if needed (see Options.Plugin).
func pluginLib(p string) (string, error) {
	src, name := countPlugin, "the embedded plugin/countinsns.c"
	if p != "" {
		var err error
		if p, err = filepath.Abs(p); err != nil {
			return "", err
		}
		if strings.HasSuffix(p, ".so") {
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("counting plugin: %w", err)
			}
			return p, nil
		}
		name = p
	}
	pluginMu.Lock()
	defer pluginMu.Unlock()
	if lib, ok := pluginBuilt[p]; ok {
		return lib, nil
	}
	if p != "" {
		var err error
		if src, err = os.ReadFile(p); err != nil {
			return "", fmt.Errorf("counting plugin source: %w", err)
		}
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	lib := filepath.Join(dir, fmt.Sprintf("countinsns-%x.so", sum[:8]))
	if _, err := os.Stat(lib); err != nil {
		// build into private names, then rename: safe against concurrent
		// builds by other processes
		tmpSrc := fmt.Sprintf("%s.%d.c", lib, os.Getpid())
		tmp := fmt.Sprintf("%s.%d.tmp", lib, os.Getpid())
		defer os.Remove(tmpSrc)
		if err := os.WriteFile(tmpSrc, src, 0o644); err != nil {
			return "", fmt.Errorf("counting plugin: %w", err)
		}
		out, err := exec.Command("gcc", "-O2", "-shared", "-fPIC", "-o", tmp, tmpSrc).CombinedOutput()
		if err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("building the counting plugin with gcc from %s: %v: %s", name, err, strings.TrimSpace(string(out)))
		}
		if err := os.Rename(tmp, lib); err != nil {
			os.Remove(tmp)
			return "", err
		}
	}
	pluginBuilt[p] = lib
	return lib, nil
}

// cacheDir is os.UserCacheDir()/simrun, or a directory under os.TempDir()
// when there is no user cache directory.
func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "simrun")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("counting plugin cache: %w", err)
	}
	return dir, nil
}
