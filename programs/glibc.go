package programs

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The glibc programs: C and C++ sources in glibc/src linked statically
// against Debian 12's cross glibc 2.36 (and libstdc++) into
// glibc/bin/CONFIG/NAME, with their own expected/ and SHA256SUMS.
// Rebuild with `make -C programs/glibc all sums` (see its Makefile).

// GlibcConfigs lists the configurations of the glibc programs.
var GlibcConfigs = []Config{
	{Name: "aarch64-glibc-O2", Arch: "arm64", Opt: "-O2 -static", Glibc: true},
	{Name: "s390x-glibc-O2", Arch: "s390x", Opt: "-O2 -static", Glibc: true},
}

// GlibcDir is the directory of the glibc programs.
func GlibcDir() string { return filepath.Join(Dir(), "glibc") }

// GlibcNames returns the glibc program names (glibc/src/*.c and *.cc
// without the extension), sorted.
func GlibcNames() []string {
	var names []string
	for _, pat := range []string{"*.c", "*.cc"} {
		files, _ := filepath.Glob(filepath.Join(GlibcDir(), "src", pat))
		for _, f := range files {
			names = append(names, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
		}
	}
	sort.Strings(names)
	return names
}

// GlibcBinaries returns every glibc program built for arch ("" = all),
// ordered by configuration and then by name.
func GlibcBinaries(arch string) []Binary {
	var out []Binary
	for _, c := range GlibcConfigs {
		if arch != "" && c.Arch != arch {
			continue
		}
		for _, n := range GlibcNames() {
			out = append(out, Binary{Config: c, Name: n, Path: filepath.Join(GlibcDir(), "bin", c.Name, n)})
		}
	}
	return out
}

// The dynamically linked programs: the C sources in dynamic/src and the
// C glibc programs of glibc/src, built as gcc builds by default
// (dynamically linked PIEs against Debian 12's cross glibc) into
// dynamic/bin/CONFIG/NAME. Rebuild with `make -C programs/dynamic`.
// Running them needs the target's sysroot.

// DynamicConfigs lists the configurations of the dynamic programs.
var DynamicConfigs = []Config{
	{Name: "aarch64-dyn-O2", Arch: "arm64", Opt: "-O2", Glibc: true},
	{Name: "s390x-dyn-O2", Arch: "s390x", Opt: "-O2", Glibc: true},
}

// DynamicBinaries returns every dynamic program built for arch ("" = all).
func DynamicBinaries(arch string) []Binary {
	dir := filepath.Join(Dir(), "dynamic")
	var out []Binary
	for _, c := range DynamicConfigs {
		if arch != "" && c.Arch != arch {
			continue
		}
		for _, n := range dynamicNames() {
			out = append(out, Binary{Config: c, Name: n, Path: filepath.Join(dir, "bin", c.Name, n)})
		}
	}
	return out
}

// dynamicSources are the directories the dynamic programs are built from.
func dynamicSources() []string {
	return []string{filepath.Join(Dir(), "dynamic", "src"), filepath.Join(GlibcDir(), "src")}
}

func dynamicNames() []string {
	var names []string
	for _, d := range dynamicSources() {
		files, _ := filepath.Glob(filepath.Join(d, "*.c"))
		for _, f := range files {
			names = append(names, strings.TrimSuffix(filepath.Base(f), ".c"))
		}
	}
	sort.Strings(names)
	return names
}

// DynamicSource returns the path of a dynamic program's source.
func DynamicSource(name string) string {
	for _, d := range dynamicSources() {
		if p := filepath.Join(d, name+".c"); fileExists(p) {
			return p
		}
	}
	return filepath.Join(dynamicSources()[0], name+".c")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// The signal programs: C sources in signals/src linked statically against
// Debian 12's cross glibc into signals/bin/CONFIG/NAME. Rebuild with
// `make -C programs/signals`. Their oracle is qemu-user (sim/linux's
// TestQemuSignalPrograms).

// SignalConfigs lists the configurations of the signal programs.
var SignalConfigs = []Config{
	{Name: "aarch64-sig-O2", Arch: "arm64", Opt: "-O2 -static", Glibc: true},
	{Name: "s390x-sig-O2", Arch: "s390x", Opt: "-O2 -static", Glibc: true},
}

// SignalBinaries returns every signal program built for arch ("" = all).
func SignalBinaries(arch string) []Binary { return sourceBinaries("signals", SignalConfigs, arch) }

// sourceBinaries lists the programs of folder (one per C source in
// folder/src) built in each of configs for arch ("" = all), as
// folder/bin/CONFIG/NAME.
func sourceBinaries(folder string, configs []Config, arch string) []Binary {
	dir := filepath.Join(Dir(), folder)
	files, _ := filepath.Glob(filepath.Join(dir, "src", "*.c"))
	cxx, _ := filepath.Glob(filepath.Join(dir, "src", "*.cc"))
	files = append(files, cxx...)
	var out []Binary
	for _, c := range configs {
		if arch != "" && c.Arch != arch {
			continue
		}
		for _, f := range files {
			n := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".cc"), ".c")
			out = append(out, Binary{Config: c, Name: n, Path: filepath.Join(dir, "bin", c.Name, n)})
		}
	}
	return out
}

// The thread programs: C (and C++) sources in threads/src linked against Debian
// 12's cross glibc (pthreads), statically and dynamically, into
// threads/bin/CONFIG/NAME; arm64 for Armv8.0 (exclusive pairs) and
// Armv8.1 (LSE atomics). Rebuild with `make -C programs/threads`. Their
// oracle is qemu-user (sim/linux's TestQemuThreadPrograms).

// ThreadConfigs lists the configurations of the thread programs.
var ThreadConfigs = []Config{
	{Name: "aarch64-thr-O2", Arch: "arm64", Opt: "-O2 -static -march=armv8-a -mno-outline-atomics", Glibc: true},
	{Name: "aarch64-lse-O2", Arch: "arm64", Opt: "-O2 -static -march=armv8.1-a", Glibc: true, CPU: "max,sve=off,sme=off,pauth=off"},
	{Name: "s390x-thr-O2", Arch: "s390x", Opt: "-O2 -static", Glibc: true},
	{Name: "aarch64-thrdyn-O2", Arch: "arm64", Opt: "-O2 -march=armv8-a -mno-outline-atomics", Glibc: true, Dynamic: true},
	{Name: "s390x-thrdyn-O2", Arch: "s390x", Opt: "-O2", Glibc: true, Dynamic: true},
}

// ThreadBinaries returns every thread program built for arch ("" = all).
func ThreadBinaries(arch string) []Binary { return sourceBinaries("threads", ThreadConfigs, arch) }
