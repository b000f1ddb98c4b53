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

// plugin is one of simrun's own qemu TCG plugins: a C source embedded in
// the package and built with the host gcc on first use.
type plugin struct {
	name string // file name without ".c", e.g. "countinsns"
	src  []byte
	what string // for error messages, e.g. "counting plugin"
}

// countPlugin (plugin/countinsns.c) counts executed instructions (Count).
//
//go:embed plugin/countinsns.c
var countSrc []byte

var countPlugin = &plugin{name: "countinsns", src: countSrc, what: "counting plugin"}

// memPlugin (plugin/memtrace.c) writes the guest's data accesses
// (MemTrace).
//
//go:embed plugin/memtrace.c
var memSrc []byte

var memPlugin = &plugin{name: "memtrace", src: memSrc, what: "memory trace plugin"}

var (
	pluginMu    sync.Mutex
	pluginBuilt = map[string]string{} // plugin name + "\x00" + source path ("" = embedded) -> shared object
)

// lib returns the absolute path of the plugin's shared object, building
// it from source if needed. p overrides the embedded source (see
// Options.Plugin): "" = the embedded one, a ".so" = a prebuilt shared
// object, anything else = a C source file.
func (pl *plugin) lib(p string) (string, error) {
	src, name := pl.src, "the embedded plugin/"+pl.name+".c"
	if p != "" {
		var err error
		if p, err = filepath.Abs(p); err != nil {
			return "", err
		}
		if strings.HasSuffix(p, ".so") {
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("%s: %w", pl.what, err)
			}
			return p, nil
		}
		name = p
	}
	pluginMu.Lock()
	defer pluginMu.Unlock()
	key := pl.name + "\x00" + p
	if lib, ok := pluginBuilt[key]; ok {
		return lib, nil
	}
	if p != "" {
		var err error
		if src, err = os.ReadFile(p); err != nil {
			return "", fmt.Errorf("%s source: %w", pl.what, err)
		}
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	lib := filepath.Join(dir, fmt.Sprintf("%s-%x.so", pl.name, sum[:8]))
	if _, err := os.Stat(lib); err != nil {
		// build into private names, then rename: safe against concurrent
		// builds by other processes
		tmpSrc := fmt.Sprintf("%s.%d.c", lib, os.Getpid())
		tmp := fmt.Sprintf("%s.%d.tmp", lib, os.Getpid())
		defer os.Remove(tmpSrc)
		if err := os.WriteFile(tmpSrc, src, 0o644); err != nil {
			return "", fmt.Errorf("%s: %w", pl.what, err)
		}
		out, err := exec.Command(gccBinary, "-O2", "-shared", "-fPIC", "-o", tmp, tmpSrc).CombinedOutput()
		if err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("building the %s with gcc from %s: %v: %s", pl.what, name, err, strings.TrimSpace(string(out)))
		}
		if err := os.Rename(tmp, lib); err != nil {
			os.Remove(tmp)
			return "", err
		}
	}
	pluginBuilt[key] = lib
	return lib, nil
}

// gccBinary is the host C compiler that builds the plugins; a variable so
// that tests can pretend it is missing.
var gccBinary = "gcc"

// PluginAvailable reports whether simrun's qemu plugins can be built: the
// host gcc is on PATH (the error names the Debian package otherwise).
func PluginAvailable() error {
	if _, err := exec.LookPath(gccBinary); err != nil {
		return fmt.Errorf("oracle: %s not found on PATH, needed to build simrun's qemu plugins (apt-get install gcc): %w", gccBinary, err)
	}
	return nil
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
		return "", fmt.Errorf("qemu plugin cache: %w", err)
	}
	return dir, nil
}
