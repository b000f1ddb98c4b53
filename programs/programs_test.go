package programs

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const regen = "run `make -C programs all sums`"

// readSums parses SHA256SUMS into path (relative to Dir) -> hex digest.
func readSums(t *testing.T) map[string]string { return readSumsIn(t, Dir()) }

// readSumsIn parses dir/SHA256SUMS.
func readSumsIn(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatalf("%s/SHA256SUMS: %v (%s)", dir, err, regen)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		// sha256sum format: 64 hex digits, two spaces (or space and '*'), path
		if len(text) < 67 || (text[64:66] != "  " && text[64:66] != " *") {
			t.Fatalf("programs/SHA256SUMS:%d: malformed line %q", line, text)
		}
		digest, path := text[:64], text[66:]
		if _, err := hex.DecodeString(digest); err != nil {
			t.Fatalf("programs/SHA256SUMS:%d: bad digest %q", line, digest)
		}
		if _, dup := sums[path]; dup {
			t.Fatalf("programs/SHA256SUMS:%d: %s listed twice", line, path)
		}
		sums[path] = digest
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

func fileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// TestSHA256SUMS checks every file listed in SHA256SUMS against its digest.
func TestSHA256SUMS(t *testing.T) {
	sums := readSums(t)
	paths := make([]string, 0, len(sums))
	for p := range sums {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		got, err := fileSHA256(filepath.Join(Dir(), filepath.FromSlash(p)))
		if err != nil {
			t.Errorf("programs/%s is listed in SHA256SUMS but cannot be read (%v): %s", p, err, regen)
			continue
		}
		if got != sums[p] {
			t.Errorf("programs/%s changed but SHA256SUMS was not regenerated: %s", p, regen)
		}
	}
}

// TestCoverage checks that every source has a binary in every
// configuration, that no stale binary is left over, and that all sources,
// the runtime, the Makefile, the expected results and all binaries are
// covered by SHA256SUMS.
func TestCoverage(t *testing.T) {
	sums := readSums(t)
	names := Names()
	if len(names) < 12 {
		t.Fatalf("only %d programs in programs/src", len(names))
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	var inputs []string
	for _, pat := range []string{"src/*.c", "rt/*", "expected/*"} {
		m, err := filepath.Glob(filepath.Join(Dir(), filepath.FromSlash(pat)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(Dir(), f)
			inputs = append(inputs, filepath.ToSlash(rel))
		}
	}
	inputs = append(inputs, "Makefile", "check.sh")
	for _, in := range inputs {
		if _, ok := sums[in]; !ok {
			t.Errorf("programs/%s is not listed in SHA256SUMS: %s", in, regen)
		}
	}
	for _, n := range names {
		for _, suffix := range []string{".stdout", ".status"} {
			if _, err := os.Stat(filepath.Join(Dir(), "expected", n+suffix)); err != nil {
				t.Errorf("programs/expected/%s%s is missing: run `make -C programs expected check sums`", n, suffix)
			}
		}
	}
	for _, b := range Binaries("") {
		rel := "bin/" + b.Config.Name + "/" + b.Name
		if _, err := os.Stat(b.Path); err != nil {
			t.Errorf("programs/src/%s.c has no binary programs/%s: %s", b.Name, rel, regen)
			continue
		}
		if _, ok := sums[rel]; !ok {
			t.Errorf("programs/%s is not listed in SHA256SUMS: %s", rel, regen)
		}
	}
	for _, c := range Configs {
		entries, err := os.ReadDir(filepath.Join(Dir(), "bin", c.Name))
		if err != nil {
			t.Errorf("programs/bin/%s: %v", c.Name, err)
			continue
		}
		for _, e := range entries {
			if !known[e.Name()] {
				t.Errorf("programs/bin/%s/%s has no source programs/src/%s.c (stale binary or listing: remove it)",
					c.Name, e.Name(), e.Name())
			}
		}
	}
	for p := range sums {
		if strings.HasPrefix(p, "bin/") {
			parts := strings.Split(p, "/")
			if len(parts) != 3 || !known[parts[2]] {
				t.Errorf("SHA256SUMS lists %s, which is not a program binary: %s", p, regen)
			}
		}
	}
}

// TestBinaries checks the Go API and the ELF headers of the binaries.
func TestBinaries(t *testing.T) {
	if !filepath.IsAbs(Dir()) {
		t.Fatalf("Dir() = %q is not absolute", Dir())
	}
	if _, err := os.Stat(filepath.Join(Dir(), "Makefile")); err != nil {
		t.Fatalf("Dir() = %q has no Makefile: %v", Dir(), err)
	}
	n := len(Names())
	if got := len(Binaries("arm64")); got != 2*n {
		t.Errorf("Binaries(arm64): %d binaries, want %d", got, 2*n)
	}
	if got := len(Binaries("s390x")); got != 3*n {
		t.Errorf("Binaries(s390x): %d binaries, want %d", got, 3*n)
	}
	if got := len(Binaries("")); got != 5*n {
		t.Errorf("Binaries(\"\"): %d binaries, want %d", got, 5*n)
	}
	if len(Binaries("riscv64")) != 0 {
		t.Errorf("Binaries(riscv64) is not empty")
	}
	if b, err := Find("s390x-z13O2", "fib"); err != nil || b.Config.Arch != "s390x" {
		t.Errorf("Find(s390x-z13O2, fib) = %+v, %v", b, err)
	}
	if _, err := Find("aarch64-O2", "no-such-program"); err == nil {
		t.Errorf("Find of a missing program succeeded")
	}
	machine := map[string]elf.Machine{"arm64": elf.EM_AARCH64, "s390x": elf.EM_S390}
	for _, b := range Binaries("") {
		if !filepath.IsAbs(b.Path) {
			t.Errorf("%s/%s: path %q is not absolute", b.Config.Name, b.Name, b.Path)
		}
		f, err := elf.Open(b.Path)
		if err != nil {
			t.Errorf("%s/%s: %v", b.Config.Name, b.Name, err)
			continue
		}
		if f.Machine != machine[b.Config.Arch] || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
			t.Errorf("%s/%s: machine %v class %v type %v, want %v ELFCLASS64 ET_EXEC",
				b.Config.Name, b.Name, f.Machine, f.Class, f.Type, machine[b.Config.Arch])
		}
		if f.Section(".eh_frame") == nil {
			t.Errorf("%s/%s: no .eh_frame", b.Config.Name, b.Name)
		}
		if f.Section(".interp") != nil {
			t.Errorf("%s/%s: has an ELF interpreter (not static)", b.Config.Name, b.Name)
		}
		f.Close()
		if _, status, err := b.Expected(); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		} else if status < 0 || status > 127 {
			t.Errorf("%s: expected status %d has the failure bit set or is out of range", b.Name, status)
		}
	}
}
