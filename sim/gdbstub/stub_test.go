package gdbstub

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	_ "simrun/sim/arm64"
	"simrun/sim/cpu"
	"simrun/sim/linux"
	_ "simrun/sim/s390x"
)

// The programs the tests debug (bundled, with symbols).
var progs = map[string]string{
	"arm64": "../../programs/bin/aarch64-O2/fib",
	"s390x": "../../programs/bin/s390x-O2/fib",
}

// symbol is the address of name in the program at path.
func symbol(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.Symbols()
	require.NoError(t, err)
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

// plain runs path without gdb: how it ends and what it prints.
func plain(t *testing.T, path string, args ...string) (*cpu.Exit, string) {
	t.Helper()
	var out bytes.Buffer
	m, err := linux.Load(path, linux.Config{Args: append([]string{path}, args...), Stdout: &out, Seed: 1})
	require.NoError(t, err)
	exit, err := m.Run()
	require.NoError(t, err)
	return exit, out.String()
}

// client is gdb's side of a stub on a fake connection.
type client struct {
	t    *testing.T
	c    net.Conn
	r    *bufio.Reader
	ack  bool
	out  bytes.Buffer // the guest's stdout
	p    *linux.Process
	done chan result
}

type result struct {
	exit *cpu.Exit
	err  error
}

// start loads path with args and serves it on a pipe.
func start(t *testing.T, path string, args ...string) *client {
	t.Helper()
	cl := &client{t: t, ack: true, done: make(chan result, 1)}
	m, err := linux.Load(path, linux.Config{Args: append([]string{path}, args...), Stdout: &cl.out, Seed: 1})
	require.NoError(t, err)
	cl.p = linux.Of(m)
	srv, c := net.Pipe()
	cl.c, cl.r = c, bufio.NewReader(c)
	s, err := New(cl.p, srv, io.Discard)
	require.NoError(t, err)
	go func() {
		exit, err := s.Serve()
		cl.done <- result{exit, err}
	}()
	t.Cleanup(func() { c.Close() })
	return cl
}

func (cl *client) deadline() {
	cl.c.SetDeadline(time.Now().Add(20 * time.Second))
}

// raw sends bytes as they are.
func (cl *client) raw(s string) {
	cl.t.Helper()
	cl.deadline()
	_, err := cl.c.Write([]byte(s))
	require.NoError(cl.t, err)
}

// recv reads one reply packet, checking its checksum.
func (cl *client) recv() string {
	cl.t.Helper()
	cl.deadline()
	for {
		c, err := cl.r.ReadByte()
		require.NoError(cl.t, err)
		if c == '+' {
			continue
		}
		require.Equal(cl.t, byte('$'), c, "reply starts with $")
		data, err := cl.r.ReadString('#')
		require.NoError(cl.t, err)
		data = data[:len(data)-1]
		var cs [2]byte
		_, err = io.ReadFull(cl.r, cs[:])
		require.NoError(cl.t, err)
		require.Equal(cl.t, string(frame([]byte(data))), "$"+data+"#"+string(cs[:]), "checksum")
		if cl.ack { // the stub may have closed after an exit reply
			cl.deadline()
			cl.c.Write([]byte("+"))
		}
		return data
	}
}

// req sends packet data and returns the reply.
func (cl *client) req(data string) string {
	cl.t.Helper()
	cl.raw(string(frame([]byte(data))))
	if cl.ack {
		cl.deadline()
		c, err := cl.r.ReadByte()
		require.NoError(cl.t, err)
		require.Equal(cl.t, byte('+'), c, "ack of %q", data)
	}
	return cl.recv()
}

func (cl *client) noAck() {
	require.Equal(cl.t, "OK", cl.req("QStartNoAckMode"))
	cl.ack = false
}

// wait is how the run ended.
func (cl *client) wait() result {
	cl.t.Helper()
	select {
	case r := <-cl.done:
		return r
	case <-time.After(20 * time.Second):
		cl.t.Fatal("the stub did not finish")
	}
	return result{}
}

// reg reads register n (by 'p') as an integer in the target's order.
func (cl *client) reg(n int) uint64 {
	cl.t.Helper()
	b, err := hex.DecodeString(cl.req(fmt.Sprintf("p%x", n)))
	require.NoError(cl.t, err)
	if cl.p.Arch.ByteOrder == binary.BigEndian {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// pcReg is the pc's register number.
func pcReg(arch string) int {
	if arch == "arm64" {
		return 32
	}
	return 1 // pswa
}

func TestHandshake(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path, "5")
			sup := cl.req("qSupported:swbreak+;hwbreak+;xmlRegisters=i386") // plain thread ids (TestMultiprocess: pPID.TID)
			for _, f := range []string{"PacketSize=", "qXfer:features:read+", "qXfer:auxv:read+", "qXfer:exec-file:read+", "swbreak+", "hwbreak+", "vContSupported+", "QStartNoAckMode+"} {
				require.Contains(t, sup, f)
			}
			cl.noAck()
			tid := fmt.Sprintf("%x", cl.p.PID())
			for _, tc := range []struct{ req, want string }{
				{"?", "T05thread:" + tid + ";"},
				{"qC", "QC" + tid},
				{"qfThreadInfo", "m" + tid},
				{"qsThreadInfo", "l"},
				{"qAttached:1", "0"},
				{"Hg0", "OK"},
				{"Hgp3e8.3e8", "OK"},
				{"Hc-1", "OK"},
				{"Hg" + tid, "OK"},
				{"Hg77", "E01"},
				{"Hx0", "E01"},
				{"T" + tid, "OK"},
				{"T99", "E01"},
				{"vCont?", "vCont;c;C;s;S"},
				{"vMustReplyEmpty", ""},
				{"qTStatus", ""},
				{"qSymbol::", "OK"},
				{"!", ""},
				{"p1000", "E01"},
				{"pzz", "E01"},
				{"Pzz=00", "E01"},
				{"P0=00", "E01"},
				{"Gabc", "E01"},
				{"m0,4", "E14"},
				{"mzz", "E01"},
				{"M0,1:00", "E14"},
				{"M0,2:00", "E01"},
				{"X0,1:}", "E01"},
				{"Z9,0,0", ""},
				{"Z0,zz,4", "E01"},
				{"Z2,1000,0", "E01"},
				{"Cxyz", "E01"},
				{"vCont;x", "E01"},
				{"qXfer:features:read:nosuch.xml:0,100", "E00"},
				{"qXfer:features:read:target.xml:zz", "E01"},
				{"qXfer:features:read:target.xml:100000,10", "E01"},
				{"qXfer:features:write:target.xml:0,10", ""},
				{"qXfer:nosuch:read::0,10", ""},
				{"qRcmd,zz", "E01"},
			} {
				require.Equal(t, tc.want, cl.req(tc.req), "reply to %s", tc.req)
			}
			require.Equal(t, "O"+hex.EncodeToString([]byte("0\n")), cl.req("qRcmd,"+hex.EncodeToString([]byte("insns"))))
			require.Equal(t, "OK", cl.recv())
			require.Contains(t, cl.req("qRcmd,"), "O")
			require.Equal(t, "OK", cl.recv())
			// The program did not run.
			require.Zero(t, cl.p.Insns)
			cl.raw(string(frame([]byte("k")))) // k has no reply
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, cpu.SIGKILL, r.exit.Fault.Signal())
		})
	}
}

