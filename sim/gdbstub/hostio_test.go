package gdbstub

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostRead reads a whole file over vFile:open/pread/close, as gdb's
// target_fileio_read_alloc does.
func hostRead(t *testing.T, cl *client, path string) (string, string) {
	t.Helper()
	r := cl.req("vFile:open:" + hex.EncodeToString([]byte(path)) + ",0,1c0")
	if strings.HasPrefix(r, "F-1") {
		return "", r
	}
	fd := strings.TrimPrefix(r, "F")
	var b []byte
	for {
		r := cl.req(fmt.Sprintf("vFile:pread:%s,4000,%x", fd, len(b)))
		n, data, ok := strings.Cut(r, ";")
		require.True(t, ok, r)
		k, err := strconv.ParseUint(strings.TrimPrefix(n, "F"), 16, 64)
		require.NoError(t, err, r)
		d, err := unescape(data)
		require.NoError(t, err)
		require.Len(t, d, int(k))
		if k == 0 {
			break
		}
		b = append(b, d...)
	}
	require.Equal(t, "F0", cl.req("vFile:close:"+fd))
	return string(b), ""
}

// TestHostIO: gdb's host I/O reads the guest's /proc files (by the pid
// the program has, gdb's stand-in 42000, and self), smaps with what a
// core holds, and the guest's files; it writes nothing and refuses what
// it does not serve with the protocol's errno.
func TestHostIO(t *testing.T) {
	cl := start(t, progs["arm64"], "5")
	cl.noAck()
	require.Equal(t, "F0", cl.req("vFile:setfs:0"))
	maps, e := hostRead(t, cl, "/proc/1000/maps")
	require.Empty(t, e)
	require.Contains(t, maps, "[stack]")
	self, _ := hostRead(t, cl, "/proc/self/maps")
	magic, _ := hostRead(t, cl, "/proc/42000/maps")
	require.Equal(t, maps, self)
	require.Equal(t, maps, magic)
	smaps, _ := hostRead(t, cl, "/proc/1000/smaps")
	require.Equal(t, strings.Count(maps, "\n"), strings.Count(smaps, "VmFlags:"), smaps)
	require.Contains(t, smaps, "Anonymous:")
	for _, l := range strings.Split(maps, "\n") {
		require.Contains(t, smaps, l)
	}
	cmdline, _ := hostRead(t, cl, "/proc/1000/cmdline")
	require.Equal(t, progs["arm64"]+"\x005\x00", cmdline)
	stat, _ := hostRead(t, cl, "/proc/1000/stat")
	require.True(t, strings.HasPrefix(stat, "1000 (fib) "), stat)

	want, err := os.ReadFile(progs["arm64"])
	require.NoError(t, err)
	abs, err := filepath.Abs(progs["arm64"])
	require.NoError(t, err)
	got, e := hostRead(t, cl, abs)
	require.Empty(t, e)
	require.Equal(t, string(want), got, "the program read back whole (binary bytes escaped)")

	fd := strings.TrimPrefix(cl.req("vFile:open:"+hex.EncodeToString([]byte(abs))+",0,0"), "F")
	st := cl.req("vFile:fstat:" + fd)
	n, data, ok := strings.Cut(st, ";")
	require.True(t, ok)
	require.Equal(t, "F40", n)
	raw, err := unescape(data)
	require.NoError(t, err)
	require.Len(t, raw, 64)
	require.Equal(t, uint64(len(want)), uint64(raw[28])<<56|uint64(raw[29])<<48|uint64(raw[30])<<40|uint64(raw[31])<<32|uint64(raw[32])<<24|uint64(raw[33])<<16|uint64(raw[34])<<8|uint64(raw[35]))
	require.Equal(t, "F0", cl.req("vFile:close:"+fd))

	for path, errno := range map[string]string{
		"/proc/1000/mem": "2", "/proc/1/maps": "2", "/proc/cpuinfo": "2", "/dev/zero": "2", "relative": "2",
		"/no/such/file": "2", "/tmp": "15", "/proc/1000/smaps/x": "2",
	} {
		_, e := hostRead(t, cl, path)
		require.Equal(t, "F-1,"+errno, e, path)
	}
	require.Equal(t, "F-1,1e", cl.req("vFile:open:"+hex.EncodeToString([]byte("/tmp/x"))+",241,1b6"), "O_WRONLY|O_CREAT|O_TRUNC: read-only")
	for _, bad := range []string{"vFile:close:7", "vFile:pread:7,10,0", "vFile:fstat:7", "vFile:close:", "vFile:open:zz,0,0",
		"vFile:open:2f,0", "vFile:pread:0,10", "vFile:setfs:x"} {
		require.True(t, strings.HasPrefix(cl.req(bad), "F-1,"), bad)
	}
	require.Equal(t, "", cl.req("vFile:unlink:2f746d702f78"), "unsupported operations: empty")
	var fds []string
	for i := 0; i < maxHostFiles; i++ {
		r := cl.req("vFile:open:" + hex.EncodeToString([]byte("/proc/self/comm")) + ",0,0")
		require.True(t, strings.HasPrefix(r, "F") && !strings.HasPrefix(r, "F-"), r)
		fds = append(fds, r[1:])
	}
	require.Equal(t, "F-1,18", cl.req("vFile:open:"+hex.EncodeToString([]byte("/proc/self/comm"))+",0,0"), "EMFILE")
	for _, fd := range fds {
		require.Equal(t, "F0", cl.req("vFile:close:"+fd))
	}
	require.Equal(t, "OK", cl.req("vKill;3e8"))
}

// TestMultiprocess: once gdb offers multiprocess+, thread ids carry the
// process id; without the offer they stay plain.
func TestMultiprocess(t *testing.T) {
	cl := start(t, progs["s390x"], "5")
	cl.noAck()
	require.Contains(t, cl.req("qSupported:multiprocess+;swbreak+"), ";multiprocess+")
	require.Equal(t, "QCp3e8.3e8", cl.req("qC"))
	require.Equal(t, "mp3e8.3e8", cl.req("qfThreadInfo"))
	require.Equal(t, "OK", cl.req("Hgp3e8.3e8"))
	require.Equal(t, "OK", cl.req("Tp3e8.3e8"))
	require.Equal(t, "T05thread:p3e8.3e8;", cl.req("vCont;s:p3e8.3e8"))
	require.Contains(t, string(cl.req("qXfer:threads:read::0,1000")), `id="p3e8.3e8"`)
	require.Regexp(t, `^W[0-9a-f]{2};process:3e8$`, cl.req("vCont;c:p3e8.-1"))

	cl = start(t, progs["s390x"], "5")
	cl.noAck()
	require.NotContains(t, cl.req("qSupported:swbreak+"), "multiprocess")
	require.Equal(t, "QC3e8", cl.req("qC"))
}
