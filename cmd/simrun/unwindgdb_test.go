package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	againstRE  = regexp.MustCompile(`(?m)^against gdb \((GNU gdb .*)\): (\d+) points, (.*), at most (\d+)$`)
	agreeRE    = regexp.MustCompile(`(?m)^  agree: (\d+), disagree: (\d+)$`)
	progInsnRE = regexp.MustCompile(`(?m)^program: (\d+) instructions`)
)

// againstGDB runs simrun unwind check --against gdb and returns its
// status, report, points, agreements and disagreements.
func againstGDB(t *testing.T, args ...string) (st int, out string, points, agree, disagree int) {
	t.Helper()
	st, out, errOut := run(t, append([]string{"unwind", "check", "--against", "gdb"}, args...)...)
	m := againstRE.FindStringSubmatch(out)
	require.NotNil(t, m, "no gdb section:\n%s\n%s", out, errOut)
	a := agreeRE.FindStringSubmatch(out)
	require.NotNil(t, a, out)
	points, _ = strconv.Atoi(m[2])
	agree, _ = strconv.Atoi(a[1])
	disagree, _ = strconv.Atoi(a[2])
	require.Equal(t, points, agree+disagree, out)
	return st, out, points, agree, disagree
}

// TestUnwindAgainstGDB: gdb-multiarch's backtraces through simrun's stub
// equal the truth at every function entry of fib and at every 97th
// instruction (prologues, epilogues, leaf code) on both architectures;
// the points are where the flags put them; and a disagreement is seen
// and reported when there is one: arm64 return addresses signed by
// pointer authentication that gdb can only strip when the target
// describes the PAC masks (--pauth, docs/gdb.md).
func TestUnwindAgainstGDB(t *testing.T) {
	requireGDB(t)
	for _, arch := range []string{"aarch64", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			prog := "../../programs/bin/" + arch + "-O2/fib"
			st, out, points, agree, _ := againstGDB(t, "--against-calls", "1", "--against-max", "40", prog, "12")
			require.Equal(t, 0, st, out)
			require.Equal(t, 40, points, out)
			require.Equal(t, 40, agree, out)
			require.Contains(t, out, "at every function's entry")
			require.Regexp(t, `(?m)^    fib_rec\s+\d+ points, 0 disagree$`, out)

			st, out, points, agree, _ = againstGDB(t, "--against-every", "97", "--against-max", "1000", prog, "7")
			require.Equal(t, 0, st, out)
			n, err := strconv.Atoi(progInsnRE.FindStringSubmatch(out)[1])
			require.NoError(t, err)
			require.Equal(t, (n-1)/97, points, "a point every 97 instructions of %d:\n%s", n, out)
			require.Equal(t, points, agree, out)
		})
	}
	t.Run("aarch64/pauth", func(t *testing.T) {
		st, out, points, _, disagree := againstGDB(t, "--pauth", "--against-every", "53", "--against-max", "30",
			"../../programs/bin/aarch64-O2/pacret")
		require.Equal(t, 30, points, out)
		// gdb strips the signed return addresses with the PAC masks the
		// target description has under --pauth (without them it took
		// them as they are: frame 1 wrong at every point).
		require.Equal(t, 0, disagree, out)
		require.Equal(t, 0, st, out)
	})
}

// TestUnwindAgainstGDBReport: the comparison and its report, without gdb.
func TestUnwindAgainstGDBReport(t *testing.T) {
	fs, stop, err := parseSimrunBt("junk\nsimrun-bt n:400f18:build i:400110:inl n:400110:main s:500:?? |outermost\n")
	require.NoError(t, err)
	require.Equal(t, "outermost", stop)
	require.Len(t, fs, 4)
	require.Equal(t, gdbFrame{'i', 0x400110, "inl"}, fs[1])
	for _, c := range []struct {
		truth []uint64
		what  string
	}{
		{[]uint64{0x400f18, 0x400110, 0x500}, ""},
		{[]uint64{0x400f18, 0x400114, 0x500}, "wrong frame 1"},
		{[]uint64{0x400f18, 0x400110, 0x500, 0x600}, "gdb stops after 3 of 4 frames"},
		{[]uint64{0x400f18, 0x400110}, "gdb has 1 frames more than the truth's 2"},
	} {
		p := gdbPoint{truth: c.truth, gdb: fs}
		p.compare()
		require.Equal(t, c.what, p.what, "%x", c.truth)
	}
	for _, bad := range []string{"", "simrun-bt n:400f18:x", "simrun-bt n:zz:x |", "simrun-bt nn:1:x |", "simrun-bt n:1 |"} {
		_, _, err := parseSimrunBt(bad)
		require.Error(t, err, bad)
	}
}

func TestParseMI(t *testing.T) {
	r, err := parseMI(`*stopped,reason="signal-received",signal-name="SIGTRAP",frame={addr="0x0000000000400f18",func="build",args=[{name="n",value="3"}]},thread-id="1",stopped-threads="all"`)
	require.NoError(t, err)
	require.Equal(t, byte('*'), r.Kind)
	require.Equal(t, "stopped", r.Class)
	require.Equal(t, "SIGTRAP", r.get("signal-name"))
	require.Equal(t, "all", r.get("stopped-threads"))
	r, err = parseMI(`~"a \"b\"\\\n\101\t"`)
	require.NoError(t, err)
	require.Equal(t, "a \"b\"\\\nA\t", r.Text)
	r, err = parseMI(`12^error,msg="No registers."`)
	require.NoError(t, err)
	require.Equal(t, "error", r.Class)
	require.Equal(t, "No registers.", r.get("msg"))
	r, err = parseMI("(gdb) ")
	require.NoError(t, err)
	require.Equal(t, byte('('), r.Kind)
	r, err = parseMI(`^done,stack=[frame={level="0"},frame={level="1"}],x=[],y={},z=["a",["b"]]`)
	require.NoError(t, err)
	require.Len(t, r.Results, 4)
	for _, bad := range []string{"", "12", `~"abc`, `~"a"b`, "^", "^done,", "^done,x", `^done,x="a"y`, `^done,x={a="1"`, `^done,x=[`, `^done,x={"a"}`,
		"?what", `~"\400"`, "^done,x=" + strings.Repeat("[", 100) + strings.Repeat("]", 100)} {
		_, err := parseMI(bad)
		require.Error(t, err, "%q", bad)
	}
	require.Equal(t, `"a\"b\\c\n"`, miQuote("a\"b\\c\n"))
}

// FuzzMIRecord: any line gives a record or an error, never a panic; a
// stream record's text quoted back reads as the same text.
func FuzzMIRecord(f *testing.F) {
	for _, s := range []string{`*stopped,reason="exited-normally"`, `~"x\n"`, `^done,stack=[frame={level="0",addr="0x1"}]`, "(gdb) ", `=thread-group-added,id="i1"`, `^done,x=[["a"],{b="c"}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := parseMI(line)
		if err != nil {
			return
		}
		if r.Kind == '~' && !strings.ContainsAny(r.Text, "\r") {
			back, err := parseMI("~" + miQuote(r.Text))
			if err != nil || back.Text != r.Text {
				t.Fatalf("%q: text %q quoted back reads %v %q", line, r.Text, err, back)
			}
		}
	})
}
