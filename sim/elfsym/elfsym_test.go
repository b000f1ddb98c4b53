package elfsym_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/internal/oracle"
	"simrun/programs"
	"simrun/programs/debian"
	_ "simrun/sim/arm64" // registers the architectures LoadELF needs
	"simrun/sim/cpu"
	"simrun/sim/elfsym"
	"simrun/sim/profile"
	_ "simrun/sim/s390x"
	"simrun/sim/unwind"
)

// arches are the cross toolchains' prefixes with the Debian names of
// their binutils packages and sysroots.
var arches = []struct{ prefix, pkg, debian string }{
	{"aarch64-linux-gnu", "binutils-aarch64-linux-gnu", "arm64"},
	{"s390x-linux-gnu", "binutils-s390x-linux-gnu", "s390x"},
}

func read(t testing.TB, path string) elfsym.Table {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tab, err := elfsym.Read(f)
	require.NoError(t, err)
	return tab
}

// want is one expected symbol of testdata/syms.S: its name, and its
// start and extent counted in 4-byte nops from _start; at < 0 for a
// symbol at the start of section hot.
type want struct {
	name     string
	at, nops int
}

// TestRead: the table of testdata/syms.S by the package's rules, derived
// by hand from the source's comments, with .symtab and with only the
// .dynsym a stripped file keeps.
func TestRead(t *testing.T) {
	for _, c := range []struct {
		file string
		want []want
	}{
		{"syms-%s.so", []want{
			{"_start", 0, 2}, {"sized", 2, 4}, {"in_sized", 4, 4}, {"unsized", 8, 3},
			{"aliasxx", 11, 2}, {"short_sized", 13, 1}, {"handwritten", 14, 2},
			{"resolver", 16, 2}, {"last_unsized", 18, 2}, {"hot_unsized", -1, 3},
		}},
		// .dynsym has the GLOBAL and WEAK symbols only: unsized reaches
		// the aliases; the ifunc keeps its size; nothing names the
		// locals' code.
		{"syms-%s-stripped.so", []want{
			{"_start", 0, 2}, {"sized", 2, 4}, {"unsized", 8, 3},
			{"aliasxx", 11, 2}, {"resolver", 16, 2}, {"hot_unsized", -1, 3},
		}},
	} {
		for _, a := range []string{"aarch64", "s390x"} {
			file := fmt.Sprintf(c.file, a)
			t.Run(file, func(t *testing.T) {
				path := filepath.Join("testdata", file)
				f, err := elf.Open(path)
				require.NoError(t, err)
				defer f.Close()
				tab, err := elfsym.Read(f)
				require.NoError(t, err)
				start, hot := tab[0].Addr, f.Section("hot").Addr
				var got, exp []string
				for _, s := range tab {
					got = append(got, fmt.Sprintf("%s %#x+%d", s.Name, s.Addr, s.Size))
				}
				for _, w := range c.want {
					addr := start + uint64(4*w.at)
					if w.at < 0 {
						addr = hot
					}
					exp = append(exp, fmt.Sprintf("%s %#x+%d", w.name, addr, 4*w.nops))
				}
				assert.Equal(t, exp, got)
			})
		}
	}
}

func TestLookup(t *testing.T) {
	tab := elfsym.New([]elfsym.Symbol{{Name: "b", Addr: 0x2000, Size: 0x10}, {Name: "a", Addr: 0x1000, Size: 0x100}, {Name: "empty", Addr: 0x3000}})
	for _, c := range []struct {
		addr uint64
		name string
	}{
		{0xfff, ""}, {0x1000, "a"}, {0x10ff, "a"}, {0x1100, ""}, {0x200f, "b"}, {0x2010, ""}, {0x3000, ""}, {1<<64 - 1, ""},
	} {
		s, ok := tab.Lookup(c.addr)
		if c.name == "" {
			assert.False(t, ok, "%#x: %v", c.addr, s)
			continue
		}
		if assert.True(t, ok, "%#x", c.addr) {
			assert.Equal(t, c.name, s.Name, "%#x", c.addr)
		}
	}
	r := tab.Rebased(0x10000)
	s, ok := r.Lookup(0x11080)
	assert.True(t, ok)
	assert.Equal(t, "a", s.Name)
	assert.Equal(t, uint64(0x1000), tab[0].Addr, "Rebased copies")
	addr, ok := r.Addr("b")
	assert.True(t, ok)
	assert.Equal(t, uint64(0x12000), addr)
}

