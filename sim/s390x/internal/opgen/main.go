// Command opgen writes sim/s390x's opcode table (zops.go) from the list of
// implemented instructions (insns.txt) and the z/Architecture encodings in
// golang.org/x/arch/s390x/s390x.csv, which x/arch generated from the
// Principles of Operation (SA22-7832-13).
//
// For every listed mnemonic it emits an op constant (opLG for LG), and a
// table entry with the instruction's format, length and opcode key. The
// format is recognised from the csv's field layout; a layout opgen does
// not know is an error, so the decoder's per-format field extraction and
// the csv cannot drift apart. The table of where each first opcode byte
// keeps its extension (none, bits 8-15, 12-15 or 40-47) is derived from
// every instruction in the csv.
//
//	go run ./internal/opgen -o zops.go insns.txt
package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"go/format"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// formats maps a csv layout, with the opcode fields written as "op", to
// the format name used in sim/s390x (fmtXXX). Layouts that differ only in
// whether a 4-bit field is a register or a mask have their own entries
// where the decoder files the field differently.
var formats = map[string]string{
	"op@0|//@16|??@32":                                                 "E",
	"op@0|B2@16|D2@20|??@32":                                           "S",
	"op@0|I@8|??@16":                                                   "I",
	"op@0|R1@8|R2@12|??@16":                                            "RR",
	"op@0|M1@8|R2@12|??@16":                                            "RRm",
	"op@0|//@16|R1@24|R2@28|??@32":                                     "RRE",
	"op@0|//@16|R1@24|//@28|??@32":                                     "RRE",
	"op@0|R3@16|//@20|R1@24|R2@28|??@32":                               "RRFa",
	"op@0|R3@16|M4@20|R1@24|R2@28|??@32":                               "RRFa",
	"op@0|M3@16|//@20|R1@24|R2@28|??@32":                               "RRFc",
	"op@0|M3@16|M4@20|R1@24|R2@28|??@32":                               "RRFe",
	"op@0|R1@16|//@20|R3@24|R2@28|??@32":                               "RRD",
	"op@0|R1@8|X2@12|B2@16|D2@20|??@32":                                "RX",
	"op@0|M1@8|X2@12|B2@16|D2@20|??@32":                                "RXm",
	"op@0|R1@8|X2@12|B2@16|D2@20|//@32|op@40|??@48":                    "RXE",
	"op@0|R3@8|X2@12|B2@16|D2@20|R1@32|//@36|op@40|??@48":              "RXF",
	"op@0|R1@8|X2@12|B2@16|D2@20|M3@32|//@36|op@40|??@48":              "RXEm",
	"op@0|R1@8|X2@12|B2@16|D2@20|op@40|??@48":                          "RXY",
	"op@0|M1@8|X2@12|B2@16|D2@20|op@40|??@48":                          "RXYm",
	"op@0|R1@8|R3@12|B2@16|D2@20|??@32":                                "RS",
	"op@0|R1@8|//@12|B2@16|D2@20|??@32":                                "RS",
	"op@0|R1@8|M3@12|B2@16|D2@20|??@32":                                "RSm",
	"op@0|R1@8|R3@12|B2@16|D2@20|op@40|??@48":                          "RSY",
	"op@0|R1@8|M3@12|B2@16|D2@20|op@40|??@48":                          "RSYm",
	"op@0|R1@8|R3@12|RI2@16|??@32":                                     "RSI",
	"op@0|R1@8|op@12|I2@16|??@32":                                      "RI",
	"op@0|R1@8|op@12|RI2@16|??@32":                                     "RIrel",
	"op@0|M1@8|op@12|RI2@16|??@32":                                     "RIm",
	"op@0|R1@8|op@12|I2@16|??@48":                                      "RIL",
	"op@0|R1@8|op@12|RI2@16|??@48":                                     "RILrel",
	"op@0|M1@8|op@12|RI2@16|??@48":                                     "RILm",
	"op@0|R1@8|R2@12|RI4@16|M3@32|//@36|op@40|??@48":                   "RIEb",
	"op@0|R1@8|M3@12|RI4@16|I2@32|op@40|??@48":                         "RIEc",
	"op@0|R1@8|R3@12|I2@16|//@32|op@40|??@48":                          "RIEd",
	"op@0|R1@8|R3@12|RI2@16|//@32|op@40|??@48":                         "RIEe",
	"op@0|R1@8|R2@12|I3@16|I4@24|I5@32|op@40|??@48":                    "RIEf",
	"op@0|R1@8|M3@12|I2@16|//@32|op@40|??@48":                          "RIEg",
	"op@0|R1@8|R2@12|B4@16|D4@20|M3@32|//@36|op@40|??@48":              "RRS",
	"op@0|R1@8|M3@12|B4@16|D4@20|I2@32|op@40|??@48":                    "RIS",
	"op@0|I2@8|B1@16|D1@20|??@32":                                      "SI",
	"op@0|I2@8|B1@16|D1@20|op@40|??@48":                                "SIY",
	"op@0|B1@16|D1@20|I2@32|??@48":                                     "SIL",
	"op@0|L1@8|B1@16|D1@20|B2@32|D2@36|??@48":                          "SSa",
	"op@0|V1@8|X2@12|B2@16|D2@20|M3@32|RXB@36|op@40|??@48":             "VRX",
	"op@0|V1@8|V2@12|//@16|M3@32|RXB@36|op@40|??@48":                   "VRRa",
	"op@0|V1@8|V2@12|//@16|RXB@36|op@40|??@48":                         "VRRa",
	"op@0|V1@8|V2@12|//@16|M4@28|M3@32|RXB@36|op@40|??@48":             "VRRa",
	"op@0|V1@8|V2@12|//@16|M5@24|M4@28|M3@32|RXB@36|op@40|??@48":       "VRRa",
	"op@0|V1@8|V2@12|//@16|M5@24|//@28|M3@32|RXB@36|op@40|??@48":       "VRRa",
	"op@0|V1@8|V2@12|V3@16|//@20|M5@24|//@28|M4@32|RXB@36|op@40|??@48": "VRRb",
	"op@0|V1@8|V2@12|V3@16|//@20|M4@32|RXB@36|op@40|??@48":             "VRRc",
	"op@0|V1@8|V2@12|V3@16|//@20|RXB@36|op@40|??@48":                   "VRRc",
	"op@0|V1@8|V2@12|V3@16|//@20|M5@28|M4@32|RXB@36|op@40|??@48":       "VRRc",
	"op@0|V1@8|V2@12|V3@16|//@20|M6@24|M5@28|M4@32|RXB@36|op@40|??@48": "VRRc",
	"op@0|V1@8|V2@12|V3@16|M5@20|//@24|V4@32|RXB@36|op@40|??@48":       "VRRd",
	"op@0|V1@8|V2@12|V3@16|//@20|V4@32|RXB@36|op@40|??@48":             "VRRe",
	"op@0|V1@8|V2@12|V3@16|M6@20|//@24|M5@28|V4@32|RXB@36|op@40|??@48": "VRRe",
	"op@0|V1@8|R2@12|R3@16|//@20|RXB@36|op@40|??@48":                   "VRRf",
	"op@0|V1@8|//@12|I2@16|M3@32|RXB@36|op@40|??@48":                   "VRIa",
	"op@0|V1@8|//@12|I2@16|//@32|RXB@36|op@40|??@48":                   "VRIa",
	"op@0|V1@8|//@12|I2@16|I3@24|M4@32|RXB@36|op@40|??@48":             "VRIb",
	"op@0|V1@8|V3@12|I2@16|M4@32|RXB@36|op@40|??@48":                   "VRIc",
	"op@0|V1@8|V2@12|V3@16|//@20|I4@24|//@32|RXB@36|op@40|??@48":       "VRId",
	"op@0|V1@8|V2@12|V3@16|//@20|I4@24|M5@32|RXB@36|op@40|??@48":       "VRId",
	"op@0|V1@8|V2@12|I3@16|M5@28|M4@32|RXB@36|op@40|??@48":             "VRIe",
	"op@0|V1@8|V3@12|B2@16|D2@20|M4@32|RXB@36|op@40|??@48":             "VRSa",
	"op@0|V1@8|R3@12|B2@16|D2@20|M4@32|RXB@36|op@40|??@48":             "VRSb",
	"op@0|V1@8|R3@12|B2@16|D2@20|//@32|RXB@36|op@40|??@48":             "VRSb",
	"op@0|R1@8|V3@12|B2@16|D2@20|M4@32|RXB@36|op@40|??@48":             "VRSc",
	"op@0|V1@8|V2@12|V3@16|M5@20|M6@24|//@28|V4@32|RXB@36|op@40|??@48": "VRRd",
}

