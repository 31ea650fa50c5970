package fileindex

import (
	"context"
	"slices"
	"testing"
)

// TestUpdateIndex is §8.8 "Update index": P0 and P1, regular Id, Version,
// Value; the main table holds each file's distinct values.
func TestUpdateIndex(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("upd", updT1S, "csv", map[string]string{"header": "true"})
	p0, p1 := updDataURI(t, "table1_part0.csv"), updDataURI(t, "table1_part1.csv")
	updAddFiles(t, ix, p0, p1)
	for _, c := range []string{"Id", "Version", "Value"} {
		if err := ix.AddIndex(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	fi := e.fi(ix)
	res := updMust(t, fi)
	if res.NewFiles != 2 || res.Batches != 1 || res.Consolidations != 1 {
		t.Fatalf("result %+v", res)
	}
	got := updMainTable(t, ix)
	want := map[string]map[string]string{
		p0: {"Id": "[1,2,3]", "Version": "[1,2]", "Value": "[3,4,4.5,5]"},
		p1: {"Id": "[1,3,4]", "Version": "[1,2,3]", "Value": "[2,4,5,9]"},
	}
	if len(got) != 2 {
		t.Fatalf("main table files %v", updSortedKeys(got))
	}
	for fn, cols := range want {
		for c, v := range cols {
			if got[fn][c] != v {
				t.Errorf("%s %s = %s, want %s", fn, c, got[fn][c], v)
			}
		}
	}
	// file_size is the file's size and the total is their sum (§5.15).
	var sum int64
	for _, fn := range []string{p0, p1} {
		sz := updFileSize(t, fn)
		if got[fn][FileSizeColumn] != updItoa(sz) {
			t.Errorf("%s file_size %s, want %d", fn, got[fn][FileSizeColumn], sz)
		}
		sum += sz
	}
	if err := ix.RefreshMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	m := ix.Metadata()
	if m.TotalIndexedFileSize != sum || m.BatchesSinceCompact != 1 {
		t.Errorf("metadata total %d (want %d), batches %d", m.TotalIndexedFileSize, sum, m.BatchesSinceCompact)
	}
	// Staging is gone after a successful update (§5.3.7).
	if v := updTableVersion(t, ix.Root(), ix.Paths().Staging); v != -1 {
		t.Errorf("staging survived at version %d", v)
	}
	// A second update is a no-op: no new commit on index/ (§5.4).
	before := updTableVersion(t, ix.Root(), ix.Paths().Main)
	res = updMust(t, fi)
	if res.Batches != 0 || res.NewFiles != 0 || res.Consolidations != 0 {
		t.Errorf("second update did work: %+v", res)
	}
	if after := updTableVersion(t, ix.Root(), ix.Paths().Main); after != before {
		t.Errorf("second update committed: version %d → %d", before, after)
	}
}

// TestUpdateBuildLocate runs §8.8's locate assertions on an index built by
// Update, end to end with the query side, and checks the progress events.
func TestUpdateBuildLocate(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("e2e", updT1S, "csv", map[string]string{"header": "true"})
	p0, p1 := updDataURI(t, "table1_part0.csv"), updDataURI(t, "table1_part1.csv")
	updAddFiles(t, ix, p0, p1)
	for _, c := range []string{"Id", "Version", "Value"} {
		must(t, ix.AddIndex(ctx, c))
	}
	var events []Progress
	cfg := e.cfg
	fi := New(ix, Options{Config: &cfg, Progress: func(p Progress) { events = append(events, p) }})
	updMust(t, fi)
	last := map[string]Progress{}
	for _, p := range events {
		last[p.Phase] = p
	}
	if a := last["read"]; a.Done != 2 || a.Total != 2 || a.Bytes != updFileSize(t, p0)+updFileSize(t, p1) {
		t.Errorf("last read event %+v", a)
	}
	if a := last["summarize"]; a.Done != 2 || a.Total != 2 || a.Bytes != updFileSize(t, p0)+updFileSize(t, p1) {
		t.Errorf("last summarize event %+v", a)
	}
	if b := last["stage"]; b.Done != 1 || b.Total != 1 || b.Bytes != updFileSize(t, p0)+updFileSize(t, p1) {
		t.Errorf("last stage event %+v", b)
	}
	if c := last["merge"]; c.Done != 1 {
		t.Errorf("last merge event %+v", c)
	}
	tests := []struct {
		q    Query
		want []string
	}{
		{Query{"Version": {"3"}, "Id": {"1"}}, []string{p1}},
		{Query{"Value": {4.5}}, []string{p0}},
		{Query{"Value": {-1}}, nil},
		{Query{"Id": {1}}, []string{p0, p1}},
	}
	for _, tc := range tests {
		got, err := fi.Locate(ctx, tc.q)
		must(t, err)
		if len(got) != len(tc.want) || (len(got) > 0 && !slices.Equal(got, tc.want)) {
			t.Errorf("locate %v = %v, want %v", tc.q, got, tc.want)
		}
	}
}