// TestAgainstBinutils symbolizes, for a set of files, the first, second,
// last and first-after byte of every symbol and of every executable
// section, and compares with binutils' addr2line -f on a copy without
// DWARF (so that it names code from the symbol table, as we do) and with
// nm for aliases. Where binutils differs by design, the test holds the
// difference to exactly what is documented:
//
//   - addr2line ignores st_size: it names alignment padding after a
//     sized function after that function, where we (and perf) give no
//     name;
//   - binutils' AArch64 back end does not take STT_GNU_IFUNC symbols
//     for functions (its addr2line names their code after the symbol
//     before); its s390x back end does, as perf does and we do;
//   - inside a sized function, addr2line may keep the function's name
//     past a label in it (which it does depends on the addresses asked
//     before: BFD caches the last function it found); we name the code
//     from the label on, as objdump's disassembly headings do.
//
// Aliases (one address, several names) may be named differently: any
// name nm lists at that address passes.
func TestAgainstBinutils(t *testing.T) {
	for _, a := range arches {
		t.Run(a.debian, func(t *testing.T) {
			addr2line := oracle.RequireTool(t, a.prefix+"-addr2line", a.pkg)
			nm := oracle.RequireTool(t, a.prefix+"-nm", a.pkg)
			objcopy := oracle.RequireTool(t, a.prefix+"-objcopy", a.pkg)
			short := strings.SplitN(a.prefix, "-", 2)[0]
			files := []string{
				filepath.Join("testdata", "syms-"+short+".so"),
				filepath.Join("testdata", "syms-"+short+"-stripped.so"),
			}
			for _, name := range []string{"listchase", "callconv"} {
				b, err := programs.Find(short+"-O2", name)
				require.NoError(t, err)
				files = append(files, b.Path)
			}
			for _, b := range programs.GlibcBinaries("") {
				if b.Config.Name == short+"-glibc-O2" && b.Name == "sortsearch" {
					files = append(files, b.Path)
				}
			}
			if sysroot, err := debian.Sysroot(a.debian); err == nil {
				libs, _ := filepath.Glob(filepath.Join(sysroot, "lib", a.prefix, "libc.so.6"))
				files = append(files, libs...)
			} else if os.Getenv("CI") != "" {
				t.Fatalf("%v (CI is set: the stripped libc.so.6 must be compared)", err)
			} else {
				t.Logf("no stripped libc.so.6 compared: %v", err)
			}
			require.GreaterOrEqual(t, len(files), 5)
			for _, path := range files {
				t.Run(filepath.Base(path), func(t *testing.T) {
					compareBinutils(t, path, addr2line, nm, objcopy, short == "aarch64")
				})
			}
		})
	}
}

func compareBinutils(t *testing.T, path, addr2line, nm, objcopy string, ifuncBlind bool) {
	nodebug := filepath.Join(t.TempDir(), "nodebug")
	out, err := exec.Command(objcopy, "--strip-debug", path, nodebug).CombinedOutput()
	require.NoError(t, err, "%s", out)
	tab := read(t, nodebug)
	require.NotEmpty(t, tab)
	f, err := elf.Open(nodebug)
	require.NoError(t, err)
	defer f.Close()
	dynamic := f.Section(".symtab") == nil

	// nm: the names at each address, the IFUNC symbols, the sized
	// functions (nm -S prints a size only for sized symbols).
	args := []string{"-n", "-S", nodebug}
	if dynamic {
		args = []string{"-D", "-n", "-S", nodebug}
	}
	out, err = exec.Command(nm, args...).Output()
	require.NoError(t, err)
	names := map[uint64][]string{}
	ifunc := map[string]bool{}
	plain := map[uint64][]string{} // names but the IFUNC ones
	type sized struct {
		name     string
		lo, size uint64
	}
	var funcs []sized
	for _, l := range strings.Split(string(out), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 3 {
			continue
		}
		addr, err := strconv.ParseUint(fs[0], 16, 64)
		require.NoError(t, err, l)
		name, typ := fs[len(fs)-1], fs[len(fs)-2]
		name, _, _ = strings.Cut(name, "@") // .dynsym versions
		names[addr] = append(names[addr], name)
		if typ == "i" && ifuncBlind {
			ifunc[name] = true
		} else {
			plain[addr] = append(plain[addr], name)
		}
		if len(fs) == 4 && strings.ContainsAny(typ, "TtWi") {
			size, err := strconv.ParseUint(fs[1], 16, 64)
			require.NoError(t, err, l)
			funcs = append(funcs, sized{name, addr, size})
		}
	}
	// enclosing is the sized function whose body holds addr past its
	// start, if any.
	enclosing := func(addr, after uint64) (string, bool) {
		for _, s := range funcs {
			if s.lo < after && addr-s.lo < s.size {
				return s.name, true
			}
		}
		return "", false
	}

	// before is what addr2line calls addr, which ignores st_size and
	// IFUNC symbols: the names of the nearest other symbols at or below
	// it in its section (an IFUNC's FUNC aliases, if it has any), or
	// "??".
	before := func(addr uint64) []string {
		sec := sectionOf(f, addr)
		if sec == nil {
			return []string{"??"}
		}
		for i := sort.Search(len(tab), func(i int) bool { return tab[i].Addr > addr }) - 1; i >= 0 && tab[i].Addr >= sec.Addr; i-- {
			if ns := plain[tab[i].Addr]; len(ns) > 0 {
				return ns
			}
		}
		return []string{"??"}
	}

	seen := map[uint64]bool{}
	var addrs []uint64
	add := func(a ...uint64) {
		for _, x := range a {
			if !seen[x] {
				seen[x] = true
				addrs = append(addrs, x)
			}
		}
	}
	for _, s := range tab {
		add(s.Addr, s.Addr+s.Size/2&^1, s.Addr+s.Size-2, s.Addr+s.Size)
		if s.Size >= 4 {
			add(s.Addr + 2)
		}
	}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Size >= 2 {
			add(s.Addr, s.Addr+s.Size-2)
		}
	}

	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(addr2line, "-f", "-e", nodebug)
	cmd.Stdin = &in
	out, err = cmd.Output()
	require.NoError(t, err)
	sc := bufio.NewScanner(bytes.NewReader(out))
	checked, labels, ifuncs := 0, 0, 0
	for _, a := range addrs {
		require.True(t, sc.Scan(), "addr2line printed too little")
		theirs := sc.Text()
		require.True(t, sc.Scan())
		ours, ok := tab.Lookup(a)
		switch {
		case ok && ifunc[ours.Name]:
			assert.Contains(t, before(a), theirs, "%#x: in ifunc %s", a, ours.Name)
			ifuncs++
			continue
		case ok && theirs != ours.Name:
			if fn, in := enclosing(a, ours.Addr); in && fn == theirs && !isFunc(f, dynamic, ours.Name) {
				labels++ // a label inside a sized function
				continue
			}
			assert.Contains(t, names[ours.Addr], theirs, "%#x: we say %s, addr2line %s", a, ours.Name, theirs)
		case !ok:
			// addr2line ignores st_size: past a sized function's end
			// (alignment padding) it still names the function before
			// in the section.
			assert.Contains(t, before(a), theirs, "%#x: no symbol here for us", a)
		}
		checked++
	}
	t.Logf("%d addresses, %d as addr2line names them, %d label and %d ifunc differences", len(addrs), checked, labels, ifuncs)
	assert.Greater(t, checked, len(addrs)/2)
}

