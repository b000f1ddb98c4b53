package gdbstub

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
)

// The threaded programs the tests debug: four workers and the main
// thread, which joins them.
var threadProgs = map[string]string{
	"arm64": "../../programs/threads/bin/aarch64-thr-O2/worksplit",
	"s390x": "../../programs/threads/bin/s390x-thr-O2/worksplit",
}

var stopThreadRE = regexp.MustCompile(`^T05(?:swbreak:;)?thread:([0-9a-f]+);$`)

// stopTid is the thread a T05 stop reply names.
func stopTid(t *testing.T, reply string) uint64 {
	t.Helper()
	m := stopThreadRE.FindStringSubmatch(reply)
	require.NotNil(t, m, "stop reply %q", reply)
	tid, err := strconv.ParseUint(m[1], 16, 64)
	require.NoError(t, err)
	return tid
}

// TestThreads: thread lists (qfThreadInfo, qXfer:threads:read), qC, T,
// Hg with g and G on a thread that is not running (its saved context),
// and a step of such a thread, which retires exactly its next
// instruction.
func TestThreads(t *testing.T) {
	for arch, path := range threadProgs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path)
			cl.noAck()
			require.Contains(t, cl.req("qSupported:xmlRegisters=i386"), "qXfer:threads:read+")
			require.Equal(t, "m3e8", cl.req("qfThreadInfo"))
			require.Equal(t, "l", cl.req("qsThreadInfo"))
			work := symbol(t, path, "work")
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", work)))
			// Stop at work in each of the four workers; the event thread
			// is the running one and qC names it.
			seen := map[uint64]bool{}
			for len(seen) < 4 {
				tid := stopTid(t, cl.req("vCont;c"))
				require.Equal(t, cl.p.CurrentTid(), tid)
				require.Equal(t, fmt.Sprintf("QC%x", tid), cl.req("qC"))
				require.Equal(t, work, cl.reg(pcReg(arch)))
				seen[tid] = true
				require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", work)))
				require.Equal(t, fmt.Sprintf("T05thread:%x;", tid), cl.req(fmt.Sprintf("vCont;s:%x;c", tid)))
				require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", work)))
			}
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", work)))

			ids := cl.p.ThreadIDs()
			require.Len(t, ids, 5)
			var hexIDs []string
			for _, id := range ids {
				hexIDs = append(hexIDs, strconv.FormatUint(id, 16))
			}
			require.Equal(t, "m"+strings.Join(hexIDs, ","), cl.req("qfThreadInfo"))
			doc := cl.req("qXfer:threads:read::0,1000")
			require.True(t, strings.HasPrefix(doc, "l<?xml"), doc)
			for _, h := range hexIDs {
				require.Contains(t, doc, `<thread id="`+h+`" core="0" name="worksplit"/>`)
			}
			for _, h := range hexIDs {
				require.Equal(t, "OK", cl.req("T"+h))
			}
			require.Equal(t, "E01", cl.req("T999"))
			require.Equal(t, "E01", cl.req("Hg999"))

			// Every thread's registers through Hg, the running one's from
			// the core, the others' from their saved contexts.
			cur := cl.p.CurrentTid()
			lay, err := layoutFor(cl.p.Arch, false)
			require.NoError(t, err)
			for _, id := range ids {
				require.Equal(t, "OK", cl.req(fmt.Sprintf("Hg%x", id)))
				var st cpu.State
				_, ok := cl.p.ThreadState(id, &st)
				require.True(t, ok)
				var want []byte
				for i := range lay.regs {
					want = lay.appendReg(want, &lay.regs[i], &st)
				}
				require.Equal(t, hex.EncodeToString(want), cl.req("g"), "thread %d", id)
				require.Equal(t, st.PC, cl.reg(pcReg(arch)))
			}
			// G on a thread that is not running changes its context only.
			other := ids[slices.IndexFunc(ids, func(id uint64) bool { return id != cur })]
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Hg%x", other)))
			g := cl.req("g")
			var before cpu.State
			cl.p.ThreadState(cur, &before)
			b, err := hex.DecodeString(g)
			require.NoError(t, err)
			b[16] ^= 0xff // a byte of x2 (arm64) or r0 (s390x)
			require.Equal(t, "OK", cl.req("G"+hex.EncodeToString(b)))
			require.Equal(t, hex.EncodeToString(b), cl.req("g"))
			b[16] ^= 0xff
			require.Equal(t, "OK", cl.req("G"+hex.EncodeToString(b)))
			var after cpu.State
			cl.p.ThreadState(cur, &after)
			require.Equal(t, before, after, "the running thread is untouched")

			// A step of a thread that is not running: it retires one
			// instruction, the others running meanwhile.
			n := cl.p.ThreadInsns(other)
			var st cpu.State
			cl.p.ThreadState(other, &st)
			require.Equal(t, fmt.Sprintf("T05thread:%x;", other), cl.req(fmt.Sprintf("vCont;s:%x;c", other)))
			require.Equal(t, n+1, cl.p.ThreadInsns(other))
			require.Equal(t, fmt.Sprintf("QC%x", other), cl.req("qC"))
			var st2 cpu.State
			cl.p.ThreadState(other, &st2)
			require.NotEqual(t, st.PC, st2.PC)
			require.Equal(t, st2.PC, cl.reg(pcReg(arch)), "registers now read the stepped thread's")
			// Hc selects the thread a plain s steps.
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Hc%x", other)))
			require.Equal(t, fmt.Sprintf("T05thread:%x;", other), cl.req("s"))
			require.Equal(t, n+2, cl.p.ThreadInsns(other))

			want, out := plain(t, path)
			require.Equal(t, exitReply(want), cl.req("c"))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, want.Status, r.exit.Status)
			require.Equal(t, out, cl.out.String())
		})
	}
}