// Where a first opcode byte keeps the rest of the opcode.
const (
	extNone  = iota // 8-bit opcode
	ext8at8         // bits 8-15  (RRE, RRF, S, SIL, E)
	ext4at12        // bits 12-15 (RI, RIL)
	ext8at40        // bits 40-47 (RXY, RSY, RIE, SIY, VRX, VRR, ...)
)

type entry struct {
	mnem     string // e.g. "LG"
	name     string // the csv's instruction name
	syntax   string // operands as the csv writes them
	layout   string // signature of the field layout
	format   string
	length   int
	key      uint16 // first byte << 8 | extension
	reserved uint64 // the // fields, left-aligned
}

type field struct {
	name     string
	pos, len int
}

func parseLayout(enc string) ([]field, error) {
	var fs []field
	for _, part := range strings.Split(enc, "|") {
		name, pos, ok := strings.Cut(part, "@")
		if !ok {
			return nil, fmt.Errorf("bad field %q", part)
		}
		p, err := strconv.Atoi(pos)
		if err != nil {
			return nil, fmt.Errorf("bad position in %q", part)
		}
		fs = append(fs, field{name: name, pos: p})
	}
	for i := range fs[:len(fs)-1] {
		fs[i].len = fs[i+1].pos - fs[i].pos
	}
	if last := fs[len(fs)-1]; last.name != "??" {
		return nil, fmt.Errorf("layout does not end with ??@N")
	}
	return fs[:len(fs)-1], nil
}

