package timing

import (
	"fmt"
	"strings"
	"testing"
)

// TestDirectoryStates walks one line through load/store/evict sequences
// on two and four cores. Each step is "cOP" (core c; L load after a
// private miss, S store, E eviction) and pins every core's state after it
// (one letter per core) and what the request found: the supplying peer
// ("p1", "p1*" when its copy was modified), the invalidated cores ("x02")
// and "up" for an upgrade of a shared copy; "-" when none of these. The
// expected states are MESI's transitions, derived by hand.
func TestDirectoryStates(t *testing.T) {
	type step struct{ op, states, snoop string }
	for _, tc := range []struct {
		name  string
		cores int
		steps []step
	}{
		{"private line", 2, []step{
			{"0L", "EI", "-"}, {"0S", "MI", "-"}, {"0L", "MI", "-"}, {"0E", "II", "-"}, {"0L", "EI", "-"},
		}},
		{"read sharing", 2, []step{
			{"0L", "EI", "-"}, {"1L", "SS", "p0"}, {"0E", "IS", "-"}, {"0L", "SS", "-"},
		}},
		{"false sharing ping-pong", 2, []step{
			{"0S", "MI", "-"}, {"1S", "IM", "p0* x0"}, {"0S", "MI", "p1* x1"},
			{"1L", "SS", "p0*"}, {"1S", "IM", "up x0"}, {"0L", "SS", "p1*"},
		}},
		{"exclusive then store", 2, []step{
			{"1L", "IE", "-"}, {"1S", "IM", "-"}, {"1E", "II", "-"}, {"0S", "MI", "-"},
		}},
		{"clean exclusive forwarded", 2, []step{
			{"0L", "EI", "-"}, {"1S", "IM", "p0 x0"},
		}},
		{"four readers then a writer", 4, []step{
			{"0L", "EIII", "-"}, {"1L", "SSII", "p0"}, {"2L", "SSSI", "-"}, {"3L", "SSSS", "-"},
			{"2S", "IIMI", "up x013"}, {"0L", "SISI", "p2*"}, {"3S", "IIIM", "x02"},
		}},
		{"evictions", 4, []step{
			{"0L", "EIII", "-"}, {"1L", "SSII", "p0"}, {"0E", "ISII", "-"}, {"1E", "IIII", "-"},
			{"3S", "IIIM", "-"}, {"3E", "IIII", "-"}, {"2L", "IIEI", "-"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDirectory(tc.cores)
			if err != nil {
				t.Fatal(err)
			}
			const line = 0x4000 >> 6
			for i, st := range tc.steps {
				core := int(st.op[0] - '0')
				var s Snoop
				switch st.op[1] {
				case 'L':
					s = d.Load(core, line)
				case 'S':
					s = d.Store(core, line)
				case 'E':
					d.Evict(core, line)
					s = Snoop{Peer: -1}
				}
				var states strings.Builder
				for c := 0; c < tc.cores; c++ {
					states.WriteString(d.State(c, line).String())
				}
				if got := states.String(); got != st.states || snoopString(s) != st.snoop {
					t.Errorf("step %d (%s): states %s, snoop %q; want %s, %q", i, st.op, got, snoopString(s), st.states, st.snoop)
				}
			}
		})
	}
}

// snoopString is the test's notation of a Snoop.
func snoopString(s Snoop) string {
	var f []string
	if s.Peer >= 0 {
		p := fmt.Sprintf("p%d", s.Peer)
		if s.PeerModified {
			p += "*"
		}
		f = append(f, p)
	}
	if s.Upgrade {
		f = append(f, "up")
	}
	if s.Invalidated != 0 {
		x := "x"
		for c := 0; c < MaxCores; c++ {
			if s.Invalidated&(1<<c) != 0 {
				x += fmt.Sprint(c)
			}
		}
		f = append(f, x)
	}
	if len(f) == 0 {
		return "-"
	}
	return strings.Join(f, " ")
}

func TestDirectoryEvictWriteBack(t *testing.T) {
	d, _ := NewDirectory(2)
	d.Load(0, 1)
	if d.Evict(0, 1) {
		t.Error("a clean exclusive line was written back")
	}
	d.Store(1, 1)
	if !d.Evict(1, 1) {
		t.Error("a modified line was not written back")
	}
	if d.Evict(1, 1) {
		t.Error("evicting a line not held wrote back")
	}
	if d.Lines() != 0 {
		t.Errorf("%d lines tracked after every copy left", d.Lines())
	}
}

func TestNewDirectoryBounds(t *testing.T) {
	for _, n := range []int{0, -1, MaxCores + 1, 100000} {
		if _, err := NewDirectory(n); err == nil {
			t.Errorf("NewDirectory(%d) accepted", n)
		}
	}
	for _, n := range []int{1, 2, MaxCores} {
		if _, err := NewDirectory(n); err != nil {
			t.Errorf("NewDirectory(%d): %v", n, err)
		}
	}
}

// FuzzDirectory runs random request sequences on four cores and checks
// the MESI invariants after each: at most one core owns a line, an owned
// line has no other holder, and the states agree with the holders.
func FuzzDirectory(f *testing.F) {
	f.Add([]byte{0x00, 0x11, 0x21, 0x32})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const cores = 4
		d, _ := NewDirectory(cores)
		for i, b := range ops {
			core, line := int(b&3), uint64(b>>4&3)
			switch b >> 2 & 3 {
			case 0, 1:
				d.Load(core, line)
			case 2:
				d.Store(core, line)
			case 3:
				d.Evict(core, line)
			}
			for l := uint64(0); l < 4; l++ {
				owners, holders := 0, 0
				for c := 0; c < cores; c++ {
					switch d.State(c, l) {
					case Exclusive, Modified:
						owners++
						holders++
					case Shared:
						holders++
					}
				}
				if owners > 1 || owners == 1 && holders > 1 {
					t.Fatalf("after op %d: line %d has %d owners among %d holders", i, l, owners, holders)
				}
			}
		}
	})
}
