package fileindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// snapEnv is an index over generated CSV files on a counted root: id
// (regular, tens of thousands of distinct values, so the snapshot's id
// blocks lie beyond its first read), tag (regular, one file's set in the
// large table), name
// (bloom), val (range) and k (temporal on ts).
type snapEnv struct {
	root *store.Counting
	ix   *index.Index
	cfg  config.Config
	dir  string
}

const snapSchema = `{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"tag","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"val","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"k","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}}]}`

func newSnapEnv(t *testing.T) *snapEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	base, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	e := &snapEnv{root: store.NewCounting(base), cfg: config.Defaults(), dir: t.TempDir()}
	e.cfg.LargeIndexLimit = 10500
	e.cfg.LockRetryInterval = time.Second
	cat := index.NewCatalog(e.root, index.Options{Config: e.cfg})
	st, err := schema.Parse(snapSchema)
	if err != nil {
		t.Fatal(err)
	}
	e.ix, err = cat.Open(ctx, "snap", index.OpenOptions{Schema: st, Format: "csv", ReadOptions: map[string]string{"header": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		e.ix.AddIndex(ctx, "id"), e.ix.AddIndex(ctx, "tag"), e.ix.AddBloomIndex(ctx, "name", 0.01),
		e.ix.AddRangeIndex(ctx, "val"), e.ix.AddTemporalIndex(ctx, "k", "ts"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// addFiles writes files f0..f0+n-1 and updates the index. File 0 has
// 11,000 rows, 5,000 ids and a distinct tag per row (a large set, in the
// large table); the others 10,000 rows, one id each, 3 tags.
func (e *snapEnv) addFiles(t *testing.T, f0, n int) UpdateResult {
	t.Helper()
	var uris []string
	for f := f0; f < f0+n; f++ {
		var b strings.Builder
		b.WriteString("id,tag,name,val,k,ts\n")
		rows := 10000
		if f == 0 {
			rows = 11000
		}
		for r := range rows {
			id, tag := f*10000+r, fmt.Sprintf("t%d", (f+r)%3)
			if f == 0 {
				id, tag = r%5000, fmt.Sprintf("x%d", r)
			}
			fmt.Fprintf(&b, "%d,%s,n%d,%d.5,%d,2024-01-%02d 10:00:00\n",
				id, tag, r%50, f*10+r%7, r%20, 1+(f+r)%28)
		}
		p := filepath.Join(e.dir, fmt.Sprintf("part-%03d.csv", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, "file://"+p)
	}
	ctx := context.Background()
	if _, err := e.ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	res, err := e.fi(false).Update(ctx, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// fi returns a fresh handle: nothing cached, as in a new process.
func (e *snapEnv) fi(scan bool) *FileIndex {
	cfg := e.cfg
	return New(e.ix, Options{Config: &cfg, IgnoreLocateSnapshots: scan})
}

// snapQueries cover every category, absent values and AND.
func snapQueries() []Query {
	return []Query{
		{"id": {int64(7)}},
		{"id": {int64(10001), int64(29999), int64(-5), "20000"}},
		{"id": idRange(0, 50000, 49)},
		{"tag": {"x59"}},
		{"tag": {"x59", "t0"}},
		{"tag": {"t1", "t2"}},
		{"name": {"n3"}},
		{"name": {"nope"}},
		{"val": {0.5}},
		{"val": {"23.5", 41.5}},
		{"k": {5, 19}},
		{"id": {int64(20001)}, "val": {21.5}},
		{"id": {int64(20001)}, "val": {0.5}},
	}
}

func idRange(lo, hi, step int) []any {
	var out []any
	for i := lo; i < hi; i += step {
		out = append(out, int64(i))
	}
	return out
}

// TestLocateSnapshot: a fresh handle answers from the snapshot the update
// wrote, exactly as the scan does, with a bounded number of requests: the
// Delta log, one read of the snapshot's head and one per run of blocks.
func TestLocateSnapshot(t *testing.T) {
	ctx := context.Background()
	e := newSnapEnv(t)
	e.addFiles(t, 0, 3)
	e.addFiles(t, 3, 2) // a second version, so the main table has several data files

	// The cost of learning the version: what any locate pays.
	e.root.Reset()
	tbl, err := delta.Open(ctx, store.Sub(e.root, e.ix.Paths().Main))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logReqs := e.root.Snapshot().Total.Requests

	for _, q := range snapQueries() {
		want, wplan, err := e.fi(true).LocateWithPlan(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if wplan.Snapshot || !strings.Contains(wplan.Note, "scan") {
			t.Fatalf("scan handle: plan %+v", wplan)
		}
		e.root.Reset()
		got, plan, err := e.fi(false).LocateWithPlan(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		reqs := e.root.Snapshot().Total.Requests
		if !slices.Equal(got, want) {
			t.Errorf("%v: snapshot %v, scan %v", q, bases(got), bases(want))
		}
		if !plan.Snapshot || plan.Note != "" || plan.Version != snap.Version() {
			t.Errorf("%v: plan %+v, want the snapshot of version %d", q, plan, snap.Version())
		}
		// Head, at most two coalesced runs of blocks (the keys of a query
		// lie in at most two distant places), and (tag) the large table:
		// its log and one data file.
		limit := int64(3)
		if _, ok := q["tag"]; ok {
			limit = 12 // + the large table's log, commits and one data file
		}
		if plan.SnapshotReads > 3 || reqs > logReqs+limit {
			t.Errorf("%v: %d requests (%d snapshot reads), want ≤ %d + %d", q, reqs, plan.SnapshotReads, logReqs, limit)
		}
	}

	// One key: the head and one block, a few tens of KiB.
	e.root.Reset()
	_, plan, err := e.fi(false).LocateWithPlan(ctx, Query{"id": {int64(39000)}})
	if err != nil {
		t.Fatal(err)
	}
	if plan.SnapshotReads != 2 || plan.SnapshotBytes > locSnapPrefixBytes+2*locSnapBlockBytes {
		t.Errorf("one key: %d reads, %d bytes", plan.SnapshotReads, plan.SnapshotBytes)
	}
	// The scan reads the main table's data files instead.
	e.root.Reset()
	if _, err := e.fi(true).Locate(ctx, Query{"id": {int64(39000)}}); err != nil {
		t.Fatal(err)
	}
	if scan := e.root.Snapshot().Total.Requests; scan <= logReqs+1 {
		t.Errorf("scan: %d requests, expected the data files on top of %d", scan, logReqs)
	}

	// Warm: the first call read one block; the second, in a process that
	// evidently lives on, reads the rest of the column at once; after that
	// nothing is read, whatever the keys.
	fi := e.fi(false)
	if _, plan, err = fi.LocateWithPlan(ctx, Query{"id": {int64(39000), int64(39001)}}); err != nil || plan.SnapshotReads != 2 {
		t.Fatalf("first: %+v %v", plan, err)
	}
	st, err := e.fi(false).locSnapStore().Stat(ctx, locSnapKey(snap.Version()))
	if err != nil {
		t.Fatal(err)
	}
	if _, plan, err = fi.LocateWithPlan(ctx, Query{"id": {int64(7)}}); err != nil || plan.SnapshotReads != 1 || plan.SnapshotBytes < st.Size/2 {
		t.Fatalf("second: %+v (snapshot %d bytes) %v", plan, st.Size, err)
	}
	for _, q := range snapQueries() {
		if _, ok := q["id"]; !ok || len(q) > 1 {
			continue
		}
		if _, plan, err = fi.LocateWithPlan(ctx, q); err != nil || plan.SnapshotReads != 0 {
			t.Errorf("warm %v: %+v %v", q, plan, err)
		}
	}
}

// TestLocateSnapshotFromMemory: the first update builds the snapshot from
// the rows it merged (every index type, a large pair, several merges); a
// later one from the previous version's snapshot and the rows it merged;
// one whose previous snapshot is gone scans. All give the scan's answers,
// and the snapshot lists exactly the table's files (a feed that drops or
// repeats a file fails here).
func TestLocateSnapshotFromMemory(t *testing.T) {
	ctx := context.Background()
	e := newSnapEnv(t)
	e.cfg.StagingConsolidationThreshold = 1 // a merge per batch
	check := func(res UpdateResult, fromMemory bool) {
		t.Helper()
		if res.SnapshotFromMemory != fromMemory {
			t.Fatalf("snapshot from memory: %v, want %v (%+v)", res.SnapshotFromMemory, fromMemory, res)
		}
		fi := e.fi(false)
		snap, err := fi.snapshotMain(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := openLocSnap(ctx, fi.locSnapStore(), snap)
		if err != nil {
			t.Fatal(err)
		}
		files, _, err := ls.files(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{FilenameColumn}}) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, row[0].(string))
		}
		slices.Sort(files)
		slices.Sort(want)
		if !slices.Equal(files, want) {
			t.Fatalf("snapshot lists %d files %v, the table %d %v", len(files), bases(files), len(want), bases(want))
		}
		for _, q := range snapQueries() {
			want, err := e.fi(true).Locate(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, plan, err := e.fi(false).LocateWithPlan(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !plan.Snapshot || !slices.Equal(got, want) {
				t.Errorf("%v: snapshot (%+v) %v, scan %v", q, plan, bases(got), bases(want))
			}
		}
	}
	check(e.addFiles(t, 0, 4), true)
	check(e.addFiles(t, 4, 1), true) // seeded from the first version's snapshot
	check(e.addFiles(t, 5, 2), true)
	// Without the previous version's snapshot the feed cannot hold the
	// table's rows: the snapshot scans.
	fi := e.fi(false)
	for o, err := range fi.locSnapStore().List(ctx, store.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if err := fi.locSnapStore().Delete(ctx, o.Key, nil); err != nil {
			t.Fatal(err)
		}
	}
	check(e.addFiles(t, 7, 1), false)
	check(e.addFiles(t, 8, 1), true)
}

// TestLocateSnapshotStale: a snapshot is used only for the table version
// (and table) it was built from.
func TestLocateSnapshotStale(t *testing.T) {
	ctx := context.Background()
	e := newSnapEnv(t)
	e.addFiles(t, 0, 2)
	st := e.fi(false).locSnapStore()
	v1 := snapVersions(t, st)
	e.addFiles(t, 2, 2)
	v2 := snapVersions(t, st)
	if len(v1) != 1 || len(v2) != 2 || v2[0] != v1[0] {
		t.Fatalf("snapshots %v then %v: want the previous version kept beside the new one", v1, v2)
	}
	latest := v2[1]

	check := func(what, wantNote string) {
		t.Helper()
		for _, q := range snapQueries() {
			want, err := e.fi(true).Locate(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, plan, err := e.fi(false).LocateWithPlan(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %v: %v, scan %v", what, q, bases(got), bases(want))
			}
			if plan.Snapshot || !strings.Contains(plan.Note, wantNote) {
				t.Errorf("%s %v: plan %+v, want a scan because %q", what, q, plan, wantNote)
			}
		}
	}
	// The main table moved on without a snapshot (as the Spark library
	// leaves it): the previous version's snapshot must not be used.
	old, err := store.ReadAll(ctx, st, locSnapKey(v2[0]))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, locSnapKey(latest), nil); err != nil {
		t.Fatal(err)
	}
	check("missing", fmt.Sprintf("no locate snapshot of version %d", latest))
	// Another version's snapshot under the latest version's name.
	if err := store.WriteAll(ctx, st, locSnapKey(latest), old, nil); err != nil {
		t.Fatal(err)
	}
	check("stale", fmt.Sprintf("version %d, the main table is", v2[0]))

	// An update with nothing to do writes the missing snapshot.
	if err := st.Delete(ctx, locSnapKey(latest), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fi(false).Update(ctx, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, plan, err := e.fi(false).LocateWithPlan(ctx, Query{"id": {int64(1)}}); err != nil || !plan.Snapshot {
		t.Errorf("after a no-op update: %+v %v", plan, err)
	}
}

// TestLocateSnapshotCorrupt: damage anywhere in a snapshot falls back to the
// scan with the same answers, whether found on open (header, directory) or
// late (a block, a section).
func TestLocateSnapshotCorrupt(t *testing.T) {
	ctx := context.Background()
	e := newSnapEnv(t)
	e.addFiles(t, 0, 4)
	st := e.fi(false).locSnapStore()
	key := locSnapKey(snapVersions(t, st)[0])
	good, err := store.ReadAll(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		at   int // byte to flip; -1: truncate at half
	}{
		{"magic", 0},
		{"directory", locSnapHeader + 5},
		{"first section", len(good)/3 + 1},
		{"last block", len(good) - 3},
		{"truncated", -1},
	} {
		bad := slices.Clone(good)
		if tc.at < 0 {
			bad = bad[:len(bad)/2]
		} else {
			bad[tc.at] ^= 0x5a
		}
		if err := store.WriteAll(ctx, st, key, bad, nil); err != nil {
			t.Fatal(err)
		}
		fi := e.fi(false) // one handle through every query: damage found late must not stick
		for _, q := range snapQueries() {
			want, err := e.fi(true).Locate(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fi.Locate(ctx, q)
			if err != nil {
				t.Fatalf("%s %v: %v", tc.name, q, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %v: %v, scan %v", tc.name, q, bases(got), bases(want))
			}
		}
		if _, plan, _ := fi.LocateWithPlan(ctx, Query{"id": {int64(1)}}); plan.Snapshot || !strings.Contains(plan.Note, "corrupt") {
			t.Errorf("%s: plan %+v, want the damage reported", tc.name, plan)
		}
	}
}

// TestLocateKeysPerKey: per key answers equal single-key Locates; the
// union of them is the answer for all keys of one column.
func TestLocateKeysPerKey(t *testing.T) {
	ctx := context.Background()
	e := newSnapEnv(t)
	e.addFiles(t, 0, 5) // the id blocks reach beyond the snapshot's first read
	rows := [][]any{{int64(5), 0.5}, {int64(10005), 0.5}, {int64(10005), 10.5}, {int64(-1), 0.5}, {nil, 0.5}, {int64(5), 0.5}}
	res, err := e.fi(false).LocateKeys(ctx, []string{"id", "val"}, rowsSeq(rows), KeysOptions{PerKey: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.PerKey) != 5 || !res.Plan.Snapshot {
		t.Fatalf("%d keys (want 5 distinct), plan %+v", len(res.PerKey), res.Plan)
	}
	var union []string
	for _, kf := range res.PerKey {
		q := Query{"id": {kf.Key[0]}, "val": {kf.Key[1]}}
		want, err := e.fi(true).Locate(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(kf.Files, want) && !(len(want) == 0 && len(kf.Files) == 0) {
			t.Errorf("key %v: %v, Locate %v", kf.Key, bases(kf.Files), bases(want))
		}
		for _, f := range kf.Files {
			if !slices.Contains(union, f) {
				union = append(union, f)
			}
		}
	}
	slices.Sort(union)
	if !slices.Equal(res.Files, union) || len(union) != 2 {
		t.Errorf("union %v, per-key union %v", bases(res.Files), bases(union))
	}
	// Many keys per key: the blocks they need are read together, not one
	// request per key.
	var many [][]any
	for _, id := range idRange(0, 50000, 250) {
		many = append(many, []any{id})
	}
	mres, err := e.fi(false).LocateKeys(ctx, []string{"id"}, rowsSeq(many), KeysOptions{PerKey: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(mres.PerKey) != 200 || mres.Plan.SnapshotReads > 2 {
		t.Errorf("200 keys: %d answers, %d snapshot reads", len(mres.PerKey), mres.Plan.SnapshotReads)
	}
	one, err := e.fi(false).LocateKeys(ctx, []string{"id"}, rowsSeq([][]any{{int64(5)}, {int64(10005)}, {int64(20005)}}), KeysOptions{})
	if err != nil || len(one.Files) != 3 || one.PerKey != nil {
		t.Errorf("union only: %+v %v", one, err)
	}
}

func rowsSeq(rows [][]any) func(func([]any, error) bool) {
	return func(yield func([]any, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// snapVersions lists the versions that have a snapshot, ascending.
func snapVersions(t *testing.T, st store.Store) []int64 {
	t.Helper()
	var out []int64
	for o, err := range st.List(context.Background(), store.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		var v int64
		if _, err := fmt.Sscanf(o.Key, "%d.alocate", &v); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// TestLocateSnapshotConcurrent: goroutines sharing one fresh handle load
// the same snapshot columns and blocks at once (run with -race).
func TestLocateSnapshotConcurrent(t *testing.T) {
	ctx := context.Background()
	e := newSnapEnv(t)
	e.addFiles(t, 0, 5)
	qs := snapQueries()
	want := make([][]string, len(qs))
	for i, q := range qs {
		var err error
		if want[i], err = e.fi(true).Locate(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	fi := e.fi(false)
	errs := make(chan error, 4*len(qs))
	for g := range 4 {
		for i := range qs {
			go func() {
				i := (i + g) % len(qs)
				got, err := fi.Locate(ctx, qs[i])
				if err == nil && !slices.Equal(got, want[i]) {
					err = fmt.Errorf("%v: %v, scan %v", qs[i], bases(got), bases(want[i]))
				}
				errs <- err
			}()
		}
	}
	for range 4 * len(qs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