// TestAckMode: in acknowledgment mode a bad checksum gets '-', a '-'
// gets the last reply again.
func TestAckMode(t *testing.T) {
	cl := start(t, progs["arm64"])
	cl.raw("$qC#00")
	cl.deadline()
	c, err := cl.r.ReadByte()
	require.NoError(t, err)
	require.Equal(t, byte('-'), c)
	want := fmt.Sprintf("QC%x", cl.p.PID())
	require.Equal(t, want, cl.req("qC"))
	cl.raw("-")
	require.Equal(t, want, cl.recv())
}

// TestXfer: the target description, auxv and exec-file read in pieces.
func TestXfer(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path)
			cl.noAck()
			read := func(object, annex string, chunk int) []byte {
				var out []byte
				for {
					r := cl.req(fmt.Sprintf("qXfer:%s:read:%s:%x,%x", object, annex, len(out), chunk))
					require.NotEmpty(t, r)
					b, err := unescape(r[1:])
					require.NoError(t, err)
					out = append(out, b...)
					if r[0] == 'l' {
						return out
					}
					require.Equal(t, byte('m'), r[0])
				}
			}
			lay, err := layoutFor(cl.p.Arch, false)
			require.NoError(t, err)
			desc := read("features", "target.xml", 0x100)
			require.Equal(t, lay.xml, string(desc))
			var doc struct {
				Arch     string `xml:"architecture"`
				Features []struct {
					Name string `xml:"name,attr"`
					Regs []struct {
						Name   string `xml:"name,attr"`
						Bits   int    `xml:"bitsize,attr"`
						Regnum int    `xml:"regnum,attr"`
					} `xml:"reg"`
				} `xml:"feature"`
			}
			require.NoError(t, xml.Unmarshal(desc, &doc))
			n := 0
			bytes := 0
			for _, f := range doc.Features {
				for _, r := range f.Regs {
					require.Equal(t, n, r.Regnum, r.Name)
					n++
					bytes += r.Bits / 8
				}
			}
			g := cl.req("g")
			require.Len(t, g, 2*bytes, "g holds every register of the description")
			want := map[string]int{"arm64": 68, "s390x": 51 + 32}[arch]
			require.Equal(t, want, n)

			var auxv []byte
			for _, a := range cl.p.Auxv() {
				auxv = cl.p.Arch.ByteOrder.(binary.AppendByteOrder).AppendUint64(auxv, a[0])
				auxv = cl.p.Arch.ByteOrder.(binary.AppendByteOrder).AppendUint64(auxv, a[1])
			}
			require.Equal(t, auxv, read("auxv", "", 0x30))
			require.Equal(t, cl.p.ExePath(), string(read("exec-file", "3e8", 0x7)))
		})
	}
}

