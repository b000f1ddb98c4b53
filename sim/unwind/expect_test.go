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

	for _, tc := range []struct{ in, want string }{
		{"at=main", "f:1: no reason"},
		{"at=main -- ", "f:1: no reason"},
		{" -- why", "f:1: no condition"},
		{"at -- why", `f:1: "at" is not KEY=VALUE`},
		{"frame=3 -- why", `f:1: unknown condition "frame"`},
		{"method=frames -- why", `f:1: unknown unwind method "frames"`},
		{"entry=main -- why", "f:1: entry=main: want entry=program"},
		{"\nat=[ -- why", "f:2: at=[: bad pattern"},
		{strings.Repeat("x", 70000), "f: bufio.Scanner: token too long"},
	} {
		_, err := ParseExpectations(strings.NewReader(tc.in), "f")
		require.Error(t, err, "%q", tc.in)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.in)
	}
}

func TestExpectationMatches(t *testing.T) {
	names := map[uint64]string{1: "leaf", 2: "mid", 3: "main", 4: "ld.so+0x106e0"}
	name := func(pc uint64) string { return names[pc] }
	truth := []uint64{1, 4, 2, 3}
	assert.True(t, (&Expectation{AtEntry: true}).matches(MethodSFrame, []uint64{0x99, 3}, 1, name, 0x99), "frame 0 at the entry")
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
		{Expectation{AtEntry: true}, MethodSFrame, 1, false}, // frame 0 (1) is not the entry (0x99)
	} {
		assert.Equal(t, tc.want, tc.e.matches(tc.m, truth, tc.k, name, 0x99), "%+v method %v frame %d", tc.e, tc.m, tc.k)
	}
}

func FuzzParseExpectations(f *testing.F) {
	f.Add("method=sframe at=a* row=b via=c -- why\n# c\n\n")
	f.Add("at=[ -- x")
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseExpectations(strings.NewReader(s), "f")
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Reason == "" || e.Method == 0 && e.At == "" && e.Row == "" && e.Via == "" && !e.AtEntry {
				t.Fatalf("accepted an expectation without a reason or a condition: %+v", e)
			}
			e.matches(MethodSFrame, []uint64{1, 2}, 1, func(uint64) string { return "f" }, 1)
		}
	})
}
