package gdbstub

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Listen opens the endpoint gdb connects to: "PORT" is TCP on 127.0.0.1
// (as qemu-user's -g PORT; 0 picks a free port, see Describe),
// "HOST:PORT" TCP on that address, "unix:PATH" a Unix socket at PATH.
func Listen(spec string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(spec, "unix:"); ok {
		if path == "" {
			return nil, fmt.Errorf("--gdb %s: no socket path after the unix: prefix", spec)
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			return nil, fmt.Errorf("--gdb %s: %w", spec, err)
		}
		return l, nil
	}
	addr := spec
	if n, err := strconv.ParseUint(spec, 10, 16); err == nil {
		addr = net.JoinHostPort("127.0.0.1", strconv.FormatUint(n, 10))
	} else if _, _, err := net.SplitHostPort(spec); err != nil {
		return nil, fmt.Errorf("gdb endpoint %q: want PORT, HOST:PORT or unix:PATH", spec)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gdb endpoint %s: %w", spec, err)
	}
	return l, nil
}

// Describe is what gdb's target remote needs to reach l: ":PORT" for
// TCP on a loopback address, HOST:PORT otherwise, or the socket's path.
func Describe(l net.Listener) string {
	switch a := l.Addr().(type) {
	case *net.TCPAddr:
		if a.IP.IsLoopback() {
			return fmt.Sprintf(":%d", a.Port)
		}
		return a.String()
	case *net.UnixAddr:
		return a.Name
	}
	return l.Addr().String()
}