// TestRegistersAndMemory: g/G, p/P and m/M/X read and write what the
// machine holds.
func TestRegistersAndMemory(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path)
			cl.noAck()
			m := cl.p.Machine
			require.Equal(t, m.Core.PC(), cl.reg(pcReg(arch)))
			// P x1/r1, seen by the core.
			r1 := map[string]int{"arm64": 1, "s390x": 3}[arch]
			val := make([]byte, 8)
			m.Arch.ByteOrder.PutUint64(val, 0x1122334455667788)
			require.Equal(t, "OK", cl.req(fmt.Sprintf("P%x=%s", r1, hex.EncodeToString(val))))
			var st cpu.State
			m.Core.State(&st)
			require.Equal(t, uint64(0x1122334455667788), st.GPR[1])
			// G with what g returned changes nothing; with one byte changed
			// that register changes.
			g := cl.req("g")
			require.Equal(t, "OK", cl.req("G"+g))
			require.Equal(t, g, cl.req("g"))
			// Flags: arm64 cpsr bit 30 is Z; s390x pswm bits 45:44 the cc.
			flags := map[string]int{"arm64": 33, "s390x": 0}[arch]
			fv := map[string]string{"arm64": "00000040", "s390x": "0000100180000000"}[arch]
			require.Equal(t, "OK", cl.req(fmt.Sprintf("P%x=%s", flags, fv)))
			require.Equal(t, fv, cl.req(fmt.Sprintf("p%x", flags)))
			m.Core.State(&st)
			require.Equal(t, uint64(map[string]int{"arm64": 4, "s390x": 1}[arch]), st.Flags)
			// A vector register: v2 on arm64, v20 on s390x, 128 bits.
			vr := map[string]int{"arm64": 36, "s390x": 51 + 16 + 4}[arch]
			v := "000102030405060708090a0b0c0d0e0f"
			require.Equal(t, "OK", cl.req(fmt.Sprintf("P%x=%s", vr, v)))
			require.Equal(t, v, cl.req(fmt.Sprintf("p%x", vr)))
			m.Core.State(&st)
			vi := map[string]int{"arm64": 2, "s390x": 20}[arch]
			if arch == "arm64" { // little-endian: byte 0 is bit 7:0
				require.Equal(t, [2]uint64{0x0f0e0d0c0b0a0908, 0x0706050403020100}, st.Vec[vi])
			} else {
				require.Equal(t, [2]uint64{0x0001020304050607, 0x08090a0b0c0d0e0f}, st.Vec[vi])
			}

			// Memory: the code at the pc, as the machine reads it.
			pc := m.Core.PC()
			want, err := m.Mem.ReadBytes(pc, 16)
			require.NoError(t, err)
			require.Equal(t, hex.EncodeToString(want), cl.req(fmt.Sprintf("m%x,10", pc)))
			// Writes to read-only code (as ptrace may), read back.
			require.Equal(t, "OK", cl.req(fmt.Sprintf("M%x,2:abcd", pc)))
			require.Equal(t, "abcd", cl.req(fmt.Sprintf("m%x,2", pc)))
			// X with escaped bytes: '#', '$', '}' and '*'.
			require.Equal(t, "OK", cl.req(fmt.Sprintf("X%x,4:", pc)+string(escape(nil, []byte("#$}*")))))
			require.Equal(t, hex.EncodeToString([]byte("#$}*")), cl.req(fmt.Sprintf("m%x,4", pc)))
			require.Equal(t, "OK", cl.req(fmt.Sprintf("X%x,0:", pc)), "an empty X probes for binary writes")
			// A read running into unmapped memory stops there.
			sp := st.GPR[map[string]int{"arm64": 31, "s390x": 15}[arch]]
			top := (sp | cpu.PageMask) + 1
			for m.Mem.PageAt(top) != nil {
				top += cpu.PageSize
			}
			require.Len(t, cl.req(fmt.Sprintf("m%x,20", top-8)), 16)
			require.Equal(t, "E14", cl.req(fmt.Sprintf("m%x,4", top)))
			require.Equal(t, "E14", cl.req(fmt.Sprintf("M%x,10:%s", top-8, strings.Repeat("00", 16))), "no partial write")
			require.Equal(t, "E14", cl.req("mffffffffffffffff,4"))
			require.Zero(t, m.Insns, "nothing ran")
			require.Equal(t, "OK", cl.req("vKill;3e8"))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, cpu.SIGKILL, r.exit.Fault.Signal())
		})
	}
}

