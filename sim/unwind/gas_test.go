package unwind_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"simrun/internal/oracle"
	"simrun/sim/unwind"
	"simrun/sim/unwind/internal/shared"
	"simrun/sim/unwind/sframe"
)

// The gas cfi-sframe suite (binutils 2.46): every aarch64, s390x and
// common test is assembled with Debian's binutils 2.40 into an object
// whose .eh_frame is the input; simrun emits SFrame V3 from it and the
// result is checked against (a) the .d expectation (dejagnu regexp_diff),
// (b) the byte-exact objdump output of binutils 2.46, (c) the section
// bytes gas 2.46 wrote (start-address fields checked against the
// relocations gas wrote for them instead) and (d) gas's warnings.
// The x86-64 tests run too, against (a) and (d) (there are no golden
// files for them).

type assembler struct {
	tool, pkg string
	flags     []string
}

var assemblers = map[string]assembler{
	"aarch64": {"aarch64-linux-gnu-as", "binutils-aarch64-linux-gnu", nil},
	"s390x":   {"s390x-linux-gnu-as", "binutils-s390x-linux-gnu", nil},
	"x86_64":  {"as", "binutils", []string{"--64"}},
}

// gasCannotPass lists the checks that cannot pass, keyed by
// "test.arch/check", with the reason.  The test fails if one of them
// starts passing, so the list stays true.
var gasCannotPass = map[string]string{
	"cfi-sframe-common-1c.aarch64/b": "tests gas's --gsframe=no (no .sframe section at all); simrun always emits SFrame from .eh_frame",
	"cfi-sframe-common-1c.s390x/b":   "tests gas's --gsframe=no (no .sframe section at all); simrun always emits SFrame from .eh_frame",
	"cfi-sframe-common-1c.aarch64/c": "gas's --gsframe=no writes no section, so there are no bytes to compare",
	"cfi-sframe-common-1c.s390x/c":   "gas's --gsframe=no writes no section, so there are no bytes to compare",
	"cfi-sframe-x86_64-empty-2.x86_64/d": ".eh_frame does not record that DW_CFA_val_offset came from .cfi_escape: " +
		"simrun words it as the .cfi_val_offset directive (\".cfi_val_offset with FP reg 6\")",
	"cfi-sframe-x86_64-empty-3.x86_64/a": "one .cfi_escape holding two DWARF ops: gas 2.46 gives up on the escape as a whole; " +
		".eh_frame keeps only the ops (DW_CFA_val_offset r2, DW_CFA_expression r10), which are harmless, so simrun emits the FDE",
	"cfi-sframe-x86_64-empty-3.x86_64/d": "(same as /a) no warning, because the two ops are read one by one",
}

// notApplicable are checks with nothing to compare.
var notApplicable = map[string]string{
	"cfi-sframe-common-1b/a": "`readelf -S` of the object (section type GNU_SFRAME): simrun writes the raw section, not an object",
	"cfi-sframe-common-1c/a": "`readelf -S` of the object (section type GNU_SFRAME): simrun writes the raw section, not an object",
}

type gasResult struct {
	pass, fail, cannot int
}

