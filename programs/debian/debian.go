// Package debian holds what the acceptance test "real distribution
// programs" needs besides its table: where fetch.sh keeps the Debian
// bookworm sysroots (arm64, s390x) and the input files every case starts
// with.
//
// The sysroots are not part of the repository: fetch.sh downloads the
// packages with apt-get and unpacks them with dpkg -x, once.
package debian

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// CacheDir is where fetch.sh puts the sysroots: $SIMRUN_DEBIAN_CACHE, else
// $XDG_CACHE_HOME/simrun/debian, else ~/.cache/simrun/debian (the same rule
// as the script's).
func CacheDir() (string, error) {
	if d := os.Getenv("SIMRUN_DEBIAN_CACHE"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "simrun", "debian"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("debian: no cache folder: set SIMRUN_DEBIAN_CACHE (%w)", err)
	}
	return filepath.Join(home, ".cache", "simrun", "debian"), nil
}

// Interp is the dynamic loader each architecture's programs name
// (PT_INTERP), as Debian's libc6 package ships it.
var Interp = map[string]string{
	"arm64": "/lib/ld-linux-aarch64.so.1",
	"s390x": "/lib/ld64.so.1",
}

// Sysroot returns the sysroot fetch.sh made for arch ("arm64", "s390x"),
// or an error that says what is missing and how to make it.
func Sysroot(arch string) (string, error) {
	interp, ok := Interp[arch]
	if !ok {
		return "", fmt.Errorf("debian: unknown arch %q (want arm64 or s390x)", arch)
	}
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, arch, "sysroot")
	stamp := filepath.Join(cache, arch, "stamp")
	if _, err := os.Stat(stamp); err != nil {
		return "", fmt.Errorf("debian: no %s sysroot in %s (its stamp %s is missing): run programs/debian/fetch.sh", arch, cache, stamp)
	}
	if _, err := os.Stat(filepath.Join(dir, interp)); err != nil {
		return "", fmt.Errorf("debian: the %s sysroot %s has no loader %s: run programs/debian/fetch.sh again", arch, dir, interp)
	}
	return dir, nil
}

// FixedTime is the modification and access time of every prepared input
// file and directory, so that tools which show or store times (tar, ls -t,
// stat) see the same in every directory.
var FixedTime = time.Date(2024, 5, 17, 12, 34, 56, 0, time.UTC)

// buildMk is the make case's Makefile, one of the inputs so that its
// time is FixedTime too (make compares it with the clock).
//
//go:embed testdata/build.mk
var buildMk []byte

// text is the prose the text tools work on.
const text = `The simulator runs programs built for other machines. It reads each
instruction, decodes it, and carries out what the architecture manual
says the instruction does. When the program asks the kernel for
something, the simulated kernel answers: it opens files, maps memory,
reads the clock and writes to the terminal. A program that runs the
same under the simulator and under the reference emulator has shown
that the two agree on every instruction it used, and on every system
call it made. Real programs from a distribution use far more of both
than small test programs do: the dynamic loader alone relocates
thousands of symbols, the C library picks string routines by the
features the processor reports, and the tools themselves parse
options, read directories, sort, hash, compress and print numbers.
Numbers such as 42, 3.14159, 2718 and 65536 appear in the text, and
so do the words alpha, beta, gamma and delta, twice: alpha beta.
`