func TestVContParse(t *testing.T) {
	s := &Stub{event: 0x3e9}
	cases := []struct {
		in   string
		step uint64
		sig  int
		lock uint64
		ok   bool
	}{
		{"c", 0, 0, 0, true},
		{"s", 0x3e9, 0, 0, true},
		{"s:3ea;c", 0x3ea, 0, 0, true},
		{"s:p1.3ea;c:p1.-1", 0x3ea, 0, 0, true},
		{"C0b:3e9;c", 0, cpu.SIGSEGV, 0, true},
		{"c:3ea;C0b", 0, cpu.SIGSEGV, 0, true},
		{"C0b:3ea;c", 0, 0, 0, true}, // the signal is another thread's
		{"S0b", 0x3e9, cpu.SIGSEGV, 0, true},
		// Scheduler locking: every action names one thread.
		{"c:3ea", 0, 0, 0x3ea, true},
		{"s:3ea", 0x3ea, 0, 0x3ea, true},
		{"s:p3e8.3ea", 0x3ea, 0, 0x3ea, true},
		{"C0b:3e9", 0, cpu.SIGSEGV, 0x3e9, true},
		{"c:3ea;c:3eb", 0, 0, 0, true},
		{"c:-1", 0, 0, 0, true},
		{"x", 0, 0, 0, false},
		{"c1", 0, 0, 0, false},
		{"s:zz", 0, 0, 0, false},
		{"C1ff", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	}
	for _, c := range cases {
		step, sig, lock, ok := s.vCont(c.in)
		require.Equal(t, c.ok, ok, c.in)
		if ok {
			require.Equal(t, c.step, step, c.in)
			require.Equal(t, c.sig, sig, c.in)
			require.Equal(t, c.lock, lock, c.in)
		}
	}
}

// TestSchedulerLocking: a vCont whose actions all name one thread (gdb's
// set scheduler-locking on) runs that thread only: the other workers
// retire nothing while it runs its loop of half a million instructions
// (fifty quanta) to its store into sums; a step so locked is one
// instruction of that thread, switched to at once.
func TestSchedulerLocking(t *testing.T) {
	for arch, path := range threadProgs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path)
			cl.noAck()
			work, sums := symbol(t, path, "work"), symbol(t, path, "sums")
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", work)))
			var tids []uint64
			for len(tids) < 2 {
				tids = append(tids, stopTid(t, cl.req("vCont;c")))
				require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", work)))
				require.Equal(t, fmt.Sprintf("T05thread:%x;", tids[len(tids)-1]), cl.req(fmt.Sprintf("vCont;s:%x;c", tids[len(tids)-1])))
				require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", work)))
			}
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", work)))
			first, second := tids[0], tids[1]
			insns := func() map[uint64]uint64 {
				out := map[uint64]uint64{}
				for _, id := range cl.p.ThreadIDs() {
					out[id] = cl.p.ThreadInsns(id)
				}
				return out
			}
			// A locked step of the first worker (not the running one).
			require.NotEqual(t, first, cl.p.CurrentTid())
			before := insns()
			require.Equal(t, fmt.Sprintf("T05thread:%x;", first), cl.req(fmt.Sprintf("vCont;s:%x", first)))
			after := insns()
			for id, n := range before {
				if id == first {
					require.Equal(t, n+1, after[id])
				} else {
					require.Equal(t, n, after[id], "thread %x ran", id)
				}
			}
			// A locked continue of the second to its store into sums
			// (worker id 1: the second created).
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z2,%x,8", sums+8)))
			before = insns()
			reply := cl.req(fmt.Sprintf("vCont;c:%x", second))
			require.Equal(t, fmt.Sprintf("T05watch:%x;thread:%x;", sums+8, second), reply)
			after = insns()
			require.Greater(t, after[second]-before[second], uint64(200000))
			for id, n := range before {
				if id != second {
					require.Equal(t, n, after[id], "thread %x ran", id)
				}
			}
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z2,%x,8", sums+8)))
			want, out := plain(t, path)
			require.Equal(t, exitReply(want), cl.req("vCont;c"))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, out, cl.out.String())
		})
	}
}
