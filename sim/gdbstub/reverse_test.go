package gdbstub

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/replay"
)

// TestReverse: bs returns to the registers seen going forward; bc stops
// at the breakpoint hits met backwards and then at the start of the
// history (replaylog:begin); nothing can be written in the past; s and
// c replay forward, stopping at the same breakpoints, and the run goes
// live at the newest point and ends as without gdb, its output written
// once.
func TestReverse(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path, "5")
			cl.noAck()
			require.Contains(t, cl.req("qSupported:swbreak+"), ";ReverseStep+;ReverseContinue+")
			tid := fmt.Sprintf("%x", cl.p.PID())
			stop := "T05thread:" + tid + ";"
			hit := "T05swbreak:;thread:" + tid + ";"
			fib := symbol(t, path, "fib_rec")
			clock := func() uint64 { return replay.Clock(cl.p.Machine) }

			// Going back from the very start: nothing to go back to.
			require.Equal(t, "T05replaylog:begin;thread:"+tid+";", cl.req("bs"))
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", fib)))
			// gdb steps over a breakpoint at the pc with it removed (a
			// continue from it stops at once).
			over := func() {
				require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", fib)))
				require.Equal(t, stop, cl.req("s"))
				require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", fib)))
			}
			require.Equal(t, hit, cl.req("c"))
			first := clock()
			over()
			require.Equal(t, hit, cl.req("c"))
			second := clock()
			require.Greater(t, second, first)
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", fib)))
			var regs []string
			for i := range 4 {
				if i > 0 {
					require.Equal(t, stop, cl.req("s"))
				}
				regs = append(regs, cl.req("g"))
			}
			require.Equal(t, second+3, clock())
			out := cl.out.String()

			for i := 2; i >= 0; i-- {
				require.Equal(t, stop, cl.req("bs"))
				require.Equal(t, regs[i], cl.req("g"), "back to the registers after %d steps", i)
			}
			require.Equal(t, second, clock())
			// The past cannot be changed.
			require.Equal(t, "E01", cl.req(fmt.Sprintf("P%x=%s", pcReg(arch), cl.req(fmt.Sprintf("p%x", pcReg(arch))))))
			require.Equal(t, "E01", cl.req("M"+fmt.Sprintf("%x", symbol(t, path, "olen"))+",1:01"))
			// A step forward in the past replays one instruction.
			require.Equal(t, stop, cl.req("s"))
			require.Equal(t, regs[1], cl.req("g"))
			require.Equal(t, stop, cl.req("bs"))

			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", fib)))
			require.Equal(t, hit, cl.req("bc"))
			require.Equal(t, first, clock())
			require.Equal(t, fib, cl.reg(pcReg(arch)))
			require.Equal(t, "T05replaylog:begin;thread:"+tid+";", cl.req("bc"))
			require.Equal(t, uint64(0), clock())
			// Forward again: the same breakpoint hits, replayed.
			require.Equal(t, hit, cl.req("c"))
			require.Equal(t, first, clock())
			over()
			require.Equal(t, hit, cl.req("c"))
			require.Equal(t, second, clock())
			require.Equal(t, regs[0], cl.req("g"))
			require.Equal(t, out, cl.out.String(), "the replay wrote nothing")
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", fib)))

			want, wantOut := plain(t, path, "5")
			require.Equal(t, exitReply(want), cl.req("c"))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, want.Status, r.exit.Status)
			require.Equal(t, wantOut, cl.out.String(), "the output, once")
		})
	}
}

// TestReverseWatch: bc stops at the last write to a watched global
// before the current point: on s390x before the store, on arm64 after
// it (gdb then steps back over it, layout.watchBefore).
func TestReverseWatch(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path, "5")
			cl.noAck()
			tid := fmt.Sprintf("%x", cl.p.PID())
			olen := symbol(t, path, "olen")
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z2,%x,8", olen)))
			watch := fmt.Sprintf("T05watch:%x;thread:%s;", olen, tid)
			require.Equal(t, watch, cl.req("c"))
			at := replay.Clock(cl.p.Machine) // before the store on arm64, after on s390x
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z2,%x,8", olen)))
			for range 5 {
				require.Equal(t, "T05thread:"+tid+";", cl.req("s"))
			}
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z2,%x,8", olen)))
			require.Equal(t, watch, cl.req("bc"))
			back := replay.Clock(cl.p.Machine)
			v, ok := cl.p.Mem.Load(olen, 8, cl.p.Arch.ByteOrder)
			require.True(t, ok)
			if arch == "arm64" {
				require.Equal(t, at+1, back, "after the store")
				require.NotZero(t, v)
				// gdb steps back over the store with the watchpoint removed.
				require.Equal(t, "OK", cl.req(fmt.Sprintf("z2,%x,8", olen)))
				require.Equal(t, "T05thread:"+tid+";", cl.req("bs"))
				require.Equal(t, "OK", cl.req(fmt.Sprintf("Z2,%x,8", olen)))
				v, ok = cl.p.Mem.Load(olen, 8, cl.p.Arch.ByteOrder)
				require.True(t, ok)
				require.Zero(t, v)
			} else {
				require.Equal(t, at-1, back, "before the store")
				require.Zero(t, v)
			}
			require.Equal(t, "T05replaylog:begin;thread:"+tid+";", cl.req("bc"))
		})
	}
}

