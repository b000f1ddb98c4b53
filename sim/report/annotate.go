package report

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"simrun/sim/profile"
)

// Window sizes of the annotated views: the lines (instructions) shown on
// each side of a sampled one.  Everything between two windows collapses
// into one "…" row.
const (
	srcRadius   = 2
	insnRadius  = 3
	maxSrcBytes = 8 << 20 // a source file larger than this is not read
)

// lineStats accumulate the samples of one source line or instruction.
type lineStats struct {
	Samples            int
	Total, Issue, Xlat uint64
	ev                 map[string]int
}

func (a *lineStats) add(s *profile.Sample) {
	a.Samples++
	a.Total += uint64(s.Lat[profile.LatTotal])
	a.Issue += uint64(s.Lat[profile.LatIssue])
	a.Xlat += uint64(s.Lat[profile.LatXlat])
	for _, e := range s.EventNames() {
		if e == "RETIRED" {
			continue // every sample of a user program retires: no news
		}
		if a.ev == nil {
			a.ev = map[string]int{}
		}
		a.ev[e]++
	}
}

// events are the non-RETIRED event names with their counts, most frequent
// first.
func (a *lineStats) events() []Count {
	return counts(a.ev)
}

// SrcLine is one row of an annotated source window; Gap rows stand for
// the lines skipped between two windows.
type SrcLine struct {
	N    int
	Text string // "" when the file was not found
	lineStats
	Gap     bool
	Skipped int
}

// SourceFile is the annotated source of one function in one file (a
// function inlines code of several files).
type SourceFile struct {
	Name  string // as DWARF names it
	Path  string // where the text was read, "" if it was not found
	Note  string // why there is no text
	Lines []SrcLine
	Max   int // the most samples of one line (the bars' scale)
}

// DisLine is one row of a disassembly window; Gap rows stand for the
// instructions skipped between two windows.
type DisLine struct {
	PC    uint64
	Bytes string
	Text  string
	Where string // file:line (file's base name)
	lineStats
	Events  []Count
	Gap     bool
	Skipped int
}

// annotate disassembles fn and returns the windows around the sampled
// instructions, and the sampled source lines with their windows.
func annotate(bin *profile.Binary, fn *profile.Func, samples []profile.Sample, srcDirs []string) ([]DisLine, []SourceFile, error) {
	code, ok := bin.Code(fn.Start, fn.End)
	if !ok {
		return nil, nil, fmt.Errorf("%s: %s [0x%x, 0x%x) is not in an executable section", bin.Path, fn.Name, fn.Start, fn.End)
	}
	at := map[uint64]*lineStats{}
	type fileLine struct {
		file string
		line int
	}
	lines := map[fileLine]*lineStats{}
	for i := range samples {
		s := &samples[i]
		if s.PC < fn.Start || s.PC >= fn.End {
			continue
		}
		a := at[s.PC]
		if a == nil {
			a = &lineStats{}
			at[s.PC] = a
		}
		a.add(s)
		if file, line, ok := bin.LineAt(s.PC); ok {
			k := fileLine{file, line}
			l := lines[k]
			if l == nil {
				l = &lineStats{}
				lines[k] = l
			}
			l.add(s)
		}
	}

	// Every instruction, then the windows around the sampled ones.
	var all []DisLine
	for off := 0; off < len(code); {
		pc := fn.Start + uint64(off)
		text, n := bin.Arch.Disasm(code[off:], pc)
		if n <= 0 {
			n = max(1, min(int(bin.Arch.InsnAlign), len(code)-off))
			text = "(undecodable)"
		}
		d := DisLine{PC: pc, Bytes: fmt.Sprintf("% x", code[off:off+n]), Text: symbolicTargets(bin, text, pc)}
		if file, line, ok := bin.LineAt(pc); ok {
			d.Where = fmt.Sprintf("%s:%d", filepath.Base(file), line)
		}
		if a := at[pc]; a != nil {
			d.lineStats = *a
			d.Events = a.events()
		}
		all = append(all, d)
		off += n
	}
	dis := windows(len(all), insnRadius, func(i int) bool { return all[i].Samples > 0 },
		func(i int) DisLine { return all[i] },
		func(skipped int) DisLine { return DisLine{Gap: true, Skipped: skipped} })

	// Source: the sampled lines of each file, with their neighbours.
	byFile := map[string][]int{}
	for k := range lines {
		byFile[k.file] = append(byFile[k.file], k.line)
	}
	var files []string
	for f := range byFile {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool {
		// The file with most samples first.
		si, sj := 0, 0
		for _, l := range byFile[files[i]] {
			si += lines[fileLine{files[i], l}].Samples
		}
		for _, l := range byFile[files[j]] {
			sj += lines[fileLine{files[j], l}].Samples
		}
		if si != sj {
			return si > sj
		}
		return files[i] < files[j]
	})
	var src []SourceFile
	for _, f := range files {
		sf := SourceFile{Name: f}
		text, path, err := readSource(f, append([]string{filepath.Dir(bin.Path)}, srcDirs...))
		if err != nil {
			sf.Note = err.Error()
		}
		sf.Path = path
		ls := byFile[f]
		sort.Ints(ls)
		last := ls[len(ls)-1]
		if text != nil {
			last = max(last, len(text))
		} else {
			last += srcRadius
		}
		sampled := map[int]bool{}
		for _, l := range ls {
			sampled[l] = true
		}
		// Lines are numbered from 1; index i is line i+1.
		sf.Lines = windows(last, srcRadius, func(i int) bool { return sampled[i+1] },
			func(i int) SrcLine {
				l := SrcLine{N: i + 1}
				if i < len(text) {
					l.Text = text[i]
				}
				if a := lines[fileLine{f, i + 1}]; a != nil {
					l.lineStats = *a
				}
				return l
			},
			func(skipped int) SrcLine { return SrcLine{Gap: true, Skipped: skipped} })
		for _, l := range sf.Lines {
			sf.Max = max(sf.Max, l.Samples)
		}
		src = append(src, sf)
	}
	return dis, src, nil
}

