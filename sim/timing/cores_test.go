package timing

import (
	"strings"
	"testing"

	"simrun/sim/cpu"
	"simrun/sim/spe/codes"
)

// TestCoresCoherence drives the data accesses of two and four cores of
// one model through a table of load/store sequences on one line (or two
// lines of one set, for the eviction case) and pins, after each, every
// core's MESI state of the line, the data source and the memory latency
// (the access's cycles less the translation's) of the access. The
// preset is neoverse-n1 without its store buffer, so stores show their
// latency too: L1D 4, L2 11, LLC 35, DRAM 240, peer core 50 cycles; an
// upgrade of a shared copy costs the peer latency. Step ops: "cL" a load
// by core c, "cS" a store, "cA" an atomic, "cX" core c's private caches
// lose the line without telling the directory (an eviction the model
// records lazily).
func TestCoresCoherence(t *testing.T) {
	type step struct {
		op, states, ds string
		lat            uint64
	}
	for _, tc := range []struct {
		name  string
		cores int
		steps []step
	}{
		{"ping-pong", 2, []step{
			{"0L", "EI", "DRAM", 240}, {"0L", "EI", "L1D", 4}, {"1L", "SS", "peer-core", 50},
			{"1S", "IM", "L1D", 50}, {"0L", "SS", "peer-core", 50}, {"0S", "MI", "L1D", 50},
			{"1L", "SS", "peer-core", 50}, {"1S", "IM", "L1D", 50}, {"0S", "MI", "peer-core", 50},
			{"0S", "MI", "L1D", 4}, {"1A", "IM", "peer-core", 50}, {"1L", "IM", "L1D", 4},
		}},
		{"modified copy evicted", 2, []step{
			{"0S", "MI", "DRAM", 240}, {"0X", "MI", "", 0}, {"1L", "IE", "system-cache", 35},
			{"1X", "IE", "", 0}, {"0L", "EI", "system-cache", 35},
		}},
		{"four cores", 4, []step{
			{"0S", "MIII", "DRAM", 240}, {"1L", "SSII", "peer-core", 50}, {"2L", "SSSI", "system-cache", 35},
			{"3L", "SSSS", "system-cache", 35}, {"2S", "IIMI", "L1D", 50}, {"0L", "SISI", "peer-core", 50},
			{"3S", "IIIM", "system-cache", 35}, {"3L", "IIIM", "L1D", 4}, {"1A", "IMII", "peer-core", 50},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := PresetByName("neoverse-n1")
			q := *p
			q.StoreBuf = false
			cores, err := NewCores(&q, tc.cores)
			if err != nil {
				t.Fatal(err)
			}
			const addr = 0x12340
			for _, c := range cores {
				c.tlb.access(addr) // translations warm: only the caches differ
			}
			dir := cores[0].Directory()
			for i, st := range tc.steps {
				c := cores[st.op[0]-'0']
				var in cpu.OpInfo
				in.Access = 8
				switch st.op[1] {
				case 'L':
					in.Class = cpu.ClassLoad
				case 'S':
					in.Class = cpu.ClassStore
				case 'A':
					in.Class = cpu.ClassLoadAtomic
				case 'X':
					c.l1.remove(addr)
					c.l2.remove(addr)
				}
				var ds string
				var lat uint64
				if in.Class != cpu.ClassOther {
					var m memResult
					c.access(addr, &in, &m)
					ds, lat = codes.DataSourceName(uint16(m.ds)), m.lat-uint64(m.xlat)
				}
				var states strings.Builder
				for k, o := range cores {
					s := dir.State(k, addr>>6)
					if s != Invalid && !o.privately(addr) && st.op[1] != 'X' {
						t.Errorf("step %d: core %d is %v without a copy", i, k, s)
					}
					if s == Invalid && o.privately(addr) {
						t.Errorf("step %d: core %d holds an invalid copy", i, k)
					}
					states.WriteString(s.String())
				}
				if states.String() != st.states || ds != st.ds || lat != st.lat {
					t.Errorf("step %d (%s): states %s, source %q, %d cycles; want %s, %q, %d",
						i, st.op, states.String(), ds, lat, st.states, st.ds, st.lat)
				}
			}
		})
	}
}

// TestNewCoresBounds: the cores' count is checked, and one core is the
// plain model.
func TestNewCoresBounds(t *testing.T) {
	p, _ := PresetByName("neoverse-n1")
	for _, n := range []int{0, -1, MaxCores + 1, 100000} {
		if _, err := NewCores(p, n); err == nil {
			t.Errorf("NewCores(%d) accepted", n)
		}
	}
	one, err := NewCores(p, 1)
	if err != nil || len(one) != 1 || one[0].co != nil {
		t.Errorf("NewCores(1) = %v, %v: want one plain model", one, err)
	}
	four, err := NewCores(p, 4)
	if err != nil || len(four) != 4 || four[3].CoreIndex() != 3 || four[0].llc != four[3].llc || four[0].l2 == four[3].l2 {
		t.Errorf("NewCores(4): want four cores with private L2s and one LLC")
	}
}