// allRegs is every live thread's registers (g after Hg), by tid, and
// the thread list.
func (cl *client) allRegs() (map[string]string, string) {
	cl.t.Helper()
	list := cl.req("qfThreadInfo")
	regs := map[string]string{}
	for _, id := range strings.Split(strings.TrimPrefix(list, "m"), ",") {
		require.Equal(cl.t, "OK", cl.req("Hg"+id))
		regs[id] = cl.req("g")
	}
	require.Equal(cl.t, "OK", cl.req("Hg0"))
	return regs, list
}

// TestReverseThreads: a threaded program goes back as a whole: bc
// stops at the breakpoint hit met backwards in the thread that met it,
// with the threads that existed then and every thread's registers as
// they were; bs steps back the selected thread's last instruction, and
// s replays it forward to the same registers.
func TestReverseThreads(t *testing.T) {
	for arch, path := range threadProgs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path)
			cl.noAck()
			work := symbol(t, path, "work")
			bp := fmt.Sprintf("Z0,%x,4", work)
			require.Equal(t, "OK", cl.req(bp))
			type stop struct {
				reply, list string
				clock       uint64
				regs        map[string]string
			}
			var stops []stop
			for range 3 {
				reply := cl.req("vCont;c")
				tid := stopTid(t, reply)
				regs, list := cl.allRegs()
				stops = append(stops, stop{reply, list, replay.Clock(cl.p.Machine), regs})
				require.Equal(t, "OK", cl.req("z"+bp[1:]))
				require.Equal(t, fmt.Sprintf("T05thread:%x;", tid), cl.req(fmt.Sprintf("vCont;s:%x;c", tid)))
				require.Equal(t, "OK", cl.req(bp))
			}
			out := cl.out.String()
			for i := 2; i >= 0; i-- {
				require.Equal(t, stops[i].reply, cl.req("bc"))
				require.Equal(t, stops[i].clock, replay.Clock(cl.p.Machine))
				regs, list := cl.allRegs()
				require.Equal(t, stops[i].list, list)
				require.Equal(t, stops[i].regs, regs)
				require.Equal(t, "QC"+strings.TrimSuffix(strings.TrimPrefix(stops[i].reply, "T05swbreak:;thread:"), ";"), cl.req("qC"))
			}
			// bs of another thread than the event's: back to where it ran
			// its last instruction; s forward again.
			require.Equal(t, "OK", cl.req("z"+bp[1:]))
			ids := strings.Split(strings.TrimPrefix(stops[0].list, "m"), ",")
			main := ids[0]
			require.Equal(t, "OK", cl.req("Hc"+main))
			before := replay.Clock(cl.p.Machine)
			require.Equal(t, "OK", cl.req("Hg"+main))
			g := cl.req("g")
			require.Equal(t, "T05thread:"+main+";", cl.req("bs"))
			require.Less(t, replay.Clock(cl.p.Machine), before)
			require.Equal(t, "QC"+main, cl.req("qC"))
			require.NotEqual(t, g, cl.req("g"))
			require.Equal(t, "OK", cl.req("Hc"+main))
			require.Equal(t, "T05thread:"+main+";", cl.req("s"))
			require.Equal(t, g, cl.req("g"), "the main thread's registers after its instruction again")
			// At the start of history there was one thread.
			require.Equal(t, "T05replaylog:begin;thread:3e8;", cl.req("bc"))
			require.Equal(t, "m3e8", cl.req("qfThreadInfo"))
			require.Equal(t, out, cl.out.String(), "the replay wrote nothing")

			want, wantOut := plain(t, path)
			require.Equal(t, exitReply(want), cl.req("c"))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, want.Status, r.exit.Status)
			require.Equal(t, wantOut, cl.out.String(), "the output, once")
		})
	}
}

// monitorText sends monitor cmd and returns its output (O packets).
func (cl *client) monitorText(cmd string) string {
	cl.t.Helper()
	reply := cl.req("qRcmd," + hex.EncodeToString([]byte(cmd)))
	var out string
	for reply != "OK" {
		require.True(cl.t, strings.HasPrefix(reply, "O"), "monitor reply %q", reply)
		b, err := hex.DecodeString(reply[1:])
		require.NoError(cl.t, err)
		out += string(b)
		reply = cl.recv()
	}
	return out
}

