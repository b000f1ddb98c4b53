package linux

import (
	"encoding/binary"
	"testing"
)

// FuzzThreadCalls drives the thread syscalls — clone, clone3 (its struct
// from the input), futex (any op, address, value and bitset), exit,
// sched_yield, tgkill and preemption — in the order the input says:
// whatever the guest asks, simrun answers with an errno or a state
// change, never a panic, and the scheduler's invariants hold (the
// running thread is live, tids ascend).
func FuzzThreadCalls(f *testing.F) {
	f.Add([]byte{0, 0, 0x0f, 0x3d, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 88, 0, 0, 0, 0, 0, 0, 0, 3, 5, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, buf := testProcess(t, []string{"arm64", "s390x"}[len(data)%2])
		o := p.order()
		for i := 0; i+9 <= len(data) && i < 9*64 && !p.Exited(); i += 9 {
			op, arg := data[i], binary.LittleEndian.Uint64(data[i+1:])
			word := buf + arg%256
			switch op % 8 {
			case 0:
				fl := uint64(uint32(arg)) | threadFlags&(arg>>32)
				dispatch(t, p, "clone", threadCloneArgs(p.Arch.Name, fl, buf+0x8000, buf+0x100, buf+0x104, arg)...)
			case 1:
				b := make([]byte, 96)
				for k := range b {
					b[k] = byte(arg >> (k % 8 * 8))
				}
				o.PutUint64(b, threadFlags|arg&^0xff)
				p.writeGuest(buf+0x200, b)
				dispatch(t, p, "clone3", buf+0x200, arg>>56)
			case 2:
				dispatch(t, p, "futex", word, arg>>8&0x1ff, arg>>24&3, arg>>40&1*(buf+0x300), buf+0x10, uint64(uint32(arg>>26)))
			case 3:
				dispatch(t, p, "futex", word, arg>>8&0x1ff|1, arg>>17&7, arg>>20&7, buf+arg>>32%64, arg>>36)
			case 4:
				dispatch(t, p, "exit", arg)
			case 5:
				dispatch(t, p, "sched_yield")
			case 6:
				dispatch(t, p, "tgkill", guestPID, guestPID+arg%8, arg>>8%66)
			case 7:
				p.Preempt(p.Machine)
			}
			if p.Exited() {
				break
			}
			if p.cur.state == threadExited {
				t.Fatalf("the running thread %d has exited", p.cur.tid)
			}
			for k := 1; k < len(p.threads); k++ {
				if p.threads[k].tid <= p.threads[k-1].tid {
					t.Fatalf("threads out of tid order: %d after %d", p.threads[k].tid, p.threads[k-1].tid)
				}
			}
		}
	})
}
