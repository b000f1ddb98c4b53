package gdbstub

import (
	"io"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/sim/linux"
)

// TestPAuthRegisters: with pointer authentication on, the arm64 target
// description has the pauth feature, registers 68 and 69 read Linux's
// masks (little-endian), writing them changes nothing, and 'g' carries
// them; without it there is no register 68.
func TestPAuthRegisters(t *testing.T) {
	path := progs["arm64"]
	m, err := linux.Load(path, linux.Config{Args: []string{path, "3"}, Seed: 1})
	require.NoError(t, err)
	m.Core.(interface{ EnablePAuth(uint64) }).EnablePAuth(1)
	srv, c := net.Pipe()
	defer c.Close()
	s, err := New(linux.Of(m), srv, io.Discard)
	require.NoError(t, err)
	require.Contains(t, s.lay.xml, `<feature name="org.gnu.gdb.aarch64.pauth"><reg name="pauth_dmask" bitsize="64" type="int" regnum="68"/><reg name="pauth_cmask" bitsize="64" type="int" regnum="69"/></feature>`)
	require.Equal(t, "0000000000007f00", s.readReg("44"))
	require.Equal(t, "0000000000007f00", s.readReg("45"))
	require.Equal(t, "OK", s.writeReg("44=0000000000000000"))
	require.Equal(t, "0000000000007f00", s.readReg("44"), "read-only, as Linux's regset")
	g := string(s.readRegs())
	require.True(t, strings.HasSuffix(g, "0000000000007f000000000000007f00"), g)

	cl := start(t, path, "3")
	require.NotContains(t, cl.req("qXfer:features:read:target.xml:0,3fff"), "pauth")
	require.Equal(t, "E01", cl.req("p44"))
}