// TestBreakStepWatch: a breakpoint at fib_rec, a step, a watchpoint on
// olen (written when the program first buffers output), then the end.
func TestBreakStepWatch(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path, "5")
			cl.noAck()
			tid := fmt.Sprintf("%x", cl.p.PID())
			fib := symbol(t, path, "fib_rec")
			olen := symbol(t, path, "olen")
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", fib)))
			require.Equal(t, "T05swbreak:;thread:"+tid+";", cl.req("vCont;c:p3e8.-1"))
			require.Equal(t, fib, cl.reg(pcReg(arch)))
			insns := cl.p.Insns
			// Continuing from the breakpoint with it still set stops at once.
			require.Equal(t, "T05swbreak:;thread:"+tid+";", cl.req("c"))
			require.Equal(t, insns, cl.p.Insns)
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z0,%x,4", fib)))
			require.Equal(t, "T05thread:"+tid+";", cl.req("s"))
			require.Equal(t, insns+1, cl.p.Insns)
			require.NotEqual(t, fib, cl.reg(pcReg(arch)))
			require.Equal(t, "T05thread:"+tid+";", cl.req("vCont;s:"+tid))
			require.Equal(t, insns+2, cl.p.Insns)
			// A hardware breakpoint reports hwbreak.
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z1,%x,4", fib)))
			require.Equal(t, "T05hwbreak:;thread:"+tid+";", cl.req("c"))
			require.Equal(t, fib, cl.reg(pcReg(arch)))
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z1,%x,4", fib)))
			// A write watchpoint stops after the storing instruction; on
			// arm64 the report comes before it and gdb steps over it with
			// the watchpoint removed (gdb's aarch64 watchpoints are not
			// steppable, as on Linux).
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z2,%x,8", olen)))
			before := cl.p.Insns
			require.Equal(t, fmt.Sprintf("T05watch:%x;thread:%s;", olen, tid), cl.req("c"))
			require.Greater(t, cl.p.Insns, before)
			v, ok := cl.p.Mem.Load(olen, 8, cl.p.Arch.ByteOrder)
			require.True(t, ok)
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z2,%x,8", olen)))
			if arch == "arm64" {
				require.Zero(t, v, "stopped before the store")
				require.Equal(t, "T05thread:"+tid+";", cl.req("s"))
				v, ok = cl.p.Mem.Load(olen, 8, cl.p.Arch.ByteOrder)
				require.True(t, ok)
			}
			require.NotZero(t, v, "the store retired")
			// A read watchpoint next stops at a load of it.
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z3,%x,8", olen)))
			require.Equal(t, fmt.Sprintf("T05rwatch:%x;thread:%s;", olen, tid), cl.req("c"))
			require.Equal(t, "OK", cl.req(fmt.Sprintf("z3,%x,8", olen)))
			want, out := plain(t, path, "5")
			require.Equal(t, exitReply(want), cl.req("c"))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, want.Status, r.exit.Status)
			require.Equal(t, out, cl.out.String())
		})
	}
}

