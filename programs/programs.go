// Package programs locates the bundled guest programs: freestanding C
// programs (src/*.c with the runtime in rt/) prebuilt into
// bin/CONFIG/NAME for every configuration in Configs.  The binaries are
// static ET_EXEC Linux executables that only use the write and exit_group
// syscalls; each prints its results and exits with a status derived from
// them (bit 7 set if one of its self-checks failed).  expected/ holds the
// stdout and exit status of a run without arguments, which are the same
// in every configuration.
//
// Rebuild with `make -C programs all sums` (needs Debian's
// gcc-aarch64-linux-gnu and gcc-s390x-linux-gnu); see docs/examples.md and programs/README.md.
package programs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Config is one build configuration.
type Config struct {
	Name  string // directory under bin/, e.g. "aarch64-O2"
	Arch  string // "arm64" or "s390x"
	Opt   string // gcc optimisation flags, e.g. "-O2 -march=z13"
	Glibc bool   // a configuration of the glibc programs (glibc/, see GlibcBinaries)
	// CPU, if set, is the qemu -cpu model instead of the default
	// (QemuCPU): the Armv8.1 thread programs need LSE.
	CPU string
	// Dynamic is set for dynamically linked programs, which run with the
	// target's sysroot.
	Dynamic bool
}

// Configs lists every configuration the Makefile builds.
var Configs = []Config{
	{Name: "aarch64-O0", Arch: "arm64", Opt: "-O0"},
	{Name: "aarch64-O2", Arch: "arm64", Opt: "-O2"},
	{Name: "s390x-O0", Arch: "s390x", Opt: "-O0"},
	{Name: "s390x-O2", Arch: "s390x", Opt: "-O2"},
	{Name: "s390x-z13O2", Arch: "s390x", Opt: "-O2 -march=z13"},
}

// QemuCommand is the qemu-user command line (without the binary and its
// arguments) that the Makefile and expected/ use for this configuration.
// Run it with an empty environment (env -i) for reproducible stacks.
func (c Config) QemuCommand() []string {
	if c.Arch == "arm64" {
		return []string{"qemu-aarch64", "-seed", "1", "-cpu", c.QemuCPU()}
	}
	return []string{"qemu-s390x", "-seed", "1", "-cpu", c.QemuCPU()}
}

// S390xQemuCPU is the qemu-s390x model whose guest identity equals the one
// simrun shows (sim/s390x/arch.go): qemu 7.2's "qemu" model less the
// facilities simrun does not implement, STFLE, the extended-translation 3
// enhancement, vector enhancements 1 and the message-security assist.
// Under it qemu's AT_HWCAP is 0xa33 (esan3, zarch, ldisp, eimm, highgprs,
// vxrs), as simrun's, and stfle stores the facility list simrun's stfle
// stores. The freestanding z13 programs need the vector facility that it
// keeps, so one model serves every s390x configuration.
const S390xQemuCPU = "qemu,stfle=off,etf3eh=off,vxeh=off,msa-base=off"

// QemuCPU is qemu's -cpu model for the configuration. Programs run as the
// CPU simrun shows the guest (its HWCAP, ID registers and facility list
// decide which routines glibc picks): cortex-a72 for glibc on arm64,
// S390xQemuCPU on s390x; the freestanding arm64 programs on qemu's max
// model without SVE, SME and pointer authentication.
func (c Config) QemuCPU() string {
	switch {
	case c.CPU != "":
		return c.CPU
	case c.Arch == "s390x":
		return S390xQemuCPU
	case c.Glibc:
		return "cortex-a72"
	}
	return "max,sve=off,sme=off,pauth=off"
}

// Binary is one built program in one configuration.
type Binary struct {
	Config Config
	Name   string   // program name, e.g. "fib"
	Path   string   // absolute path of the executable
	Args   []string // default arguments (argv[1:]); none for every program today
}

// Expected returns the recorded stdout and exit status of a run with the
// default arguments and an empty environment.
func (b Binary) Expected() (stdout []byte, status int, err error) {
	if b.Config.Glibc {
		return expectedIn(GlibcDir(), b.Name)
	}
	return Expected(b.Name)
}

// Dir returns the absolute path of the programs directory.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("programs: runtime.Caller failed")
	}
	return filepath.Dir(file)
}

// Names returns the program names (src/*.c without the extension), sorted.
func Names() []string {
	files, _ := filepath.Glob(filepath.Join(Dir(), "src", "*.c"))
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".c"))
	}
	sort.Strings(names)
	return names
}

// Binaries returns every program built for arch ("arm64" or "s390x"; ""
// means all architectures), ordered by configuration (as in Configs) and
// then by name.  Paths are returned whether or not the file exists; the
// package's tests check that all of them do.
func Binaries(arch string) []Binary {
	var out []Binary
	names := Names()
	for _, c := range Configs {
		if arch != "" && c.Arch != arch {
			continue
		}
		for _, n := range names {
			out = append(out, Binary{
				Config: c,
				Name:   n,
				Path:   filepath.Join(Dir(), "bin", c.Name, n),
			})
		}
	}
	return out
}

// Find returns the binary of program name in configuration config
// (e.g. Find("s390x-O2", "fib")).
func Find(config, name string) (Binary, error) {
	for _, b := range Binaries("") {
		if b.Config.Name == config && b.Name == name {
			return b, nil
		}
	}
	return Binary{}, fmt.Errorf("programs: no program %q in configuration %q", name, config)
}

// Expected returns the recorded stdout and exit status of program name
// (expected/NAME.stdout and expected/NAME.status).
func Expected(name string) (stdout []byte, status int, err error) {
	return expectedIn(Dir(), name)
}

func expectedIn(dir, name string) (stdout []byte, status int, err error) {
	base := filepath.Join(dir, "expected", name)
	stdout, err = os.ReadFile(base + ".stdout")
	if err != nil {
		return nil, 0, err
	}
	st, err := os.ReadFile(base + ".status")
	if err != nil {
		return nil, 0, err
	}
	status, err = strconv.Atoi(strings.TrimSpace(string(st)))
	if err != nil {
		return nil, 0, fmt.Errorf("programs: %s.status: %v", base, err)
	}
	return stdout, status, nil
}