// opcode returns the first byte and where and what its extension is.
func opcode(fs []field) (first uint8, kind int, ext uint8, err error) {
	var nums []field
	var vals []uint64
	for _, f := range fs {
		if v, err := strconv.ParseUint(f.name, 10, 16); err == nil {
			nums = append(nums, f)
			vals = append(vals, v)
		}
	}
	switch {
	case len(nums) == 1 && nums[0].pos == 0 && nums[0].len == 8:
		return uint8(vals[0]), extNone, 0, nil
	case len(nums) == 1 && nums[0].pos == 0 && nums[0].len == 16:
		return uint8(vals[0] >> 8), ext8at8, uint8(vals[0]), nil
	case len(nums) == 2 && nums[0].pos == 0 && nums[0].len == 8 && nums[1].pos == 12 && nums[1].len == 4:
		return uint8(vals[0]), ext4at12, uint8(vals[1]), nil
	case len(nums) == 2 && nums[0].pos == 0 && nums[0].len == 8 && nums[1].pos == 40 && nums[1].len == 8:
		return uint8(vals[0]), ext8at40, uint8(vals[1]), nil
	}
	return 0, 0, 0, fmt.Errorf("unrecognised opcode fields")
}

func signature(fs []field) string {
	var parts []string
	for _, f := range fs {
		n := f.name
		if _, err := strconv.Atoi(n); err == nil {
			n = "op"
		}
		parts = append(parts, fmt.Sprintf("%s@%d", n, f.pos))
	}
	return strings.Join(parts, "|") + fmt.Sprintf("|??@%d", fs[len(fs)-1].pos+fs[len(fs)-1].len)
}