// TestMonitorHistory: monitor history shows the span and snapshots, and
// sets the interval and the memory bound; a bound of one byte keeps one
// snapshot, so the start of history moves on.
func TestMonitorHistory(t *testing.T) {
	path := progs["arm64"]
	cl := start(t, path, "12")
	cl.noAck()
	cl.monitorText("history interval 1000")
	require.Contains(t, cl.monitorText("history bogus"), "usage:")
	require.Contains(t, cl.monitorText("history limit x"), `bad limit "x"`)
	fib := symbol(t, path, "fib_rec")
	require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", fib)))
	tid := fmt.Sprintf("%x", cl.p.PID())
	hit := "T05swbreak:;thread:" + tid + ";"
	require.Equal(t, hit, cl.req("c"))
	require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", fib)))
	for range 5 {
		require.Equal(t, "T05thread:"+tid+";", cl.req("s"))
	}
	require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", fib)))
	require.Equal(t, hit, cl.req("c"))
	now := replay.Clock(cl.p.Machine)
	require.Greater(t, now, uint64(1000))
	out := cl.monitorText("history")
	require.Regexp(t, fmt.Sprintf(`^history: instructions 0 to %d, at the newest point; snapshots: [2-9], one every 1000 instructions; held: .* of a 256 MiB limit\n$`, now), out)
	require.Contains(t, cl.monitorText("history limit 1"), "of a 1 bytes limit")
	require.Equal(t, "T05thread:"+tid+";", cl.req("bs"))
	out = cl.monitorText("history")
	require.Regexp(t, fmt.Sprintf(`^history: instructions [1-9]\d* to %d, replaying, at %d; `, now, now-1), out)
}

// TestReverseRefusedWithProcesses: once the program has forked, bs and
// bc answer an error rather than a wrong answer. (The stub follows the
// first process only, and a parent that blocks on its child does not
// come back under gdb yet, so the test stops right after the fork.)
func TestReverseRefusedWithProcesses(t *testing.T) {
	procProgs := map[string]string{
		"arm64": "../../programs/procs/bin/aarch64-proc-O2/forkwait",
		"s390x": "../../programs/procs/bin/s390x-proc-O2/forkwait",
	}
	for arch, path := range procProgs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path)
			cl.noAck()
			tid := fmt.Sprintf("%x", cl.p.PID())
			closeFn := symbol(t, path, "close")
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", closeFn)))
			require.Equal(t, "T05swbreak:;thread:"+tid+";", cl.req("c"))
			require.Len(t, cl.p.System().Processes(), 2)
			require.Equal(t, "E01", cl.req("bs"))
			require.Equal(t, "E01", cl.req("bc"))
			require.Contains(t, cl.monitorText("history"), "no history: the program has forked")
			cl.raw(string(frame([]byte("k")))) // k has no reply
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, 137, r.exit.Status)
		})
	}
}

// TestReverseOverFaults: a program whose faults become signals that its
// handlers catch: back from a fault stop and forward to it again, the
// fault is still there to pass; back over a handler's run (bc to the
// start) and forward again, every handler runs once, its output once.
func TestReverseOverFaults(t *testing.T) {
	faultProgs := map[string]string{
		"arm64": "../../programs/signals/bin/aarch64-sig-O2/faults",
		"s390x": "../../programs/signals/bin/s390x-sig-O2/faults",
	}
	for arch, path := range faultProgs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path)
			cl.noAck()
			tid := fmt.Sprintf("%x", cl.p.PID())
			segv := "T0bthread:" + tid + ";"
			require.Equal(t, segv, cl.req("c"))
			at := replay.Clock(cl.p.Machine)
			regs := cl.req("g")
			require.Equal(t, "T05thread:"+tid+";", cl.req("bs"))
			require.Equal(t, at-1, replay.Clock(cl.p.Machine))
			require.Equal(t, "T05thread:"+tid+";", cl.req("s"))
			require.Equal(t, at, replay.Clock(cl.p.Machine))
			require.Equal(t, regs, cl.req("g"))
			// Pass it: the handler runs; then on to the next fault.
			require.Equal(t, segv, cl.req("C0b"))
			out := cl.out.String()
			require.Equal(t, "T05replaylog:begin;thread:"+tid+";", cl.req("bc"))
			require.Equal(t, uint64(0), replay.Clock(cl.p.Machine))
			// Forward through the history: the first fault was passed, so
			// the replay delivers it (from the log) and stops only at the
			// newest point's fault, held as before.
			require.Equal(t, segv, cl.req("c"))
			require.Equal(t, out, cl.out.String(), "the replay wrote nothing")
			// Pass every fault on to the program's end (SIGSEGV, SIGILL,
			// SIGBUS, ... : whatever each stop names).
			reply := cl.req("C0b")
			for strings.HasPrefix(reply, "T") {
				require.Regexp(t, `^T[0-9a-f]{2}thread:`+tid+`;$`, reply)
				reply = cl.req("C" + reply[1:3])
			}
			want, wantOut := plain(t, path)
			require.Equal(t, exitReply(want), reply)
			require.Equal(t, wantOut, cl.out.String(), "the output, once")
			cl.wait()
		})
	}
}
