package linux

import (
	"encoding/binary"
	"testing"
)

// FuzzTimerCalls drives the timer and signal-wait syscalls — timer_create
// (its sigevent from the input), timer_settime (its itimerspec from the
// input), timer_gettime, timer_delete, setitimer, alarm, nanosleep,
// clock_nanosleep (wall and CPU clocks), rt_sigtimedwait, clone — and
// retired instructions, in the order the input says: simrun answers with
// an errno or a state change, never a panic or a hang, and the slice it
// arms always lies ahead.
func FuzzTimerCalls(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0x10, 0x27, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{4, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, buf := testProcess(t, []string{"arm64", "s390x"}[len(data)%2])
		o := p.order()
		for i := 0; i+9 <= len(data) && i < 9*64 && !p.Exited(); i += 9 {
			op, arg := data[i], binary.LittleEndian.Uint64(data[i+1:])
			// The structures the calls read come from the input too.
			var b [32]byte
			binary.LittleEndian.PutUint64(b[:], arg)
			binary.LittleEndian.PutUint64(b[8:], arg>>3)
			binary.LittleEndian.PutUint64(b[16:], arg%3)
			binary.LittleEndian.PutUint64(b[24:], arg%2e9)
			p.writeGuest(buf+0x400, b[:])
			switch op % 10 {
			case 0:
				sev := buf + 0x400
				if arg&1 == 0 {
					sev = 0
				}
				dispatch(t, p, "timer_create", arg>>8%16, sev, buf+0x800)
			case 1:
				dispatch(t, p, "timer_settime", arg%4, arg>>8&1, buf+0x400+arg>>16%16, arg>>24&1*(buf+0x900))
			case 2:
				dispatch(t, p, "timer_gettime", arg%4, buf+0x900)
				dispatch(t, p, "timer_getoverrun", arg%4)
			case 3:
				dispatch(t, p, "timer_delete", arg%4)
			case 4:
				dispatch(t, p, "setitimer", arg%4, buf+0x400+arg>>8%16, buf+0x900)
			case 5:
				if _, ok := p.Arch.Syscalls["alarm"]; ok {
					dispatch(t, p, "alarm", arg%3)
				}
			case 6:
				if arg>>40&1 == 0 {
					dispatch(t, p, "nanosleep", buf+0x400+arg%16, buf+0x900)
					break
				}
				// clock_nanosleep on a wall clock, a CPU clock, or a
				// clock_getcpuclockid id of this or another thread.
				clock := arg >> 41 % 12
				if arg>>45&1 != 0 {
					clock = cpuClockID(1000+arg>>46%3, arg>>48&1 != 0, arg>>49%4)
				}
				dispatch(t, p, "clock_nanosleep", clock, arg>>8&1, buf+0x400+arg%16, buf+0x900)
			case 7:
				runInsns(p, arg%100000)
			case 8:
				p.writeGuest(buf+0xa00, appendU64(o, nil, arg))
				dispatch(t, p, "rt_sigtimedwait", buf+0xa00, buf+0x900, arg>>8&1*(buf+0x400), 8)
			case 9:
				if len(p.threads) < 4 {
					dispatch(t, p, "clone", threadCloneArgs(p.Arch.Name, glibcThreadFlags, buf+0x8000, 0, 0, 0)...)
				}
			}
			if p.Exited() {
				break
			}
			if end := p.sliceEnd(); end != 0 && end <= p.Insns {
				t.Fatalf("slice end %d is not ahead of %d", end, p.Insns)
			}
			if p.cur.state != threadRunnable {
				t.Fatalf("the running thread %d waits", p.cur.tid)
			}
		}
	})
}
