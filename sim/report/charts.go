package report

import (
	"fmt"
	"html"
	"html/template"
	"math/bits"
	"sort"
	"strings"

	"simrun/sim/profile"
)

// The charts are inline SVG drawn here, so they show without the page's
// script and a test can read them.  Each has a viewBox and scales to the
// width of its box; every bar carries a <title> for the browser's hover.

// palette is a qualitative palette with neighbours that differ in hue and
// lightness; "other" gets grey.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6"}

const otherColor = "#bab0ac"

func esc(s string) string { return html.EscapeString(s) }

// Count is a name and how often it occurred.
type Count struct {
	Name string
	N    int
}

// counts are m's entries, most frequent first (ties by name).
func counts(m map[string]int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// latBucket is the histogram bucket of a latency: 0, then powers of two
// (1, 2–3, 4–7, …).
func latBucket(v uint16) int { return bits.Len16(v) }

func latBucketLabel(b int) string {
	if b == 0 {
		return "0"
	}
	lo, hi := 1<<(b-1), 1<<b-1
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// latencyHistogram draws the samples' total latencies in power-of-two
// buckets.
func latencyHistogram(samples []profile.Sample) template.HTML {
	var n [17]int
	top, have := 0, 0
	for i := range samples {
		if !samples[i].HasLat[profile.LatTotal] {
			continue
		}
		b := latBucket(samples[i].Lat[profile.LatTotal])
		n[b]++
		top = max(top, b)
		have++
	}
	if have == 0 {
		return `<p class="muted">No sample has a total-latency counter.</p>`
	}
	const w, h, left, bottom, topPad = 560, 230, 44, 46, 18
	nb := top + 1
	bw := float64(w-left-8) / float64(nb)
	maxN := 0
	for _, v := range n[:nb] {
		maxN = max(maxN, v)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" id="chart-latency" viewBox="0 0 %d %d" role="img" aria-label="histogram of total latency">`, w, h)
	ph := float64(h - bottom - topPad)
	fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>`, left, h-bottom, w-4, h-bottom)
	fmt.Fprintf(&sb, `<text x="%d" y="%d" class="tick" text-anchor="end">%d</text>`, left-4, topPad+4, maxN)
	fmt.Fprintf(&sb, `<text x="%d" y="%d" class="tick" text-anchor="end">0</text>`, left-4, h-bottom)
	for b := 0; b < nb; b++ {
		x := float64(left) + float64(b)*bw
		bh := ph * float64(n[b]) / float64(maxN)
		y := float64(h-bottom) - bh
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s cycles: %d samples (%.1f%%)</title></rect>`,
			x+2, y, bw-4, bh, palette[0], latBucketLabel(b), n[b], pct(n[b], have))
		if n[b] > 0 {
			fmt.Fprintf(&sb, `<text x="%.1f" y="%.1f" class="val" text-anchor="middle">%d</text>`, x+bw/2, y-3, n[b])
		}
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d" class="tick" text-anchor="end" transform="rotate(-35 %.1f %d)">%s</text>`,
			x+bw/2+4, h-bottom+14, x+bw/2+4, h-bottom+14, latBucketLabel(b))
	}
	fmt.Fprintf(&sb, `<text x="%d" y="%d" class="lbl" text-anchor="middle">total latency (cycles)</text>`, left+(w-left)/2, h-4)
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

// series is one named, coloured part of a stacked bar.
type series struct {
	Name  string
	Color string
	Href  string // the glossary entry of a term, "" for none
}

// legend draws the series' swatches in rows of at most width units from
// y; it returns the height it used.
func legend(sb *strings.Builder, ss []series, x0, y, width int) int {
	x, rows := x0, 1
	for _, s := range ss {
		wd := 22 + 7*len(s.Name)
		if x+wd > x0+width && x > x0 {
			x, y, rows = x0, y+16, rows+1
		}
		name := esc(s.Name)
		if s.Href != "" {
			fmt.Fprintf(sb, `<a href="%s">`, esc(s.Href))
		}
		fmt.Fprintf(sb, `<rect x="%d" y="%d" width="11" height="11" fill="%s"/><text x="%d" y="%d" class="tick">%s</text>`, x, y, s.Color, x+15, y+10, name)
		if s.Href != "" {
			sb.WriteString(`</a>`)
		}
		x += wd
	}
	return rows * 16
}

// stackedBars draws one horizontal bar per row, split by series; vals[r][s]
// is row r's count of series s.  unit names what is counted.
func stackedBars(id, label string, rows []string, ss []series, vals [][]int, unit string) template.HTML {
	const w, left, barH, gap = 560, 170, 18, 6
	var sb strings.Builder
	var body strings.Builder
	lh := legend(&body, ss, left, 4, w-left-4)
	y0 := lh + 10
	maxN := 0
	for _, r := range vals {
		t := 0
		for _, v := range r {
			t += v
		}
		maxN = max(maxN, t)
	}
	for i, name := range rows {
		y := y0 + i*(barH+gap)
		short := name
		if len([]rune(short)) > 22 {
			short = string([]rune(short)[:21]) + "…"
		}
		fmt.Fprintf(&body, `<text x="%d" y="%d" class="tick fn" text-anchor="end">%s<title>%s</title></text>`, left-6, y+13, esc(short), esc(name))
		x := float64(left)
		t := 0
		for s, v := range vals[i] {
			if v == 0 {
				continue
			}
			bw := float64(w-left-50) * float64(v) / float64(maxN)
			fmt.Fprintf(&body, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s %d %s</title></rect>`,
				x, y, bw, barH, ss[s].Color, esc(name), esc(ss[s].Name), v, unit)
			x += bw
			t += v
		}
		fmt.Fprintf(&body, `<text x="%.1f" y="%d" class="val">%d</text>`, x+4, y+13, t)
	}
	h := y0 + len(rows)*(barH+gap) + 4
	fmt.Fprintf(&sb, `<svg class="chart" id="%s" viewBox="0 0 %d %d" role="img" aria-label="%s">`, esc(id), w, h, esc(label))
	sb.WriteString(body.String())
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

// maxChartFuncs is how many functions the per-function charts show.
const maxChartFuncs = 12

// perFuncChart draws, for the functions with any, the samples' values of
// key (data source names, event names) stacked per function.
func perFuncChart(id, label string, funcs []FuncStats, key func(*FuncStats) map[string]int, unit string, href func(string) string) template.HTML {
	tot := map[string]int{}
	var rows []string
	var maps []map[string]int
	for i := range funcs {
		m := key(&funcs[i])
		if len(m) == 0 {
			continue
		}
		if len(rows) == maxChartFuncs {
			break
		}
		rows = append(rows, funcs[i].Name)
		maps = append(maps, m)
		for k, v := range m {
			tot[k] += v
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var ss []series
	for i, c := range counts(tot) {
		col := otherColor
		if i < len(palette) {
			col = palette[i]
		}
		ss = append(ss, series{Name: c.Name, Color: col, Href: href(c.Name)})
	}
	vals := make([][]int, len(rows))
	for r, m := range maps {
		vals[r] = make([]int, len(ss))
		for s := range ss {
			vals[r][s] = m[ss[s].Name]
		}
	}
	return stackedBars(id, label, rows, ss, vals, unit)
}

// timeline draws the samples over virtual time in columns stacked by
// function (the most sampled ones, the rest as "other").
func timeline(samples []profile.Sample, funcs []FuncStats) template.HTML {
	var last uint64
	have := 0
	for i := range samples {
		if samples[i].HasTime {
			last = max(last, samples[i].Time)
			have++
		}
	}
	if have == 0 {
		return `<p class="muted">The records have no timestamps (record with <code>-e arm_spe/ts_enable=1/</code> to see them over time).</p>`
	}
	const nbins = 40
	var ss []series
	idx := map[string]int{}
	for i := range funcs {
		if funcs[i].Samples == 0 || len(ss) == 6 {
			break
		}
		idx[funcs[i].Name] = len(ss)
		ss = append(ss, series{Name: funcs[i].Name, Color: palette[len(ss)]})
	}
	other := len(ss)
	ss = append(ss, series{Name: "other", Color: otherColor})
	bins := make([][]int, nbins)
	for b := range bins {
		bins[b] = make([]int, len(ss))
	}
	span := last + 1
	for i := range samples {
		s := &samples[i]
		if !s.HasTime {
			continue
		}
		b := int(s.Time * nbins / span)
		k, ok := idx[s.Leaf().FuncName()]
		if !ok {
			k = other
		}
		bins[b][k]++
	}
	maxN := 1
	for _, b := range bins {
		t := 0
		for _, v := range b {
			t += v
		}
		maxN = max(maxN, t)
	}
	const w, left, bottom = 560, 44, 34
	var body strings.Builder
	lh := legend(&body, ss, left, 4, w-left-4)
	top := lh + 14
	h := top + 150 + bottom
	ph := float64(150)
	bw := float64(w-left-8) / nbins
	fmt.Fprintf(&body, `<line x1="%d" y1="%d" x2="%d" y2="%d" class="axis"/>`, left, h-bottom, w-4, h-bottom)
	fmt.Fprintf(&body, `<text x="%d" y="%d" class="tick" text-anchor="end">%d</text>`, left-4, top+4, maxN)
	fmt.Fprintf(&body, `<text x="%d" y="%d" class="tick" text-anchor="end">0</text>`, left-4, h-bottom)
	for b, vs := range bins {
		x := float64(left) + float64(b)*bw
		y := float64(h - bottom)
		from, to := uint64(b)*span/nbins, uint64(b+1)*span/nbins
		for s, v := range vs {
			if v == 0 {
				continue
			}
			bh := ph * float64(v) / float64(maxN)
			y -= bh
			fmt.Fprintf(&body, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%d–%d ns: %s %d samples</title></rect>`,
				x+1, y, bw-2, bh, ss[s].Color, from, to, esc(ss[s].Name), v)
		}
	}
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		x := float64(left) + f*float64(w-left-8)
		anchor := "middle"
		if f == 1 {
			anchor = "end"
		}
		fmt.Fprintf(&body, `<text x="%.1f" y="%d" class="tick" text-anchor="%s">%d</text>`, x, h-bottom+14, anchor, uint64(f*float64(span)))
	}
	fmt.Fprintf(&body, `<text x="%d" y="%d" class="lbl" text-anchor="middle">virtual time (ns)</text>`, left+(w-left)/2, h-4)
	return template.HTML(fmt.Sprintf(`<svg class="chart" id="chart-timeline" viewBox="0 0 %d %d" role="img" aria-label="samples over virtual time">`, w, h) + body.String() + `</svg>`)
}