func TestGasCFISFrameSuite(t *testing.T) {
	dir := shared.SFrame(t, "gas-cfi-sframe")
	golden := shared.SFrame(t, "golden", "gas-cfi-sframe")
	tests, err := filepath.Glob(filepath.Join(dir, "*.d"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no tests in %s", dir)
	}
	results := map[string]*gasResult{}
	seen := map[string]bool{}
	for _, d := range tests {
		name := strings.TrimSuffix(filepath.Base(d), ".d")
		for _, arch := range gasArches(name) {
			key := name + "." + arch
			res := results[arch]
			if res == nil {
				res = &gasResult{}
				results[arch] = res
			}
			t.Run(key, func(t *testing.T) {
				checks := runGasCase(t, dir, golden, name, arch)
				ok := true
				for _, c := range []string{"a", "b", "c", "d"} {
					err, ran := checks[c]
					if !ran {
						continue
					}
					id := key + "/" + c
					seen[id] = true
					if reason, listed := gasCannotPass[id]; listed {
						if err == nil {
							t.Errorf("%s passes now; remove it from gasCannotPass (%s)", id, reason)
						} else {
							t.Logf("%s cannot pass: %s (%v)", id, reason, err)
						}
						continue
					}
					if err != nil {
						ok = false
						t.Errorf("(%s) %v", c, err)
					}
				}
				switch {
				case !ok:
					res.fail++
				case hasListed(key):
					res.cannot++
				default:
					res.pass++
				}
			})
		}
	}
	for id := range gasCannotPass {
		if !seen[id] {
			t.Errorf("gasCannotPass names %s, which did not run", id)
		}
	}
	var archs []string
	for a := range results {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	for _, a := range archs {
		r := results[a]
		t.Logf("gas cfi-sframe suite, %s: %d pass, %d fail, %d with a listed check that cannot pass (of %d)", a, r.pass, r.fail, r.cannot, r.pass+r.fail+r.cannot)
	}
}

func hasListed(key string) bool {
	for id := range gasCannotPass {
		if strings.HasPrefix(id, key+"/") {
			return true
		}
	}
	return false
}

// gasArches returns the arches a test runs on (as cfi-sframe.exp does).
func gasArches(name string) []string {
	switch {
	case strings.HasPrefix(name, "cfi-sframe-common-"), strings.HasPrefix(name, "common-empty-"):
		return []string{"aarch64", "s390x", "x86_64"}
	case strings.HasPrefix(name, "cfi-sframe-aarch64-"):
		return []string{"aarch64"}
	case strings.HasPrefix(name, "cfi-sframe-s390x-"):
		return []string{"s390x"}
	case strings.HasPrefix(name, "cfi-sframe-x86_64-"):
		return []string{"x86_64"}
	}
	return nil
}

// dumpTest is the parsed header of a .d file.
type dumpTest struct {
	as       []string
	readelf  string // "--sframe" or "-S"; "" for objdump
	warnings []string
	body     string
}

func parseDumpTest(text string) dumpTest {
	var dt dumpTest
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "#as:"):
			dt.as = strings.Fields(strings.TrimPrefix(l, "#as:"))
		case strings.HasPrefix(l, "#readelf:"):
			dt.readelf = strings.TrimSpace(strings.TrimPrefix(l, "#readelf:"))
		case strings.HasPrefix(l, "#warning:"):
			dt.warnings = append(dt.warnings, strings.TrimSpace(strings.TrimPrefix(l, "#warning:")))
		}
	}
	dt.body = text
	return dt
}

var slebCall = regexp.MustCompile(`sleb128\((-?\d+)\)`)

// prepareSource makes a 2.46 test source acceptable to gas 2.40 without
// changing the .eh_frame it yields.
func prepareSource(src string) string {
	// .sframe output is what we produce; 2.40 would write no .eh_frame
	// (and s390x 2.40 has no SFrame at all).
	src = regexp.MustCompile(`\.cfi_sections\s+\.sframe`).ReplaceAllString(src, ".cfi_sections .eh_frame")
	// 2.40 does not know the directive; its opcode is the same bytes.
	src = strings.ReplaceAll(src, ".cfi_negate_ra_state_with_pc", ".cfi_escape 0x2c")
	// 2.40 has no sleb128() in .cfi_escape: write the bytes.
	src = slebCall.ReplaceAllStringFunc(src, func(m string) string {
		v, _ := strconv.ParseInt(slebCall.FindStringSubmatch(m)[1], 10, 64)
		var parts []string
		for _, b := range sleb(v) {
			parts = append(parts, fmt.Sprintf("%#x", b))
		}
		return strings.Join(parts, ",")
	})
	return src
}

