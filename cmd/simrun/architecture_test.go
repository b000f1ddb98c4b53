package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureImports holds ARCHITECTURE.md's package table to the
// module: every package go list finds has a row, and each row's imports
// column is the package's non-test imports inside the module, named
// relative to sim/ or internal/ ("—" for none).
func TestArchitectureImports(t *testing.T) {
	doc, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## Packages and their imports")
	if start < 0 {
		t.Fatal("ARCHITECTURE.md has no section \"Packages and their imports\"")
	}
	text = text[start:]
	if end := strings.Index(text[1:], "\n## "); end >= 0 {
		text = text[:end+1]
	}
	table := map[string][]string{} // package → imports, as the table says
	name := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Errorf("a row without three cells: %s", line)
			continue
		}
		var imports []string
		if c := strings.TrimSpace(cells[2]); c != "—" {
			imports = strings.Split(c, ", ")
		}
		slices.Sort(imports)
		for _, m := range name.FindAllStringSubmatch(cells[0], -1) {
			table[m[1]] = imports
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "simrun/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	short := func(path string) string {
		path = strings.TrimPrefix(path, "simrun/")
		for _, p := range []string{"sim/", "internal/"} {
			if s, ok := strings.CutPrefix(path, p); ok {
				return s
			}
		}
		return path
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], "simrun/")
		seen[pkg] = true
		var imports []string
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "simrun/") {
				imports = append(imports, short(imp))
			}
		}
		slices.Sort(imports)
		want, ok := table[pkg]
		if !ok {
			t.Errorf("ARCHITECTURE.md has no row for %s (imports: %s)", pkg, strings.Join(imports, ", "))
			continue
		}
		if !slices.Equal(want, imports) {
			t.Errorf("ARCHITECTURE.md: %s imports %s; go list: %s", pkg, strings.Join(want, ", "), strings.Join(imports, ", "))
		}
	}
	for pkg := range table {
		if !seen[pkg] {
			t.Errorf("ARCHITECTURE.md has a row for %s, which go list does not find", pkg)
		}
	}
}
