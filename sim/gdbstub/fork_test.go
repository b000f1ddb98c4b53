package gdbstub

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/sim/linux"
)

// forkLoop is an arm64 program that forks a child which loops forever
// while the parent waits for it: wait4(-1) never returns.
func forkLoop(t *testing.T) string {
	words := []uint32{
		0xd2800220, // movz x0, #17 (SIGCHLD)
		0xd2800001, // movz x1, #0
		0xd2801b88, // movz x8, #220 (clone)
		0xd4000001, // svc #0
		0xb4000120, // cbz x0, child (+9)
		0x92800000, // movn x0, #0 (-1: any child)
		0xd2800001, // movz x1, #0
		0xd2800002, // movz x2, #0
		0xd2800003, // movz x3, #0
		0xd2802088, // movz x8, #260 (wait4)
		0xd4000001, // svc #0
		0xd2800bc8, // movz x8, #94 (exit_group)
		0xd4000001, // svc #0
		0x14000000, // child: b .
	}
	path := filepath.Join(t.TempDir(), "forkloop")
	code := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, words...), make([]byte, 64))
	require.NoError(t, os.WriteFile(path, code, 0o755))
	return path
}

// TestForkInterrupt: gdb's continue runs a forked child while the parent
// waits for it (the child runs without gdb); an interrupt then stops the
// run though the child has the core (T02, the parent's registers at its
// wait4), a continue goes on with the child, and k ends the run, the
// child with it.
func TestForkInterrupt(t *testing.T) {
	path := forkLoop(t)
	m, err := linux.Load(path, linux.Config{Args: []string{path}})
	require.NoError(t, err)
	p := linux.Of(m)
	srv, c := net.Pipe()
	defer c.Close()
	s, err := New(p, srv, io.Discard)
	require.NoError(t, err)
	done := make(chan result, 1)
	go func() {
		exit, err := s.Serve()
		done <- result{exit, err}
	}()
	cl := &client{t: t, c: c, r: bufio.NewReader(c), ack: true, p: p}
	cl.noAck()
	for i := 0; i < 2; i++ {
		cl.raw(string(frame([]byte("c"))))
		time.Sleep(200 * time.Millisecond) // the child loops meanwhile
		cl.raw("\x03")
		require.Equal(t, "T02thread:3e8;", cl.recv())
		// The parent waits in wait4: its pc is at the svc, which runs
		// again once a child changes state (x8 still names wait4).
		pc := cl.reg(32)
		require.Equal(t, "010000d4", cl.req(fmt.Sprintf("m%x,4", pc)), "svc #0 at %#x", pc)
		require.Equal(t, uint64(260), cl.reg(8))
	}
	cl.raw(string(frame([]byte("k"))))
	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.NotNil(t, r.exit)
		require.Equal(t, 128+9, r.exit.Status)
	case <-time.After(20 * time.Second):
		t.Fatal("k did not end the run")
	}
	require.Len(t, p.System().Stats(), 2)
	for _, st := range p.System().Stats() {
		require.NotEqual(t, "running", st.Status, "every process ended: %+v", p.System().Stats())
	}
}