// TestCoresDirectoryBounded: lines that left every private cache without
// a request meeting them are swept from the directory, so two cores
// streaming through far more memory than their caches hold keep it
// bounded, and a swept modified line was written back (its next load
// comes from the last-level cache, not a peer).
func TestCoresDirectoryBounded(t *testing.T) {
	p, _ := PresetByName("slow-memory") // small caches: 4 KiB L1D, 32 KiB L2
	cores, err := NewCores(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := cores[0].Directory()
	bound := cores[0].co.sweepAt
	store := cpu.OpInfo{Class: cpu.ClassStore, Access: 8}
	load := cpu.OpInfo{Class: cpu.ClassLoad, Access: 8}
	var m memResult
	for i := uint64(0); i < 1<<16; i++ {
		cores[i&1].access(0x100000+i*64, &store, &m)
		if dir.Lines() > bound {
			t.Fatalf("after %d stores the directory tracks %d lines (bound %d)", i+1, dir.Lines(), bound)
		}
	}
	// core 0 stored to 0x100000 first, long evicted from its caches
	cores[1].access(0x100000, &load, &m)
	if m.ds != codes.DSLLC && m.ds != codes.DSDRAM {
		t.Errorf("a line evicted long ago came from %s", codes.DataSourceName(uint16(m.ds)))
	}
}

// FuzzCores runs random loads, stores and atomics of four cores of a
// small-cache preset over a few lines (some in one set, so they evict
// each other) and checks after each access: the directory's MESI
// invariant (an owned line has one holder); no core's private caches
// hold a line the directory says it does not hold (every store removed
// the other copies); a load that came from a peer named a core that held
// the line; and every latency is one of the hierarchy's.
func FuzzCores(f *testing.F) {
	f.Add([]byte{0x00, 0x15, 0x2a, 0x3f, 0x40, 0x81, 0xc2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		p, _ := PresetByName("slow-memory")
		q := *p
		q.StoreBuf = false
		cores, _ := NewCores(&q, 4)
		dir := cores[0].Directory()
		lats := map[uint64]bool{uint64(q.L1D.Latency): true, uint64(q.L2.Latency): true, uint64(q.LLC.Latency): true,
			uint64(q.DRAM): true, uint64(q.Peer): true}
		// lines 0-3 one set apart in the L1D (2 ways) and L2, 4-7 apart
		addrs := [8]uint64{}
		for i := range addrs {
			addrs[i] = 0x10000 + uint64(i%4)*uint64(q.L2.Size) + uint64(i/4)*64
		}
		for _, c := range cores {
			for _, a := range addrs {
				c.tlb.access(a)
			}
		}
		for i, b := range ops {
			core, addr := int(b&3), addrs[b>>2&7]
			var in cpu.OpInfo
			in.Access = 8
			switch b >> 5 & 3 {
			case 0, 1:
				in.Class = cpu.ClassLoad
			case 2:
				in.Class = cpu.ClassStore
			case 3:
				in.Class = cpu.ClassLoadAtomic
			}
			holders := dir.Holders(addr >> 6)
			var m memResult
			cores[core].access(addr, &in, &m)
			if lat := m.lat - uint64(m.xlat); !lats[lat] {
				t.Fatalf("op %d: latency %d", i, lat)
			}
			if m.ds == codes.DSPeerCore && holders&^(1<<core) == 0 {
				t.Fatalf("op %d: a peer-core hit with no other holder", i)
			}
			for _, a := range addrs {
				owners, n := 0, 0
				for k, c := range cores {
					s := dir.State(k, a>>6)
					if s == Invalid && c.privately(a) {
						t.Fatalf("op %d: core %d holds line %#x the directory says it does not", i, k, a)
					}
					if s != Invalid {
						n++
					}
					if s >= Exclusive {
						owners++
					}
				}
				if owners > 1 || owners == 1 && n > 1 {
					t.Fatalf("op %d: line %#x: %d owners among %d holders", i, a, owners, n)
				}
			}
		}
	})
}

// TestOwnsHot: a core of several times a run with a store from its
// summary only while the directory says it owns the stored line: after
// a peer's load (the line Shared) or store (gone) it must not, though
// the line may still be the most recent of its L1D set.
func TestOwnsHot(t *testing.T) {
	p, _ := PresetByName("neoverse-n1")
	cores, err := NewCores(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	const addr = 0x12340
	for _, c := range cores {
		c.tlb.access(addr)
	}
	infos := []cpu.OpInfo{{Class: cpu.ClassStore, Access: 8}}
	blk := &timingBlock{mem: []uint64{0}} // operation 0, described by infos[0]
	vals := []uint64{addr}
	do := func(core int, class cpu.OpClass) {
		var m memResult
		cores[core].access(addr, &cpu.OpInfo{Class: class, Access: 8}, &m)
	}
	for i, step := range []struct {
		core  int
		class cpu.OpClass
		owns  bool
	}{
		{0, cpu.ClassStore, true},  // M
		{1, cpu.ClassLoad, false},  // S: a store must upgrade
		{0, cpu.ClassStore, true},  // the upgrade: M again
		{1, cpu.ClassStore, false}, // gone
		{0, cpu.ClassLoad, false},  // S (peer-core)
	} {
		do(step.core, step.class)
		if got := cores[0].ownsHot(infos, vals, blk); got != step.owns {
			t.Errorf("step %d: core 0 owns the hot line: %v, want %v", i, got, step.owns)
		}
	}
}
