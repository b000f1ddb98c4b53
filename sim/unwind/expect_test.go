package unwind

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseExpectations(t *testing.T) {
	es, err := ParseExpectations(strings.NewReader(`# known
method=eh_frame at=__longjmp row=__longjmp -- the jmp_buf's frame

via=ld-*.so.1+0x106[d-f]? -- lazy binding's trampoline
`), "f")
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, Expectation{Method: MethodEHFrame, At: "__longjmp", Row: "__longjmp", Reason: "the jmp_buf's frame", Line: 2}, *es[0])
	assert.Equal(t, "ld-*.so.1+0x106[d-f]?", es[1].Via)
	assert.Equal(t, 4, es[1].Line)
	es, err = ParseExpectations(strings.NewReader("method=eh_frame cfa=x0 -- longjmp\npc=busybox+0x1119f8[0-4] -- longjmp_chk\n"), "f")
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, Expectation{Method: MethodEHFrame, CFA: "x0", Reason: "longjmp", Line: 1}, *es[0])
	assert.Equal(t, "busybox+0x1119f8[0-4]", es[1].PC)

	for _, tc := range []struct{ in, want string }{
		{"at=main", "f:1: no reason"},
		{"at=main -- ", "f:1: no reason"},
		{" -- why", "f:1: no condition"},
		{"at -- why", `f:1: "at" is not KEY=VALUE`},
		{"frame=3 -- why", `f:1: unknown condition "frame"`},
		{"method=frames -- why", `f:1: unknown unwind method "frames"`},
		{"entry=main -- why", "f:1: entry=main: want entry=program or entry=start"},
		{"\nat=[ -- why", "f:2: at=[: bad pattern"},
		{"pc=[ -- why", "f:1: pc=[: bad pattern"},
		{strings.Repeat("x", 70000), "f: bufio.Scanner: token too long"},
	} {
		_, err := ParseExpectations(strings.NewReader(tc.in), "f")
		require.Error(t, err, "%q", tc.in)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.in)
	}
}

func TestExpectationMatches(t *testing.T) {
	names := map[uint64]string{1: "leaf", 2: "mid", 3: "main", 4: "ld.so+0x106e0"}
	env := &matchEnv{name: func(pc uint64) string { return names[pc] }, entry: 0x99,
		linkName: func(pc uint64) string {
			if pc == 1 {
				return "prog+0x401000"
			}
			return ""
		},
		// frame 1 (ld.so's trampoline) computes its CFA from x0
		cfaReg: func(i int) (string, string, bool) {
			switch i {
			case 0:
				return "sp", "r31", true
			case 1:
				return "x0", "r0", true
			}
			return "", "", false
		}}
	at := func(pc uint64) *matchEnv { e := *env; e.entry = pc; return &e }
	assert.True(t, (&Expectation{AtEntry: 1}).matches(MethodSFrame, []uint64{0x99, 3}, 1, env), "frame 0 at the entry")
	assert.False(t, (&Expectation{AtEntry: 1}).matches(MethodSFrame, []uint64{0x9d, 3}, 1, env), "frame 0 past the entry")
	assert.True(t, (&Expectation{AtEntry: 64}).matches(MethodSFrame, []uint64{0x99 + 0x38, 3}, 1, env), "frame 0 in _start")
	assert.False(t, (&Expectation{AtEntry: 64}).matches(MethodSFrame, []uint64{0x99 + 0x40, 3}, 1, env), "frame 0 past _start")
	assert.False(t, (&Expectation{AtEntry: 64}).matches(MethodSFrame, []uint64{0x98, 3}, 1, at(0x99)), "frame 0 before the entry")
	truth := []uint64{1, 4, 2, 3}
	for _, tc := range []struct {
		e    Expectation
		m    Method
		k    int
		want bool
	}{
		{Expectation{At: "leaf"}, MethodSFrame, 2, true},
		{Expectation{At: "mid"}, MethodSFrame, 2, false},
		{Expectation{Row: "ld.so+*"}, MethodSFrame, 2, true},  // frame 1 stepped to the wrong frame 2
		{Expectation{Row: "ld.so+*"}, MethodSFrame, 3, false}, // frame 2 (mid) did
		{Expectation{Row: "leaf"}, MethodSFrame, 0, false},    // frame 0 has no row before it
		{Expectation{Via: "ld.so+0x106[d-f]?"}, MethodEHFrame, 3, true},
		{Expectation{Via: "ld.so+0x106[d-f]?"}, MethodEHFrame, 1, false}, // only frame 0 comes before the wrong one
		{Expectation{Method: MethodEHFrame, At: "leaf"}, MethodSFrame, 2, false},
		{Expectation{Method: MethodEHFrame, At: "leaf"}, MethodEHFrame, 2, true},
		{Expectation{AtEntry: 1}, MethodSFrame, 1, false}, // frame 0 (1) is not the entry (0x99)
		{Expectation{PC: "prog+0x401000"}, MethodSFrame, 2, true},
		{Expectation{PC: "prog+0x40100[0-3]"}, MethodSFrame, 1, true},
		{Expectation{PC: "prog+0x401004"}, MethodSFrame, 2, false},
		{Expectation{PC: "*"}, MethodSFrame, 2, true},
		{Expectation{CFA: "x0"}, MethodEHFrame, 2, true},  // frame 1's row stepped to frame 2
		{Expectation{CFA: "r0"}, MethodEHFrame, 2, true},  // the same register by DWARF number
		{Expectation{CFA: "x0"}, MethodEHFrame, 1, false}, // frame 0's row (sp) stepped to frame 1
		{Expectation{CFA: "sp"}, MethodEHFrame, 1, true},
		{Expectation{CFA: "x0"}, MethodEHFrame, 3, false}, // frame 2 has no row
		{Expectation{CFA: "x0"}, MethodEHFrame, 0, false}, // no row before frame 0
	} {
		assert.Equal(t, tc.want, tc.e.matches(tc.m, truth, tc.k, env), "%+v method %v frame %d", tc.e, tc.m, tc.k)
	}
	noPC := *env
	noPC.linkName = func(uint64) string { return "" }
	assert.False(t, (&Expectation{PC: "*"}).matches(MethodSFrame, truth, 1, &noPC), "pc= without an object for the pc")
}

func FuzzParseExpectations(f *testing.F) {
	f.Add("method=sframe at=a* row=b via=c -- why\n# c\n\n")
	f.Add("pc=busybox+0x1119f84 cfa=x0 -- why")
	f.Add("at=[ -- x")
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseExpectations(strings.NewReader(s), "f")
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Reason == "" || e.Method == 0 && e.At == "" && e.Row == "" && e.Via == "" && e.AtEntry == 0 && e.PC == "" && e.CFA == "" {
				t.Fatalf("accepted an expectation without a reason or a condition: %+v", e)
			}
			e.matches(MethodSFrame, []uint64{1, 2}, 1, &matchEnv{name: func(uint64) string { return "f" }, entry: 1})
		}
	})
}
