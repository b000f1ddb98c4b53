// Package shareddata finds test data that the repository does not carry
// and may not copy: binutils' SFrame conformance suite and the qemu
// oracle's programs with their recorded outputs. Developers and CI keep
// them in a folder named shared beside the repository (../shared from the
// module root).
//
// A test that needs such data asks Require for it. When the data is
// missing the test skips with a message naming the path and what it is,
// so a clone without the folder still passes; when the environment
// variable CI is set (non-empty) the test fails instead, so a CI run can
// never pass by skipping the conformance suites.
package shareddata

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Root returns the absolute path of the shared folder beside the simrun
// module root (found above the working directory), whether or not it
// exists.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isSimrunRoot(d) {
			return filepath.Join(filepath.Dir(d), "shared"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no simrun go.mod above the working directory " + wd)
		}
	}
}

// Require returns the absolute path of rel (slash-separated) inside the
// shared folder. If that path does not exist, the test is skipped with a
// message naming the path and what (a description of the data), or fails
// when CI is set.
func Require(t testing.TB, rel, what string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		Missing(t, p, what)
	}
	return p
}

// Missing reports that the test data at path, described by what, is not
// there: a skip, or a failure when CI is set (either ends the test).
func Missing(t testing.TB, path, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing: %s (CI is set, so missing test data is a failure)", path, what)
		return
	}
	t.Skipf("%s is missing: %s; skipped (with CI set this fails)", path, what)
}

func isSimrunRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" && f[1] == "simrun" {
			return true
		}
	}
	return false
}