func csvPath() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/arch").Output()
	if err != nil {
		return "", fmt.Errorf("locating golang.org/x/arch: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "s390x", "s390x.csv"), nil
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("opgen: ")
	out := flag.String("o", "zops.go", "output file")
	csvFile := flag.String("csv", "", "s390x.csv (default: the one in the golang.org/x/arch module)")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: opgen [-o zops.go] [-csv s390x.csv] insns.txt")
	}
	if *csvFile == "" {
		p, err := csvPath()
		if err != nil {
			log.Fatal(err)
		}
		*csvFile = p
	}
	list, err := readList(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	entries, kinds, err := readCSV(*csvFile)
	if err != nil {
		log.Fatal(err)
	}
	var picked []entry
	bad := false
	for _, m := range list {
		e, ok := entries[m]
		switch {
		case !ok:
			log.Printf("%s: not in %s", m, *csvFile)
			bad = true
		case e.format == "":
			log.Printf("%s: layout %s has no format in opgen's table", m, e.layout)
			bad = true
		}
		picked = append(picked, e)
	}
	if bad {
		os.Exit(1)
	}
	src, err := generate(picked, kinds)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

func readList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var list []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		for _, m := range strings.Fields(line) {
			if seen[m] {
				return nil, fmt.Errorf("%s: %s listed twice", path, m)
			}
			seen[m] = true
			list = append(list, m)
		}
	}
	return list, sc.Err()
}

// readCSV returns the csv's instructions by mnemonic and the extension
// kind of every first opcode byte.
func readCSV(path string) (map[string]entry, [256]int, error) {
	var kinds [256]int
	for i := range kinds {
		kinds[i] = -1
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, kinds, err
	}
	var body bytes.Buffer
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 || l[0] == '#' {
			continue
		}
		body.Write(l)
		body.WriteByte('\n')
	}
	r := csv.NewReader(&body)
	out := map[string]entry{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, kinds, err
		}
		name, syntax, enc := rec[0], rec[1], rec[2]
		mnem, _, _ := strings.Cut(syntax, " ")
		fs, err := parseLayout(enc)
		if err != nil {
			return nil, kinds, fmt.Errorf("%s: %v", mnem, err)
		}
		first, kind, ext, err := opcode(fs)
		if err != nil {
			return nil, kinds, fmt.Errorf("%s: %v", mnem, err)
		}
		if kinds[first] >= 0 && kinds[first] != kind {
			return nil, kinds, fmt.Errorf("%s: opcode 0x%02x has two extension kinds", mnem, first)
		}
		kinds[first] = kind
		last := fs[len(fs)-1]
		length := (last.pos + last.len) / 8
		want := [4]int{2, 4, 4, 6}[first>>6]
		if length != want {
			return nil, kinds, fmt.Errorf("%s: %d bytes, but opcode 0x%02x means %d", mnem, length, first, want)
		}
		var reserved uint64
		for _, f := range fs {
			if f.name == "//" {
				reserved |= (1<<f.len - 1) << (64 - f.pos - f.len)
			}
		}
		sig := signature(fs)
		out[mnem] = entry{mnem: mnem, name: name, syntax: syntax, layout: sig, format: formats[sig],
			length: length, key: uint16(first)<<8 | uint16(ext), reserved: reserved}
	}
	return out, kinds, nil
}

func generate(list []entry, kinds [256]int) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/opgen from insns.txt and golang.org/x/arch/s390x/s390x.csv; DO NOT EDIT.\n\n")
	b.WriteString("package s390x\n\n")
	b.WriteString("// Instructions, in insns.txt order.\nconst (\n")
	for i, e := range list {
		if i == 0 {
			fmt.Fprintf(&b, "\top%s op = opFirst + iota // %s\n", e.mnem, e.syntax)
			continue
		}
		fmt.Fprintf(&b, "\top%s // %s\n", e.mnem, e.syntax)
	}
	b.WriteString("\topEnd\n)\n\n")
	b.WriteString("// opInfos describes every op from opFirst on.\nvar opInfos = [...]opInfo{\n")
	for _, e := range list {
		fmt.Fprintf(&b, "\top%s - opFirst: {%q, fmt%s, %d, 0x%04x, 0x%x}, // %s\n", e.mnem, strings.ToLower(e.mnem), e.format, e.length, e.key, e.reserved, e.name)
	}
	b.WriteString("}\n\n")
	b.WriteString("// extKinds says where each first opcode byte keeps the rest of the opcode\n")
	b.WriteString("// (ext* constants); bytes no instruction starts with are extNone.\n")
	b.WriteString("var extKinds = [256]uint8{\n")
	names := [...]string{"extNone", "ext8at8", "ext4at12", "ext8at40"}
	for i, k := range kinds {
		if k > 0 {
			fmt.Fprintf(&b, "\t0x%02x: %s,\n", i, names[k])
		}
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