// Inputs are the files every case finds in its working directory, by
// relative path; a name ending in "/" is an (empty) directory.
func Inputs() map[string][]byte {
	in := map[string][]byte{"text.txt": []byte(text), "build.mk": buildMk}

	// text2.txt: text.txt with one line changed, one removed and one
	// added, for diff and cmp.
	lines := strings.SplitAfter(text, "\n")
	var t2 []string
	for i, l := range lines {
		switch i {
		case 2:
			t2 = append(t2, strings.ReplaceAll(l, "kernel", "KERNEL"))
		case 7:
		case 10:
			t2 = append(t2, l, "an added line\n")
		default:
			t2 = append(t2, l)
		}
	}
	in["text2.txt"] = []byte(strings.Join(t2, ""))

	// words.txt: one word a line in text order, duplicates kept;
	// sorted.txt the same sorted bytewise, for uniq, comm and join.
	var words []string
	for _, w := range strings.Fields(text) {
		words = append(words, strings.ToLower(strings.Trim(w, ".,:")))
	}
	in["words.txt"] = []byte(strings.Join(words, "\n") + "\n")
	sorted := append([]string(nil), words...)
	sort.Strings(sorted)
	in["sorted.txt"] = []byte(strings.Join(sorted, "\n") + "\n")

	// nums.txt: integers from a fixed linear congruential sequence, some
	// negative, some repeated.
	var nums bytes.Buffer
	x := uint32(12345)
	for i := 0; i < 300; i++ {
		x = x*1103515245 + 12345
		fmt.Fprintln(&nums, int(x>>8)%20000-5000)
	}
	in["nums.txt"] = nums.Bytes()

	// table.csv: name,quantity,price,city.
	var table bytes.Buffer
	cities := []string{"Berlin", "Lyon", "Porto", "Oslo", "Turin", "Graz"}
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&table, "item%02d,%d,%d.%02d,%s\n", i, (i*37)%101, (i*53)%97, (i*29)%100, cities[(i*7)%len(cities)])
	}
	in["table.csv"] = table.Bytes()

	// big.txt: about 200 KiB of lines that compress well but not
	// trivially, for the compressors.
	var big bytes.Buffer
	for i := 0; big.Len() < 200<<10; i++ {
		x = x*1103515245 + 12345
		fmt.Fprintf(&big, "%06d %s %08x %s\n", i, words[int(x>>16)%len(words)], x, words[i%len(words)])
	}
	in["big.txt"] = big.Bytes()

	// lines.txt: 140,000 short lines, past GNU sort's 131,072 lines per
	// thread (SUBTHREAD_LINES_HEURISTIC), so sort --parallel=2 sorts
	// with two threads.
	var many bytes.Buffer
	for i := 0; i < 140_000; i++ {
		x = x*1103515245 + 12345
		fmt.Fprintf(&many, "%08x\n", x)
	}
	in["lines.txt"] = many.Bytes()

	// data.bin: 3000 bytes of every value, for od and the checksums.
	bin := make([]byte, 3000)
	for i := range bin {
		x = x*1103515245 + 12345
		bin[i] = byte(x >> 24)
	}
	in["data.bin"] = bin

	// text.b64 as coreutils' base64 writes it (76-column lines).
	enc := base64.StdEncoding.EncodeToString([]byte(text))
	var b64 strings.Builder
	for len(enc) > 76 {
		b64.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	b64.WriteString(enc + "\n")
	in["text.b64"] = []byte(b64.String())

	// sums.sha256 for sha256sum -c: two right sums, computed here.
	var sums strings.Builder
	for _, n := range []string{"text.txt", "table.csv"} {
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(in[n]), n)
	}
	in["sums.sha256"] = []byte(sums.String())

	// A directory tree for ls, find, du and tar.
	in["tree/a.txt"] = []byte("first file\n")
	in["tree/b/c.txt"] = []byte("second file\nwith two lines\n")
	in["tree/b/d.dat"] = bin[:700]
	in["tree/b/f/g.txt"] = []byte(text[:200])
	in["tree/e/"] = nil
	in["tree/h.txt"] = []byte(strings.Repeat("x", 5000))
	return in
}

// Prepare writes Inputs into dir (which exists), then sets FixedTime as
// the times of every file and directory in it, dir included.
func Prepare(dir string) error {
	in := Inputs()
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names) // one creation order everywhere
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, in[name], 0o644); err != nil {
			return err
		}
	}
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, FixedTime, FixedTime)
	})
}

// AfterStep gives the files step n (from 1) of a case wrote in dir, the
// ones newer than the steps before left them, the time FixedTime + n
// hours. Files the guest writes get the host's time, which a simulated
// clock (2026 and a few seconds) has not reached: make, comparing them
// with the clock, warned of a file "N s in the future", N and so the
// run's instructions changing from one test run to the next. With the
// steps' outputs an hour apart, every run sees the same times (and
// make's second run finds its targets up to date, no skew).
func AfterStep(dir string, n int) error {
	before := FixedTime.Add(time.Duration(n-1) * time.Hour)
	at := FixedTime.Add(time.Duration(n) * time.Hour)
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil || info.Mode()&os.ModeSymlink != 0 || !info.ModTime().After(before) {
			return err
		}
		return os.Chtimes(p, at, at)
	})
}
