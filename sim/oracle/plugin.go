package oracle

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// pluginSource is the pccount plugin's place relative to the simrun module
// root.
const pluginSource = "../shared/oracle/plugin/pccount.c"

var (
	pluginMu    sync.Mutex
	pluginBuilt = map[string]string{} // source path -> shared object
)

// pluginLib returns the absolute path of the pccount shared object, building
// it from source if needed (see Options.Plugin).
func pluginLib(p string) (string, error) {
	if p == "" {
		var err error
		if p, err = findPluginSource(); err != nil {
			return "", err
		}
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(p, ".so") {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("pccount plugin: %w", err)
		}
		return p, nil
	}
	pluginMu.Lock()
	defer pluginMu.Unlock()
	if lib, ok := pluginBuilt[p]; ok {
		return lib, nil
	}
	src, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("pccount plugin source: %w", err)
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	lib := filepath.Join(dir, fmt.Sprintf("pccount-%x.so", sum[:8]))
	if _, err := os.Stat(lib); err != nil {
		// build into a private name, then rename: safe against concurrent
		// builds by other processes
		tmp := fmt.Sprintf("%s.%d.tmp", lib, os.Getpid())
		out, err := exec.Command("gcc", "-O2", "-shared", "-fPIC", "-o", tmp, p).CombinedOutput()
		if err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("building pccount plugin with gcc from %s: %v: %s", p, err, strings.TrimSpace(string(out)))
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
		return "", fmt.Errorf("pccount plugin cache: %w", err)
	}
	return dir, nil
}

// findPluginSource looks for ../shared/oracle/plugin/pccount.c relative to
// the simrun module root: the one above the working directory, then the
// one this file was compiled from.
func findPluginSource() (string, error) {
	var tried []string
	try := func(root string) (string, bool) {
		c := filepath.Join(root, pluginSource)
		tried = append(tried, c)
		_, err := os.Stat(c)
		return c, err == nil
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if isSimrunRoot(d) {
				if c, ok := try(d); ok {
					return c, nil
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		// file is ROOT/sim/oracle/plugin.go
		if c, ok := try(filepath.Dir(filepath.Dir(filepath.Dir(file)))); ok {
			return c, nil
		}
	}
	return "", fmt.Errorf("pccount plugin source not found (tried %s); set Options.Plugin", strings.Join(tried, ", "))
}

func isSimrunRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" && f[1] == "simrun" {
			return true
		}
	}
	return false
}
