package main

import (
	"errors"
	"fmt"

	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// errAtEntry stops a run at the program's entry point.
var errAtEntry = errors.New("at the entry point")

// loadedObjects runs prog until it reaches its entry point (AT_ENTRY),
// where the interpreter has mapped every shared library the program
// needs, and returns the host paths of the program, its interpreter and
// each library, in the order they were mapped. A static program is its
// only object. Libraries the program opens later (dlopen) are not there
// yet.
func loadedObjects(prog string, cfg linux.Config) ([]string, error) {
	m, err := linux.Load(prog, cfg)
	if err != nil {
		return nil, err
	}
	p := linux.Of(m)
	paths := []string{prog}
	if p.Interp == nil {
		return paths, nil
	}
	var entry uint64
	for _, a := range p.Auxv() {
		if a[0] == linux.AT_ENTRY {
			entry = a[1]
		}
	}
	m.Observer = func(m *cpu.Machine) error {
		if m.Core.PC() == entry {
			return errAtEntry
		}
		return nil
	}
	exit, err := m.Run()
	if exit != nil {
		return nil, fmt.Errorf("%s: ended with status %d before reaching its entry point %#x (the dynamic loader could not start it)", prog, exit.Status, entry)
	}
	if !errors.Is(err, errAtEntry) {
		return nil, fmt.Errorf("%s: %w", prog, err)
	}
	seen := map[string]bool{}
	for _, c := range p.CodeMaps() {
		if !seen[c.Path] {
			seen[c.Path] = true
			paths = append(paths, c.Path)
		}
	}
	return paths, nil
}
