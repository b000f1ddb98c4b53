package profile

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Weight is what a folded stack counts.
type Weight uint8

const (
	WeightSamples Weight = iota // one per sample
	WeightTotal                 // total latency, cycles
	WeightIssue                 // issue latency, cycles
	WeightXlat                  // translation latency, cycles
)

var weightNames = []string{"samples", "total", "issue", "xlat"}

func (w Weight) String() string { return weightNames[w] }

// ParseWeight reads a weight name: samples, total, issue or xlat.
func ParseWeight(s string) (Weight, error) {
	for i, n := range weightNames {
		if s == n {
			return Weight(i), nil
		}
	}
	return 0, fmt.Errorf("unknown weight %q (want %s)", s, strings.Join(weightNames, ", "))
}

// Value is the sample's weight.
func (s *Sample) Value(w Weight) uint64 {
	if w == WeightSamples {
		return 1
	}
	return uint64(s.Lat[w-1])
}

// Folded aggregates the samples into folded stacks: the function names of
// each callchain from the root to the sampled function, joined by ';',
// and the summed weight.  Stacks whose weight is 0 are left out.  The
// result is sorted by stack.
func Folded(samples []Sample, w Weight) []FoldedStack { return FoldedThreads(samples, w, "") }

// FoldedThreads is Folded with each stack rooted at its thread when comm
// is not "": a first frame "COMM-TID" (perf script's comm and tid, joined
// as flame graphs of perf script output name a thread), the tid the
// record's CONTEXT packet names (the process's when it has none).
func FoldedThreads(samples []Sample, w Weight, comm string) []FoldedStack {
	sum := map[string]uint64{}
	for i := range samples {
		s := &samples[i]
		if v := s.Value(w); v > 0 {
			stack := s.Stack(";")
			if comm != "" {
				c := comm
				if s.Comm != "" {
					c = s.Comm // a run of several processes: the sample's own
				}
				stack = fmt.Sprintf("%s-%d;%s", c, s.Tid(), stack)
			}
			sum[stack] += v
		}
	}
	out := make([]FoldedStack, 0, len(sum))
	for k, v := range sum {
		out = append(out, FoldedStack{Stack: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stack < out[j].Stack })
	return out
}

// FoldedStack is one line of folded output.
type FoldedStack struct {
	Stack string
	Value uint64
}

// WriteFolded writes folded stacks, one "root;...;leaf N" line each, as
// flamegraph.pl and speedscope read them.
func WriteFolded(w io.Writer, samples []Sample, weight Weight) error {
	return WriteFoldedThreads(w, samples, weight, "")
}

// WriteFoldedThreads writes FoldedThreads stacks.
func WriteFoldedThreads(w io.Writer, samples []Sample, weight Weight, comm string) error {
	bw := bufio.NewWriter(w)
	for _, f := range FoldedThreads(samples, weight, comm) {
		fmt.Fprintf(bw, "%s %d\n", f.Stack, f.Value)
	}
	return bw.Flush()
}