func sleb(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func runGasCase(t *testing.T, dir, golden, name, arch string) map[string]error {
	asm := assemblers[arch]
	tool := oracle.RequireTool(t, asm.tool, asm.pkg)
	dtext, err := os.ReadFile(filepath.Join(dir, name+".d"))
	if err != nil {
		t.Fatal(err)
	}
	dt := parseDumpTest(string(dtext))
	src, err := os.ReadFile(filepath.Join(dir, name+".s"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	key := name + "." + arch
	sfile := filepath.Join(tmp, key+".s")
	ofile := filepath.Join(tmp, key+".o")
	if err := os.WriteFile(sfile, []byte(prepareSource(string(src))), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string(nil), asm.flags...)
	for _, f := range dt.as {
		if !strings.HasPrefix(f, "--gsframe") {
			args = append(args, f)
		}
	}
	args = append(args, "-o", ofile, sfile)
	cmd := exec.Command(tool, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	data, err := os.ReadFile(ofile)
	if err != nil {
		t.Fatal(err)
	}
	display := key + ".o"
	r, err := unwind.ReadSFrame(display, data, unwind.SFrameOptions{Emit: true})
	if err != nil {
		t.Fatalf("simrun: %v", err)
	}
	var dump bytes.Buffer
	if err := r.Dump(&dump); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, w := range r.Warnings {
		warnings = append(warnings, fmt.Sprintf("%s.s: Warning: %s", key, w))
	}
	checks := map[string]error{}

	// (a) the dejagnu expectation.
	switch dt.readelf {
	case "":
		checks["a"] = shared.RegexpDiff(dump.String(), dt.body)
	case "--sframe":
		// readelf prints the same body without objdump's file header.
		body := strings.TrimPrefix(dump.String(), r.Object.FileHeader())
		checks["a"] = shared.RegexpDiff(body, dt.body)
	default:
		if _, ok := notApplicable[name+"/a"]; !ok {
			t.Errorf("no way to check #readelf: %s", dt.readelf)
		}
	}
	// (d) warnings: each #warning regexp matches one of ours.
	var werr []string
	for _, w := range dt.warnings {
		re, err := regexp.Compile(w)
		if err != nil {
			t.Fatalf("#warning %q: %v", w, err)
		}
		found := false
		for _, got := range warnings {
			found = found || re.MatchString(got)
		}
		if !found {
			werr = append(werr, fmt.Sprintf("no warning matches %q (got %q)", w, warnings))
		}
	}
	if len(dt.warnings) == 0 && len(warnings) > 0 {
		werr = append(werr, fmt.Sprintf("unexpected warnings %q", warnings))
	}
	checks["d"] = joinErrs(werr)
	if arch == "x86_64" {
		return checks
	}
	// (b) objdump 2.46, byte for byte.
	want, err := os.ReadFile(filepath.Join(golden, key+".objdump-sframe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if dump.String() != string(want) {
		checks["b"] = fmt.Errorf("dump differs from binutils 2.46 objdump:\n--- got\n%s--- want\n%s", dump.String(), want)
	} else {
		checks["b"] = nil
	}
	// (d) also: gas's exact warning lines.
	if w, err := os.ReadFile(filepath.Join(golden, key+".as-stderr.txt")); err == nil {
		var gasLines []string
		for _, l := range strings.Split(string(w), "\n") {
			if strings.Contains(l, "Warning:") {
				gasLines = append(gasLines, strings.Replace(l, name+".s:", key+".s:", 1))
			}
		}
		if strings.Join(gasLines, "\n") != strings.Join(warnings, "\n") {
			checks["d"] = joinErrs(append(werr, fmt.Sprintf("warnings %q, gas wrote %q", warnings, gasLines)))
		}
	}
	// (c) the section bytes.
	hexText, err := os.ReadFile(filepath.Join(golden, key+".sframe.hex"))
	if err != nil {
		if r.Section != nil && len(r.Section.FDEs) > 0 {
			checks["c"] = fmt.Errorf("no golden hex: %v", err)
		}
		return checks
	}
	gasBytes, err := shared.Xxd(string(hexText))
	if err != nil {
		t.Fatal(err)
	}
	relas, _ := os.ReadFile(filepath.Join(golden, key+".rela-sframe.txt"))
	checks["c"] = compareSectionBytes(r.Bytes, gasBytes, string(relas), r.Section.Order)
	return checks
}

var relaLine = regexp.MustCompile(`^([0-9a-f]{16})\s+[0-9a-f]+\s+R_\S+\s+[0-9a-f]+\s+\S+\s*\+\s*([0-9a-f]+)`)

// compareSectionBytes compares our section with gas's.  gas leaves the
// FDE start fields 0 for its relocations to fill; there we check that
// our value is what the relocation (symbol .text at 0, addend = function
// offset, pc-relative) gives.
func compareSectionBytes(got, want []byte, relas string, order binary.ByteOrder) error {
	if len(got) != len(want) {
		return fmt.Errorf("section is %d bytes, gas wrote %d:\n got  % x\n want % x", len(got), len(want), got, want)
	}
	masked := map[int]bool{}
	for _, l := range strings.Split(relas, "\n") {
		m := relaLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		off, _ := strconv.ParseUint(m[1], 16, 64)
		add, _ := strconv.ParseUint(m[2], 16, 64)
		if off+8 > uint64(len(got)) {
			return fmt.Errorf("relocation at %#x outside the section", off)
		}
		v := int64(order.Uint64(got[off:]))
		if v != int64(add)-int64(off) {
			return fmt.Errorf("FDE start field at %#x is %d; the relocation gives %d (function at %#x)", off, v, int64(add)-int64(off), add)
		}
		for i := 0; i < 8; i++ {
			masked[int(off)+i] = true
		}
	}
	for i := range got {
		if got[i] != want[i] && !masked[i] {
			return fmt.Errorf("byte %#x is %#02x, gas wrote %#02x:\n got  % x\n want % x", i, got[i], want[i], got, want)
		}
	}
	return nil
}

func joinErrs(msgs []string) error {
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// TestGasExtraProbes runs the extra probes under golden/extra (gas
// quirks recorded with a locally built gas 2.46) the same way.
func TestGasExtraProbes(t *testing.T) {
	dir := shared.SFrame(t, "golden", "extra")
	srcs, _ := filepath.Glob(filepath.Join(dir, "*.s"))
	if len(srcs) == 0 {
		t.Fatalf("no probes in %s", dir)
	}
	for _, s := range srcs {
		name := strings.TrimSuffix(filepath.Base(s), ".s")
		arch := strings.SplitN(name, "-", 2)[0]
		t.Run(name, func(t *testing.T) {
			asm := assemblers[arch]
			tool := oracle.RequireTool(t, asm.tool, asm.pkg)
			src, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			key := name + "." + arch
			tmp := t.TempDir()
			sfile, ofile := filepath.Join(tmp, key+".s"), filepath.Join(tmp, key+".o")
			if err := os.WriteFile(sfile, []byte(prepareSource(string(src))), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(tool, "-o", ofile, sfile).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tool, err, out)
			}
			data, err := os.ReadFile(ofile)
			if err != nil {
				t.Fatal(err)
			}
			r, err := unwind.ReadSFrame(name+".o", data, unwind.SFrameOptions{Emit: true})
			if err != nil {
				t.Fatal(err)
			}
			var dump bytes.Buffer
			if err := r.Dump(&dump); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, key+".objdump-sframe.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if dump.String() != string(want) {
				t.Errorf("dump differs:\n--- got\n%s--- want\n%s", dump.String(), want)
			}
			var warnings []string
			for _, w := range r.Warnings {
				warnings = append(warnings, w.String())
			}
			gasErr, _ := os.ReadFile(filepath.Join(dir, key+".as-stderr.txt"))
			var gasWarnings []string
			for _, l := range strings.Split(string(gasErr), "\n") {
				if i := strings.Index(l, "Warning: "); i >= 0 {
					gasWarnings = append(gasWarnings, l[i+len("Warning: "):])
				}
			}
			if strings.Join(warnings, "\n") != strings.Join(gasWarnings, "\n") {
				t.Errorf("warnings %q, gas wrote %q", warnings, gasWarnings)
			}
			hexText, err := os.ReadFile(filepath.Join(dir, key+".sframe.hex"))
			if err != nil {
				t.Fatal(err)
			}
			gasBytes, err := shared.Xxd(string(hexText))
			if err != nil {
				t.Fatal(err)
			}
			// No relocation listings here: mask the start fields.
			got := append([]byte(nil), r.Bytes...)
			for i := range r.Section.FDEs {
				off := sframe.HeaderSize + 16*i
				if off+8 <= len(got) && off+8 <= len(gasBytes) {
					copy(got[off:off+8], gasBytes[off:off+8])
				}
			}
			if !bytes.Equal(got, gasBytes) {
				t.Errorf("section bytes differ:\n got  % x\n want % x", got, gasBytes)
			}
		})
	}
}
