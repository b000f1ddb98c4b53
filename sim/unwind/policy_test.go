package unwind_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simrun/sim/unwind"
)

func TestParsePolicy(t *testing.T) {
	def := unwind.DefaultPolicy()
	assert.Equal(t, "lookup=ra,topmost=enforce,depth=127,gap=stop,pac=strip,signal=stop", def.String())
	for _, tc := range []struct {
		in, want, err string
	}{
		{"", "lookup=ra,topmost=enforce,depth=127,gap=stop,pac=strip,signal=stop", ""},
		{"default", "lookup=ra,topmost=enforce,depth=127,gap=stop,pac=strip,signal=stop", ""},
		{"lookup=ra-1", "lookup=ra-1,topmost=enforce,depth=127,gap=stop,pac=strip,signal=stop", ""},
		{" topmost=ignore , depth=8 ", "lookup=ra,topmost=ignore,depth=8,gap=stop,pac=strip,signal=stop", ""},
		{"gap=fp,pac=keep", "lookup=ra,topmost=enforce,depth=127,gap=fp,pac=keep,signal=stop", ""},
		{"lookup=ra-1,topmost=ignore,depth=1,gap=fp,pac=keep,signal=stop", "lookup=ra-1,topmost=ignore,depth=1,gap=fp,pac=keep,signal=stop", ""},
		{"signal=frame", "lookup=ra,topmost=enforce,depth=127,gap=stop,pac=strip,signal=frame", ""},
		{"signal=skip", "", "want stop or frame"},
		{"lookup", "", "want key=value"},
		{"lookup=ra-2", "", "lookup=ra-2: want ra or ra-1"},
		{"depth=0", "", "depth=0: want a number of frames from 1 to 65536"},
		{"depth=x", "", "depth=x"},
		{"gap=skip", "", "want stop or fp"},
		{"pac=sign", "", "want strip or keep"},
		{"topmost=yes", "", "want enforce or ignore"},
		{"color=red", "", `unknown switch "color"`},
		{"depth=3,depth=4", "", "depth given twice"},
	} {
		p, err := unwind.ParsePolicy(tc.in)
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, p.String(), tc.in)
		again, err := unwind.ParsePolicy(p.String())
		require.NoError(t, err)
		assert.Equal(t, p, again, "String parses back")
	}
}

// TestPolicyDocs: every switch value ParsePolicy takes is documented with
// who behaves that way, exactly one default per key.
func TestPolicyDocs(t *testing.T) {
	defaults := map[string]int{}
	for _, sw := range unwind.PolicySwitches {
		assert.NotEmpty(t, sw.What, sw.Key)
		assert.NotEmpty(t, sw.Who, sw.Key)
		if sw.Default {
			defaults[sw.Key]++
		}
		if sw.Value == "N" {
			continue
		}
		_, err := unwind.ParsePolicy(sw.Key + "=" + sw.Value)
		assert.NoError(t, err, "%s=%s", sw.Key, sw.Value)
	}
	for _, key := range []string{"lookup", "topmost", "gap", "pac"} {
		assert.Equal(t, 1, defaults[key], "defaults of %s", key)
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", "default", "lookup=ra-1,topmost=ignore", "depth=9999", "gap=fp,pac=keep,depth=1", "a=b=c", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := unwind.ParsePolicy(s)
		if err != nil {
			if !strings.Contains(err.Error(), "unwind policy") {
				t.Fatalf("error %q does not say what it is about", err)
			}
			return
		}
		if p.MaxDepth < 1 || p.MaxDepth > 1<<16 {
			t.Fatalf("%q: depth %d", s, p.MaxDepth)
		}
		again, err := unwind.ParsePolicy(p.String())
		if err != nil || again != p {
			t.Fatalf("%q: String %q does not parse back (%v)", s, p.String(), err)
		}
	})
}
