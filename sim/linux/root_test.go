package linux

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simrun/internal/elftest"
	"simrun/sim/cpu"
)

// rootProcess returns a process confined to a fresh root holding:
//
//	/etc/passwd            a file
//	/d/                    a directory
//	/d/up -> ../..         relative link climbing past the root
//	/d/abs -> /            absolute link
//	/d/out -> OUTSIDE      absolute link to a host directory outside the root
//	/d/loop -> loop        a link to itself
//	/d/f -> ../etc/passwd  relative link to a file
//
// and the host directory OUTSIDE, which holds a file "secret".
func rootProcess(t *testing.T, readOnly bool) (p *Process, root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root + "/etc", root + "/d", outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(root+"/etc/passwd", []byte("root:x:0:0\n"), 0o644))
	require.NoError(t, os.WriteFile(outside+"/secret", []byte("secret"), 0o644))
	for name, target := range map[string]string{"up": "../..", "abs": "/", "out": outside, "loop": "loop", "f": "../etc/passwd"} {
		require.NoError(t, os.Symlink(target, root+"/d/"+name))
	}
	prog := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, 0xd2800bc8, 0xd4000001), nil)
	p, err := NewProcess("prog", prog, Config{Root: root, ReadOnly: readOnly})
	require.NoError(t, err)
	return p, root, outside
}

// TestRootConfinement: every way out of the root that Linux closes to a
// chrooted process is closed: "..", absolute and relative links, a
// directory descriptor, /proc/self/root; a loop is ELOOP.
func TestRootConfinement(t *testing.T) {
	p, root, _ := rootProcess(t, false)
	cases := []struct {
		path   string
		follow bool
		want   string // host path relative to the root, or "" when an errno is wanted
		errno  uint64
	}{
		{"/etc/passwd", true, "etc/passwd", 0},
		{"/../../../etc/passwd", true, "etc/passwd", 0},
		{"../../etc/passwd", true, "etc/passwd", 0},
		{"/d/up/etc/passwd", true, "etc/passwd", 0},
		{"/d/abs/etc/passwd", true, "etc/passwd", 0},
		{"/d/f", true, "etc/passwd", 0},
		{"/d/f", false, "d/f", 0},
		{"/d/out/secret", true, "", errno(ENOENT)}, // the link's target names a path inside the root
		{"/d/loop", true, "", errno(ELOOP)},
		{"/d/loop/x", true, "", errno(ELOOP)},
		{"/etc/passwd/x", true, "", errno(ENOTDIR)},
		{strings.Repeat("a/", 2100), true, "", errno(ENAMETOOLONG)},
	}
	for _, c := range cases {
		got, e := p.resolve(atFDCWD, c.path, c.follow)
		if c.want == "" {
			require.Equal(t, c.errno, e, "%.40s", c.path)
			continue
		}
		require.Zero(t, e, c.path)
		require.Equal(t, filepath.Join(root, c.want), got, c.path)
		require.True(t, inside(root, got), "%s resolved outside the root: %s", c.path, got)
	}
	// A directory descriptor's lookups stay inside too.
	dfd := p.install(&openFile{kind: kindDir, path: root + "/d"}, 0, false)
	got, e := p.resolve(dfd, "../../../../etc/passwd", true)
	require.Zero(t, e)
	require.Equal(t, root+"/etc/passwd", got)
	// /proc/self/root names the guest's root, not the host's.
	link, ok := p.procLink("/proc/self/root")
	require.True(t, ok)
	require.Equal(t, "/", link)
	// The working directory is the root; getcwd says "/".
	require.Equal(t, "/", p.guestPath(p.cwd))
}

// TestReadOnly: under --read-only every change to the file system is
// EROFS, and reading still works.
func TestReadOnly(t *testing.T) {
	p, root, _ := rootProcess(t, true)
	const page = 0x7000_0000
	require.NoError(t, p.Mem.Map(page, 0x1000, cpu.PermRW))
	str := func(s string) uint64 {
		require.NoError(t, p.Mem.Poke(page, append([]byte(s), 0)))
		return page
	}
	rofs := errno(EROFS)
	require.Equal(t, rofs, sysOpenat(p, [6]uint64{atFDCWD, str("/etc/passwd"), oWronly}))
	require.Equal(t, rofs, sysOpenat(p, [6]uint64{atFDCWD, str("/new"), oRdonly | oCreat, 0o644}))
	require.Equal(t, rofs, sysMkdirat(p, [6]uint64{atFDCWD, str("/dir"), 0o755}))
	require.Equal(t, rofs, sysUnlinkat(p, [6]uint64{atFDCWD, str("/etc/passwd"), 0}))
	require.Equal(t, rofs, sysFchmodat(p, [6]uint64{atFDCWD, str("/etc/passwd"), 0o600}))
	require.Equal(t, rofs, sysTruncate(p, [6]uint64{str("/etc/passwd"), 0}))
	fd := sysOpenat(p, [6]uint64{atFDCWD, str("/etc/passwd"), oRdonly})
	require.Less(t, int64(fd), int64(1024))
	require.Equal(t, uint64(11), sysRead(p, [6]uint64{fd, page, 100}))
	require.FileExists(t, root+"/etc/passwd")
	require.NoDirExists(t, root+"/dir")
}

func inside(root, host string) bool {
	rel, err := filepath.Rel(root, host)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// FuzzResolvePath: random paths through a random tree of links never
// resolve outside the root.
func FuzzResolvePath(f *testing.F) {
	f.Add("/d/up/../../x", "../..", "/", uint8(1))
	f.Add("a/b/../../..", "/..", "../../..", uint8(0))
	f.Add("/d/l1/l2/..", "l2", "../../../..", uint8(3))
	f.Fuzz(func(t *testing.T, path, t1, t2 string, dirfd uint8) {
		if strings.ContainsRune(path+t1+t2, 0) || len(t1) > 200 || len(t2) > 200 {
			return
		}
		base := t.TempDir()
		root := filepath.Join(base, "root")
		require.NoError(t, os.MkdirAll(root+"/d/e", 0o755))
		os.Symlink(t1, root+"/d/l1")
		os.Symlink(t2, root+"/d/e/l2")
		os.Symlink(base, root+"/d/host")
		prog := elftest.Code(elf.EM_AARCH64, binary.LittleEndian, elftest.Words(binary.LittleEndian, 0xd2800bc8, 0xd4000001), nil)
		p, err := NewProcess("prog", prog, Config{Root: root})
		require.NoError(t, err)
		fd := atFDCWD
		if dirfd&1 != 0 {
			fd = p.install(&openFile{kind: kindDir, path: root + "/d/e"}, 0, false)
		}
		for _, follow := range []bool{true, false} {
			got, e := p.resolve(fd, path, follow)
			if e != 0 {
				continue
			}
			// Follow whatever link is left at the end, as the host would.
			real := got
			if r, err := filepath.EvalSymlinks(got); err == nil && follow {
				real = r
			}
			if !inside(root, got) || (follow && !inside(root, real)) {
				t.Fatalf("%q (follow %v) resolved to %q (%q), outside %q", path, follow, got, real, root)
			}
		}
	})
}
