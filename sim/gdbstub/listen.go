package gdbstub

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The endpoint is opened with the socket system calls themselves rather
// than package net: net links the C library's resolver into simrun
// (cgo), and with it the whole simrun binary becomes dynamically linked
// and costs every command a megabyte and more of resident memory
// (docs/promises.md), for a listener that needs no name resolution.

// Listener is the endpoint gdb connects to.
type Listener struct {
	fd   int
	addr string // what Addr returns
	path string // the Unix socket's path, removed at Close
	port int    // TCP: the port
	loop bool   // TCP on an IPv4 loopback address
}

// Listen opens the endpoint gdb connects to: "PORT" is TCP on 127.0.0.1
// (as qemu-user's -g PORT; 0 picks a free port, see Describe),
// "HOST:PORT" TCP on that address (an IPv4 or IPv6 literal, or
// localhost), "unix:PATH" a Unix socket at PATH.
func Listen(spec string) (*Listener, error) {
	if path, ok := strings.CutPrefix(spec, "unix:"); ok {
		if path == "" {
			return nil, fmt.Errorf("--gdb %s: no socket path after the unix: prefix", spec)
		}
		l, err := listenSocket(syscall.AF_UNIX, &syscall.SockaddrUnix{Name: path})
		if err != nil {
			return nil, fmt.Errorf("--gdb %s: listen unix %s: %w", spec, path, err)
		}
		l.addr, l.path = path, path
		return l, nil
	}
	ap, err := parseHostPort(spec)
	if err != nil {
		return nil, fmt.Errorf("gdb endpoint %q: want PORT, HOST:PORT or unix:PATH", spec)
	}
	var sa syscall.Sockaddr
	family := syscall.AF_INET
	if ap.Addr().Is4() {
		sa = &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	l, err := listenSocket(family, sa)
	if err != nil {
		return nil, fmt.Errorf("gdb endpoint %s: listen tcp %s: %w", spec, ap, err)
	}
	got, err := syscall.Getsockname(l.fd)
	if err == nil {
		switch a := got.(type) {
		case *syscall.SockaddrInet4:
			l.port = a.Port
		case *syscall.SockaddrInet6:
			l.port = a.Port
		}
	}
	l.loop = ap.Addr().IsLoopback() && ap.Addr().Is4()
	l.addr = netip.AddrPortFrom(ap.Addr(), uint16(l.port)).String()
	return l, nil
}

// parseHostPort reads "PORT" (on 127.0.0.1) or "HOST:PORT".
func parseHostPort(spec string) (netip.AddrPort, error) {
	if n, err := strconv.ParseUint(spec, 10, 16); err == nil {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(n)), nil
	}
	i := strings.LastIndexByte(spec, ':')
	if i < 0 {
		return netip.AddrPort{}, fmt.Errorf("no port")
	}
	host, port := strings.Trim(spec[:i], "[]"), spec[i+1:]
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if host == "localhost" || host == "" {
		host = "127.0.0.1"
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(n)), nil
}

func listenSocket(family int, sa syscall.Sockaddr) (*Listener, error) {
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if family != syscall.AF_UNIX {
		syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if err := syscall.Listen(fd, 1); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &Listener{fd: fd}, nil
}

// Addr is the address listened on: HOST:PORT or the socket's path.
func (l *Listener) Addr() string { return l.addr }

// Accept waits for gdb's connection and returns it with the peer's
// address.
func (l *Listener) Accept() (io.ReadWriteCloser, string, error) {
	for {
		nfd, sa, err := syscall.Accept4(l.fd, syscall.SOCK_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("accept: %w", err)
		}
		peer := l.addr
		switch a := sa.(type) {
		case *syscall.SockaddrInet4:
			peer = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)).String()
		case *syscall.SockaddrInet6:
			peer = netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port)).String()
		}
		return os.NewFile(uintptr(nfd), "gdb connection"), peer, nil
	}
}

// Close stops listening (and removes the Unix socket's file).
func (l *Listener) Close() error {
	err := syscall.Close(l.fd)
	if l.path != "" {
		os.Remove(l.path)
	}
	return err
}

// Describe is what gdb's target remote needs to reach l: ":PORT" for
// TCP on an IPv4 loopback address, HOST:PORT otherwise, or the socket's
// path.
func Describe(l *Listener) string {
	switch {
	case l.path != "":
		return l.path
	case l.loop:
		return fmt.Sprintf(":%d", l.port)
	}
	return l.addr
}
