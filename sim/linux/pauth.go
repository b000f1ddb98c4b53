package linux

import (
	"errors"

	"simrun/sim/cpu"
)

// pauthCore is implemented by cores with pointer authentication (arm64).
type pauthCore interface {
	EnablePAuth(seed uint64)
}

// EnablePAuth turns pointer authentication on for m's core, with keys
// derived from the run's seed, and for every process the run starts: a
// forked child keeps its parent's keys (it returns through frames the
// parent signed), and a program execve starts gets keys of its own (here
// the same ones, from the same seed). A program of an architecture
// without it, started by execve, runs without.
func EnablePAuth(m *cpu.Machine) error {
	c, ok := m.Core.(pauthCore)
	if !ok {
		return errors.New("--pauth: the " + m.Arch.Name + " core has no pointer authentication")
	}
	p := Of(m)
	if p == nil {
		return errors.New("--pauth: not a Linux process")
	}
	c.EnablePAuth(p.Cfg.Seed)
	p.System().AddHook(func(q *Process, e ThreadEvent) {
		if e.Kind == ProcessForked || e.Kind == ProcessExeced {
			if c, ok := q.Core.(pauthCore); ok {
				c.EnablePAuth(q.Cfg.Seed)
			}
		}
	})
	return nil
}