// windows picks the rows within radius of a hot one among n rows, with a
// gap row wherever rows are left out (none before the first window when
// it starts at row 0, none after the last when it reaches the end).
func windows[T any](n, radius int, hot func(int) bool, row func(int) T, gap func(int) T) []T {
	keep := make([]bool, n)
	for i := 0; i < n; i++ {
		if hot(i) {
			for j := max(0, i-radius); j <= min(n-1, i+radius); j++ {
				keep[j] = true
			}
		}
	}
	var out []T
	skipped := 0
	for i := 0; i < n; i++ {
		if !keep[i] {
			skipped++
			continue
		}
		if skipped > 0 {
			out = append(out, gap(skipped))
			skipped = 0
		}
		out = append(out, row(i))
	}
	if skipped > 0 && len(out) > 0 {
		out = append(out, gap(skipped))
	}
	return out
}

// readSource finds a source file DWARF names: the path as given (absolute,
// or relative to the working directory), then relative to each of dirs
// and their parents up to two levels (a program built in a tree whose
// binaries sit in a subdirectory).  It reads regular files only, of at
// most maxSrcBytes.
func readSource(name string, dirs []string) ([]string, string, error) {
	cands := []string{name}
	if !filepath.IsAbs(name) {
		seen := map[string]bool{}
		for _, d := range dirs {
			for up := 0; up <= 2; up++ {
				c := filepath.Join(d, strings.Repeat("../", up), name)
				if !seen[c] {
					seen[c] = true
					cands = append(cands, c)
				}
			}
		}
	}
	for _, c := range cands {
		st, err := os.Stat(c)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if st.Size() > maxSrcBytes {
			return nil, "", fmt.Errorf("%s is larger than %d MiB: line numbers only", c, maxSrcBytes>>20)
		}
		data, err := os.ReadFile(c)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %v: line numbers only", c, err)
		}
		var text []string
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, maxSrcBytes)
		for sc.Scan() {
			text = append(text, strings.ReplaceAll(sc.Text(), "\t", "    "))
		}
		return text, c, nil
	}
	return nil, "", fmt.Errorf("the source file is not on this host: line numbers and counts only")
}

var (
	// arm64 (x/arch syntax) writes a pc-relative operand as .+0xOFF, the
	// offset in 64-bit two's complement.
	relTarget = regexp.MustCompile(`\.([+-])0x([0-9a-f]+)`)
	// s390x writes the resolved absolute address as the last operand.
	absTarget = regexp.MustCompile(`([ ,])0x([0-9a-f]+)$`)
)

// symbolicTargets rewrites the pc-relative and absolute code addresses of
// an instruction's text as FUNC+0xOFF when a symbol covers them (b.ne
// .+0xffffffffffffffe8 becomes b.ne main+0x40); an address no symbol
// covers is left absolute.  arm64's adrp computes a 4 KiB page, not pc +
// offset (Arm ARM C6.2 ADRP), and is written as that page's address.
func symbolicTargets(bin *profile.Binary, text string, pc uint64) string {
	mnem, _, _ := strings.Cut(text, " ")
	name := func(addr uint64) string {
		if f, ok := bin.FuncAt(addr); ok {
			if addr == f.Start {
				return f.Name
			}
			return fmt.Sprintf("%s+0x%x", f.Name, addr-f.Start)
		}
		return fmt.Sprintf("0x%x", addr)
	}
	if m := relTarget.FindStringSubmatchIndex(text); m != nil {
		off, err := strconv.ParseUint(text[m[4]:m[5]], 16, 64)
		if err != nil {
			return text
		}
		if text[m[2]:m[3]] == "-" {
			off = -off
		}
		addr := pc + off
		repl := name(addr)
		if mnem == "adrp" {
			repl = fmt.Sprintf("0x%x", pc&^0xfff+off)
		}
		return text[:m[0]] + repl + text[m[1]:]
	}
	if bin.Arch != nil && bin.Arch.Name == "s390x" && isS390xPCRel(mnem) {
		if m := absTarget.FindStringSubmatchIndex(text); m != nil {
			addr, err := strconv.ParseUint(text[m[4]:m[5]], 16, 64)
			if err == nil {
				return text[:m[3]] + name(addr)
			}
		}
	}
	return text
}

// isS390xPCRel: the relative-immediate instructions whose last operand is
// an address (z/Architecture Principles of Operation: BRC, BRCL, BRAS,
// BRASL, BRCT(G), BRXH/BRXLE, the compare-and-branch-relative family,
// LARL and the *RL loads, stores and compares), by their mnemonics and
// extended mnemonics (j, jne, jg…).
func isS390xPCRel(m string) bool {
	switch {
	case strings.HasPrefix(m, "j"), strings.HasPrefix(m, "br"):
		return true
	case strings.HasSuffix(m, "rl") && m != "srl": // larl, lgrl, clrl, strl, exrl… (srl shifts)
		return true
	case strings.HasPrefix(m, "c") && strings.Contains(m, "j"): // crj, cgij, clgrjne…
		return true
	}
	return false
}