// TestFault: a jump to address 0 stops with SIGSEGV before any handler;
// continuing without the signal faults again, with it the process dies
// as Linux kills it (fib has no handler).
func TestFault(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			cl := start(t, path, "5")
			cl.noAck()
			tid := fmt.Sprintf("%x", cl.p.PID())
			require.Equal(t, "OK", cl.req(fmt.Sprintf("P%x=%s", pcReg(arch), strings.Repeat("00", 8))))
			require.Equal(t, "T0bthread:"+tid+";", cl.req("c"))
			require.Equal(t, "T0bthread:"+tid+";", cl.req("c"), "a discarded fault happens again")
			require.Zero(t, cl.p.TakenFaults)
			require.Equal(t, "X0b", cl.req("vCont;C0b:"+tid))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, cpu.SIGSEGV, r.exit.Fault.Signal())
		})
	}
}

// TestFaultHandler: with the signals program's SIGSEGV handler, C0b runs
// the handler (its output shows), as without gdb.
func TestFaultHandler(t *testing.T) {
	for arch, path := range map[string]string{
		"arm64": "../../programs/signals/bin/aarch64-sig-O2/faults",
		"s390x": "../../programs/signals/bin/s390x-sig-O2/faults",
	} {
		t.Run(arch, func(t *testing.T) {
			want, out := plain(t, path)

			cl := start(t, path)
			cl.noAck()
			stops := 0
			reply := cl.req("c")
			for strings.HasPrefix(reply, "T") {
				stops++
				sig := reply[1:3]
				reply = cl.req("C" + sig)
			}
			require.Equal(t, exitReply(want), reply)
			require.GreaterOrEqual(t, stops, 4, "the program's faults each stopped")
			require.NoError(t, cl.wait().err)
			require.Equal(t, out, cl.out.String(), "the handlers ran as without gdb")
		})
	}
}

// TestDetach: D lets the program run to its end; so does a lost
// connection.
func TestDetach(t *testing.T) {
	for _, how := range []string{"D", "close"} {
		t.Run(how, func(t *testing.T) {
			cl := start(t, progs["arm64"], "5")
			cl.noAck()
			require.Equal(t, "OK", cl.req(fmt.Sprintf("Z0,%x,4", symbol(t, progs["arm64"], "fib_rec"))))
			if how == "D" {
				require.Equal(t, "OK", cl.req("D;3e8"))
			} else {
				cl.c.Close()
			}
			r := cl.wait()
			require.NoError(t, r.err)
			want, out := plain(t, progs["arm64"], "5")
			require.Equal(t, want.Status, r.exit.Status)
			require.Equal(t, out, cl.out.String())
		})
	}
}

