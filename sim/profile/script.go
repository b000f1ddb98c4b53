package profile

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"simrun/sim/spe/codes"
)

// WriteScript writes one block of text per sample, in the spirit of perf
// script: stable, one fact per line, so it greps and diffs well.
//
//	listchase  1000 [000]      0.000043210: #12 load LD GP-REG
//	    pc          0x401254 main+0x54 ./src/listchase.c:172 el0 ns=1
//	    va          0x5500800980
//	    pa          0x80000980
//	    latency     total 5 issue 0 xlat 1
//	    data-source L1D (0x0)
//	    events      RETIRED L1D-ACCESS TLB-ACCESS
//	    callchain
//	        0x401254 main+0x54 ./src/listchase.c:172
//	(blank line)
//
// The first line is the command name, pid, cpu, the timestamp in seconds
// of virtual time ("-" without a Timestamp packet), the record number,
// the operation kind and perf's words for the operation type.  The
// others come in this order and only when the record has the packet:
// pc (with the exception level and security state), target (a taken
// branch's target), prev-target (the previous taken branch's target), va,
// pa, latency (the counters present, in cycles), data-source (name and
// raw value), events (perf's names, lowest bit first; "none" when the
// packet is there with no bit set), context (CONTEXTIDR), and the
// callchain, leaf first, one frame a line.
func WriteScript(w io.Writer, r *Recording) error {
	bw := bufio.NewWriter(w)
	comm := r.Summary.Comm
	for i := range r.Samples {
		s := &r.Samples[i]
		ts := "-"
		if s.HasTime {
			ts = fmt.Sprintf("%d.%09d", s.Time/1e9, s.Time%1e9)
		}
		c, pid := comm, r.Summary.PID
		if s.Comm != "" {
			c, pid = s.Comm, s.Pid
		}
		fmt.Fprintf(bw, "%s %5d [%03d] %16s: #%d %s %s\n", c, pid, s.CPU, ts, s.Index, s.Op.Kind, s.Op.Desc)
		field := func(name, format string, args ...any) {
			fmt.Fprintf(bw, "    %-11s %s\n", name, fmt.Sprintf(format, args...))
		}
		field("pc", "%s el%d ns=%d", frameText(s.Frames[0]), s.EL, b2i(s.NS))
		if s.HasTarget {
			field("target", "0x%x", s.Target)
		}
		if s.HasPrevTarget {
			field("prev-target", "0x%x", s.PrevTarget)
		}
		if s.HasVA {
			field("va", "0x%x", s.VA)
		}
		if s.HasPA {
			field("pa", "0x%x", s.PA)
		}
		var lat []string
		for k, name := range []string{"total", "issue", "xlat"} {
			if s.HasLat[k] {
				lat = append(lat, fmt.Sprintf("%s %d", name, s.Lat[k]))
			}
		}
		if len(lat) > 0 {
			field("latency", "%s", strings.Join(lat, " "))
		}
		if s.HasDataSource {
			field("data-source", "%s (0x%x)", codes.DataSourceName(s.DataSource), s.DataSource)
		}
		if s.HasEvents {
			ev := strings.Join(s.EventNames(), " ")
			if ev == "" {
				ev = "none"
			}
			field("events", "%s", ev)
		}
		if s.HasCtx {
			field("context", "0x%x", s.Context)
		}
		bw.WriteString("    callchain\n")
		for _, fr := range s.Frames {
			fmt.Fprintf(bw, "        %s\n", frameText(fr))
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

// frameText is "0xPC func+0xOFF file:line".
func frameText(f Frame) string {
	s := fmt.Sprintf("0x%x %s", f.PC, f.Name())
	if w := f.Where(); w != "" {
		s += " " + w
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