// sectionOf returns the executable section holding addr.
func sectionOf(f *elf.File, addr uint64) *elf.Section {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && addr-s.Addr < s.Size {
			return s
		}
	}
	return nil
}

// isFunc reports whether name is a typed function (STT_FUNC) in f.
func isFunc(f *elf.File, dynamic bool, name string) bool {
	syms, _ := f.Symbols()
	if dynamic {
		syms, _ = f.DynamicSymbols()
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return true
		}
	}
	return false
}

// FuzzRead: any file debug/elf opens gives a table or an error, never a
// panic, and every table keeps the package's invariants.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"syms-aarch64.so", "syms-s390x-stripped.so"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		tab, err := elfsym.Read(ef)
		if err != nil {
			return
		}
		for i, s := range tab {
			if s.Size == 0 || s.Name == "" {
				t.Fatalf("symbol %d %+v: empty", i, s)
			}
			if i > 0 && tab[i-1].Addr >= s.Addr {
				t.Fatalf("symbols %d, %d out of order: %+v %+v", i-1, i, tab[i-1], s)
			}
			if got, ok := tab.Lookup(s.Addr); !ok || got.Name != s.Name {
				t.Fatalf("Lookup(%#x) = %v, %v; want %s", s.Addr, got, ok, s.Name)
			}
		}
	})
}

// TestUsersAgree: the loader (cpu.Image.SymbolAt), the tracer
// (unwind.Symbols) and the profile writers (profile.Binary) name every
// symbol's first and last byte and the byte after it alike, at a load
// bias, including Debian's stripped libc.so.6 (named from its debug
// file when libc6-dbg is in the sysroot, else from .dynsym).
func TestUsersAgree(t *testing.T) {
	const bias = 0x40000000
	files := []string{"testdata/syms-aarch64.so", "testdata/syms-s390x-stripped.so"}
	for _, a := range arches {
		if sysroot, err := debian.Sysroot(a.debian); err == nil {
			files = append(files, filepath.Join(sysroot, "lib", a.prefix, "libc.so.6"))
		}
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			img, err := cpu.LoadELF(cpu.NewMemory(), path, data, bias)
			require.NoError(t, err)
			obj, err := unwind.NewObject(path, data)
			require.NoError(t, err)
			syms, err := unwind.ReadSymbols(obj)
			require.NoError(t, err)
			syms = syms.Rebased(bias)
			bin, err := profile.NewBinary(path, data, bias)
			require.NoError(t, err)
			require.Empty(t, bin.Warnings)
			tab := read(t, path)
			require.NotEmpty(t, tab)
			for _, s := range tab {
				for _, pc := range []uint64{s.Addr, s.Addr + s.Size - 1, s.Addr + s.Size} {
					pc += bias
					var loader string
					if l, _, ok := img.SymbolAt(pc); ok {
						loader = l.Name
					}
					tracer, _ := syms.Func(pc)
					prof := bin.Symbolize(pc).Func
					if !assert.Equal(t, loader, tracer, "%#x", pc) || !assert.Equal(t, loader, prof, "%#x", pc) {
						return
					}
				}
			}
			if strings.HasPrefix(filepath.Base(path), "libc") {
				addr, ok := tab.Addr("qsort")
				require.True(t, ok, "libc.so.6's .dynsym has qsort")
				assert.Equal(t, "qsort", bin.Symbolize(addr+bias+4).Func)
			}
		})
	}
}