// TestInterrupt: 0x03 stops a running guest with SIGINT; it runs on
// afterwards.
func TestInterrupt(t *testing.T) {
	for _, watching := range []bool{false, true} {
		t.Run(fmt.Sprint("watching=", watching), func(t *testing.T) {
			cl := start(t, progs["arm64"], "40") // minutes of guest time
			cl.noAck()
			if watching { // the per-instruction path
				require.Equal(t, "OK", cl.req("Z2,10,8"))
			}
			cl.raw(string(frame([]byte("c"))))
			time.Sleep(50 * time.Millisecond)
			cl.raw("\x03")
			require.Equal(t, fmt.Sprintf("T02thread:%x;", cl.p.PID()), cl.recv())
			n := cl.p.Insns
			require.NotZero(t, n)
			require.Equal(t, fmt.Sprintf("T05thread:%x;", cl.p.PID()), cl.req("s"))
			require.Equal(t, n+1, cl.p.Insns)
			cl.raw(string(frame([]byte("k"))))
			require.NoError(t, cl.wait().err)
		})
	}
}

// TestMaxInsns: --max-insns still ends a run under gdb, with SIGXCPU.
func TestMaxInsns(t *testing.T) {
	path := progs["s390x"]
	m, err := linux.Load(path, linux.Config{Args: []string{path, "30"}, MaxInsns: 5000})
	require.NoError(t, err)
	srv, c := net.Pipe()
	defer c.Close()
	s, err := New(linux.Of(m), srv, io.Discard)
	require.NoError(t, err)
	done := make(chan result, 1)
	go func() { e, err := s.Serve(); done <- result{e, err} }()
	cl := &client{t: t, c: c, r: bufio.NewReader(c), ack: true}
	require.Equal(t, "X18", cl.req("c"))
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, cpu.FaultInsnLimit, r.exit.Fault.Kind)
	require.Equal(t, uint64(5000), m.Insns)
}

// FuzzGDBPacket: packets that neither resume, kill, detach nor write
// never panic the stub nor change the guest.
func FuzzGDBPacket(f *testing.F) {
	for _, s := range []string{"g", "p20", "m4000f0,10", "qXfer:features:read:target.xml:0,100", "Z0,4000f0,4", "z2,10,8", "Hg0", "qSupported:xmlRegisters=i386", "vCont?", "T3e8",
		"qSupported:multiprocess+;exec-events+", "Hgp3e8.3e8", "vFile:setfs:0", "vFile:open:2f70726f632f313030302f736d617073,0,1c0", "vFile:pread:0,4000,0",
		"vFile:fstat:0", "vFile:close:0", "vFile:open:2f70726f632f34323030302f6d617073,0,0"} {
		f.Add(s)
	}
	path := progs["arm64"]
	m, err := linux.Load(path, linux.Config{Args: []string{path}})
	if err != nil {
		f.Fatal(err)
	}
	s, err := New(linux.Of(m), nopConn{}, io.Discard)
	if err != nil {
		f.Fatal(err)
	}
	var before cpu.State
	m.Core.State(&before)
	f.Fuzz(func(t *testing.T, pkt string) {
		if pkt == "" || strings.ContainsAny(pkt[:1], "cCsSkDGPMXv") && !strings.HasPrefix(pkt, "vCont?") && !strings.HasPrefix(pkt, "vFile:") {
			return
		}
		exit, done, err := s.handle(pkt)
		if exit != nil || done || err != nil {
			t.Fatalf("%q ended the session", pkt)
		}
		var after cpu.State
		m.Core.State(&after)
		if fmt.Sprint(after) != fmt.Sprint(before) || m.Insns != 0 {
			t.Fatalf("%q changed the guest", pkt)
		}
	})
}

type nopConn struct{}

func (nopConn) Read([]byte) (int, error)    { return 0, io.EOF }
func (nopConn) Write(b []byte) (int, error) { return len(b), nil }
func (nopConn) Close() error                { return nil }
