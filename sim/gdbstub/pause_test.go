package gdbstub

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/cpu"
	"simrun/sim/linux"
)

// startWith is start with the machine's observer made by obs before the
// stub takes it.
func startWith(t *testing.T, path string, obs func(*cpu.Machine) func(*cpu.Machine) error, args ...string) *client {
	t.Helper()
	cl := &client{t: t, ack: true, done: make(chan result, 1)}
	m, err := linux.Load(path, linux.Config{Args: append([]string{path}, args...), Stdout: &cl.out, Seed: 1})
	require.NoError(t, err)
	m.Observer = obs(m)
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

// mustHexText decodes an O packet's text.
func mustHexText(t *testing.T, reply string) string {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(reply, "O"))
	require.NoError(t, err, reply)
	return string(b)
}

// TestErrPause: the run's own observer returning ErrPause stops the
// guest for gdb before that instruction (T05 without a reason), is
// called again for it on the resume, and after a detach pauses nothing.
func TestErrPause(t *testing.T) {
	for arch, path := range progs {
		t.Run(arch, func(t *testing.T) {
			want, out := plain(t, path, "5")
			cl := startWith(t, path, func(m *cpu.Machine) func(*cpu.Machine) error {
				calls := map[uint64]int{}
				return func(m *cpu.Machine) error {
					calls[m.Insns]++
					if m.Insns%1000 == 500 && calls[m.Insns] == 1 {
						return ErrPause
					}
					return nil
				}
			}, "5")
			cl.noAck()
			for i := 0; i < 3; i++ {
				require.Equal(t, fmt.Sprintf("T05thread:%x;", cl.p.PID()), cl.req("c"))
				require.Equal(t, fmt.Sprintf("%d\n", 500+1000*i), mustHexText(t, cl.req("qRcmd,696e736e73")))
				require.Equal(t, "OK", cl.recv())
			}
			require.Equal(t, "OK", cl.req("D"))
			r := cl.wait()
			require.NoError(t, r.err)
			require.Equal(t, want, r.exit)
			require.Equal(t, out, cl.out.String())
		})
	}
}
