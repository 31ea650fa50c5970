package main

import (
	"bytes"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bench/rowindexbench"
)

// TestCommittedChartIsCurrent checks that docs/rowindex-bench.svg is the
// rendering of the committed benchmark report, so the chart and the figures
// in docs/rowindex.md come from the same run.
func TestCommittedChartIsCurrent(t *testing.T) {
	rep, err := load(filepath.Join("testdata", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Render(&buf, rep); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "rowindex-bench.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), committed) {
		t.Fatal("docs/rowindex-bench.svg is not the rendering of testdata/report.json; regenerate it (see the command's doc)")
	}
}

// TestBarsFollowTheReport parses the SVG of the committed report and checks
// that there is one bar per drawn result, each as tall as its p50 on the log
// axis, with a whisker reaching its p99.
func TestBarsFollowTheReport(t *testing.T) {
	rep, err := load(filepath.Join("testdata", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Render(&buf, rep); err != nil {
		t.Fatal(err)
	}
	type elem struct {
		XMLName xml.Name
		Class   string `xml:"class,attr"`
		Y       string `xml:"y,attr"`
		Y1      string `xml:"y1,attr"`
		Y2      string `xml:"y2,attr"`
		Height  string `xml:"height,attr"`
		Title   string `xml:"title"`
	}
	var doc struct {
		Elems []elem `xml:",any"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not well-formed SVG: %v", err)
	}
	num := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("bad number %q", s)
		}
		return f
	}
	var bars, whiskers []elem
	for _, e := range doc.Elems {
		switch e.Class {
		case "p50":
			bars = append(bars, e)
		case "p99":
			whiskers = append(whiskers, e)
		}
	}
	var want []rowindexbench.SystemResult
	for _, st := range []string{"local", "latency 2ms", "latency 20ms"} {
		for _, s := range series {
			for _, r := range append(rep.Overview, *rep.Covered) {
				if r.System == s.system && r.Storage == st {
					want = append(want, r)
				}
			}
		}
	}
	if len(want) < 10 || len(bars) != len(want) || len(whiskers) != len(want) {
		t.Fatalf("%d bars and %d whiskers for %d results", len(bars), len(whiskers), len(want))
	}
	for i, r := range want {
		p50, p99 := dur(r.P50MS), dur(r.P99MS)
		top := num(bars[i].Y)
		if math.Abs(top-y(p50)) > 0.1 || math.Abs(top+num(bars[i].Height)-plotBottom) > 0.1 {
			t.Fatalf("%s/%s: bar from %.1f to %.1f, p50 %v is at %.1f", r.System, r.Storage, top, top+num(bars[i].Height), p50, y(p50))
		}
		if math.Abs(num(whiskers[i].Y2)-y(p99)) > 0.1 || math.Abs(num(whiskers[i].Y1)-top) > 0.1 {
			t.Fatalf("%s/%s: whisker %s..%s, want %.1f..%.1f", r.System, r.Storage, whiskers[i].Y1, whiskers[i].Y2, top, y(p99))
		}
	}
}

// TestLogAxis checks the axis: each decade is the same height, from 0.1 ms
// at the bottom to 10 s at the top, and values outside are clamped.
func TestLogAxis(t *testing.T) {
	decade := y(time.Millisecond) - y(10*time.Millisecond)
	for d := yMin; d < yMax; d *= 10 {
		if got := y(d) - y(10*d); math.Abs(got-decade) > 1e-9 || got <= 0 {
			t.Fatalf("decade from %v is %.3f high, want %.3f", d, got, decade)
		}
	}
	if y(yMin) != plotBottom || y(yMax) != plotTop || y(time.Nanosecond) != plotBottom || y(time.Hour) != plotTop {
		t.Fatal("axis ends or clamping wrong")
	}
}
