package gdbstub

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListen(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "g.sock")
	tests := []struct {
		spec     string
		describe func(l *Listener) string
		err      string
	}{
		{spec: "0", describe: func(l *Listener) string { return ":" + portOf(l) }},
		{spec: "127.0.0.1:0", describe: func(l *Listener) string { return ":" + portOf(l) }},
		{spec: "unix:" + sock, describe: func(*Listener) string { return sock }},
		{spec: "unix:", err: "no socket path"},
		{spec: "nonsense", err: "want PORT, HOST:PORT or unix:PATH"},
		{spec: "70000", err: "want PORT, HOST:PORT or unix:PATH"},
		{spec: "[::1]:0", describe: func(l *Listener) string { return "[::1]:" + portOf(l) }},
		{spec: "localhost:0", describe: func(l *Listener) string { return ":" + portOf(l) }},
		{spec: "example.com:1234", err: "want PORT, HOST:PORT or unix:PATH"},
		{spec: "unix:/nonexistent-dir/x.sock", err: "--gdb unix:/nonexistent-dir/x.sock"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			l, err := Listen(tc.spec)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			defer l.Close()
			require.Equal(t, tc.describe(l), Describe(l))
			// gdb can connect where Describe says.
			addr := Describe(l)
			network := "unix"
			switch {
			case strings.HasPrefix(addr, ":"):
				network, addr = "tcp", "127.0.0.1"+addr
			case strings.HasPrefix(addr, "["):
				network = "tcp"
			}
			c, err := net.Dial(network, addr)
			require.NoError(t, err)
			c.Close()
		})
	}
}

func portOf(l *Listener) string {
	_, p, _ := net.SplitHostPort(l.Addr())
	return p
}
