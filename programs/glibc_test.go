package programs

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"
)

const regenGlibc = "run `make -C programs/glibc all sums`"

// TestGlibcSums: every glibc program source, its expected results, the
// Makefile and every binary are listed in glibc/SHA256SUMS with their
// current digests, and nothing else is.
func TestGlibcSums(t *testing.T) {
	dir := GlibcDir()
	sums := readSumsIn(t, dir)
	want := map[string]bool{"Makefile": true}
	names := GlibcNames()
	if len(names) < 5 {
		t.Fatalf("only %d glibc programs", len(names))
	}
	for _, pat := range []string{"src/*.c", "src/*.cc", "expected/*"} {
		m, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pat)))
		for _, f := range m {
			rel, _ := filepath.Rel(dir, f)
			want[filepath.ToSlash(rel)] = true
		}
	}
	for _, b := range GlibcBinaries("") {
		want["bin/"+b.Config.Name+"/"+b.Name] = true
		for _, suffix := range []string{".stdout", ".status"} {
			if !want["expected/"+b.Name+suffix] {
				t.Errorf("programs/glibc/expected/%s%s is missing: run `make -C programs/glibc expected check sums`", b.Name, suffix)
			}
		}
	}
	for p := range want {
		digest, ok := sums[p]
		if !ok {
			t.Errorf("programs/glibc/%s is not listed in SHA256SUMS: %s", p, regenGlibc)
			continue
		}
		got, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || got != digest {
			t.Errorf("programs/glibc/%s does not match SHA256SUMS (%v): %s", p, err, regenGlibc)
		}
	}
	for p := range sums {
		if !want[p] {
			t.Errorf("programs/glibc/SHA256SUMS lists %s, which is not an input or binary: %s", p, regenGlibc)
		}
	}
}

// TestGlibcBinaries: static ET_EXEC files for the right machine, linked
// with glibc (they have .tdata or .tbss and glibc's IRELATIVE relocations
// or libc symbols), with an expected status in range.
func TestGlibcBinaries(t *testing.T) {
	machine := map[string]elf.Machine{"arm64": elf.EM_AARCH64, "s390x": elf.EM_S390}
	bins := GlibcBinaries("")
	if len(bins) != len(GlibcConfigs)*len(GlibcNames()) {
		t.Fatalf("%d glibc binaries", len(bins))
	}
	for _, b := range bins {
		f, err := elf.Open(b.Path)
		if err != nil {
			t.Errorf("%s/%s: %v (%s)", b.Config.Name, b.Name, err, regenGlibc)
			continue
		}
		if f.Machine != machine[b.Config.Arch] || f.Type != elf.ET_EXEC || f.Section(".interp") != nil {
			t.Errorf("%s/%s: machine %v type %v: want a static %v ET_EXEC", b.Config.Name, b.Name, f.Machine, f.Type, machine[b.Config.Arch])
		}
		syms, _ := f.Symbols()
		libc := false
		for _, s := range syms {
			libc = libc || s.Name == "__libc_start_main"
		}
		if !libc {
			t.Errorf("%s/%s: no __libc_start_main: not linked with glibc", b.Config.Name, b.Name)
		}
		f.Close()
		if _, st, err := b.Expected(); err != nil || st < 0 || st > 127 {
			t.Errorf("%s: expected status %d, %v", b.Name, st, err)
		}
	}
	if _, err := os.Stat(filepath.Join(GlibcDir(), "Makefile")); err != nil {
		t.Error(err)
	}
}
