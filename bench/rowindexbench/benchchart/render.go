package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/bench/rowindexbench"
)

// Chart geometry, in SVG user units (pixels).
const (
	width        = 960
	height       = 520
	plotLeft     = 70  // room for the y-axis labels
	plotRight    = 760 // the legend sits right of the plot
	plotTop      = 50  // room for the title
	plotBottom   = 460 // room for the storage labels
	groupGap     = 30  // between storage groups
	barGap       = 4   // between bars of one group
	legendLeft   = plotRight + 20
	legendRow    = 22
	legendSwatch = 14
)

// The y axis spans whole decades from 0.1 ms to 10 s: the fastest covered
// lookups (≈0.5 ms p50) and the slowest scans (DuckDB p99 ≈ 3 s) both fit,
// with a decade of headroom on either side.
var (
	yMin = 100 * time.Microsecond
	yMax = 10 * time.Second
)

// series are the systems drawn, in bar order, with their colours; a result
// whose System is not listed is not drawn.
var series = []struct {
	system, label, color string
}{
	{"parquet-go standard reader", "parquet-go standard reader", "#9e9e9e"},
	{"DuckDB scan", "DuckDB scan", "#f2a900"},
	{"row index (cold)", "row index, cold", "#90caf9"},
	{"row index (warm)", "row index, warm", "#1e88e5"},
	{"row index (covered, warm)", "row index, covered (0 data reads)", "#0d47a1"},
}

// y maps a latency to its vertical position on the log axis.
func y(d time.Duration) float64 {
	d = min(max(d, yMin), yMax)
	f := math.Log10(float64(d)/float64(yMin)) / math.Log10(float64(yMax)/float64(yMin))
	return plotBottom - f*(plotBottom-plotTop)
}

// Render writes rep as an SVG bar chart: for each storage (local disk, then
// each injected latency), one bar per system up to its p50 latency, with a
// thin whisker from p50 to p99, on a log scale.
func Render(w io.Writer, rep *rowindexbench.Report) error {
	results := slices.Clone(rep.Overview)
	if rep.Covered != nil {
		results = append(results, *rep.Covered)
	}
	var storages []string
	for _, r := range results {
		if r.Storage != "" && !slices.Contains(storages, r.Storage) {
			storages = append(storages, r.Storage)
		}
	}
	if len(storages) == 0 {
		return fmt.Errorf("benchchart: the report has no results")
	}
	find := func(system, storage string) (rowindexbench.SystemResult, bool) {
		for _, r := range results {
			if r.System == system && r.Storage == storage && r.Lookups > 0 {
				return r, true
			}
		}
		return rowindexbench.SystemResult{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">Lookup by user_id, %d files, %.0f MB, %s: bar = p50, whisker = p99</text>`+"\n",
		plotLeft, rep.Lake.Files, float64(rep.Lake.DataBytes)/1e6, rep.Description)
	// Decade grid lines and labels.
	for d := yMin; d <= yMax; d *= 10 {
		yy := y(d)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e0e0e0"/>`+"\n", plotLeft, yy, plotRight, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotLeft-6, yy, d)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	groupW := (float64(plotRight-plotLeft) - groupGap*float64(len(storages)+1)) / float64(len(storages))
	barW := (groupW - barGap*float64(len(series)-1)) / float64(len(series))
	for gi, st := range storages {
		x0 := plotLeft + groupGap + float64(gi)*(groupW+groupGap)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+groupW/2, plotBottom+20, storageLabel(st))
		for si, s := range series {
			r, ok := find(s.system, st)
			if !ok {
				continue
			}
			x := x0 + float64(si)*(barW+barGap)
			p50d, p99d := dur(r.P50MS), dur(r.P99MS)
			top := y(p50d)
			fmt.Fprintf(&b, `<rect class="p50" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: p50 %v, p99 %v, %s</title></rect>`+"\n",
				x, top, barW, plotBottom-top, s.color, s.label, st, p50d.Round(time.Microsecond), p99d.Round(time.Microsecond), requests(r))
			cx, p99 := x+barW/2, y(p99d)
			fmt.Fprintf(&b, `<line class="p99" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", cx, top, cx, p99)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", cx-barW/4, p99, cx+barW/4, p99)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n", cx, min(top, p99)-4, short(p50d))
		}
	}
	for si, s := range series {
		yy := plotTop + si*legendRow
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", legendLeft, yy, legendSwatch, legendSwatch, s.color)
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", legendLeft+legendSwatch+6, yy+legendSwatch/2, s.label)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#555">2 shared cores; latency = injected per request (store.NewFaulty).</text>`+"\n", plotLeft, plotBottom+44)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func storageLabel(s string) string {
	if s == "local" {
		return "local disk"
	}
	return strings.Replace(s, "latency ", "", 1) + " per request"
}

func requests(r rowindexbench.SystemResult) string {
	if r.RequestsPerLookup == nil {
		return "requests not observable"
	}
	return fmt.Sprintf("%.1f requests, %.0f bytes per lookup", *r.RequestsPerLookup, *r.BytesPerLookup)
}

// dur converts the report's milliseconds to a duration (to the nanosecond
// the report was measured in).
func dur(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// short formats a latency with two or three significant digits.
func short(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0fms", float64(d)/1e6)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
}
