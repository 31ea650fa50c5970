package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// fixture is a small lake with one row index.
type fixture struct {
	dir   string
	data  *store.Counting
	idx   store.Store
	uris  []string
	files []lakegen.File
	ri    *RowIndex
}

func newFixture(t *testing.T, sorted bool, def Definition) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, files := testLake(t, dir, sorted)
	idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", "plays"))
	if err != nil {
		t.Fatal(err)
	}
	cs := store.NewCounting(data)
	if _, _, err := Create(ctx, idx, def, StoreResolver{cs}, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, def.Name, Options{Resolver: StoreResolver{cs}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{dir: dir, data: cs, idx: idx, uris: uris, files: files, ri: ri}
}

func hot(r uint64) int64 { return lakegen.UserID(r) }

func TestWarmLookupIsOneRequestPerFile(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, true, Definition{Name: "u", Key: "user_id"})
	// The object-storage gap: one request per file (the local default
	// trades requests for bytes; see below).
	ri, err := Open(ctx, fx.idx, "u", Options{Resolver: StoreResolver{fx.data}, CoalesceGap: DefaultCoalesceGap})
	if err != nil {
		t.Fatal(err)
	}
	fx.ri = ri
	if _, err := fx.ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	lri, err := Open(ctx, fx.idx, "u", Options{Resolver: StoreResolver{fx.data}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{hot(0), hot(3), hot(50), hot(1500)} {
		// The local gap (64 KiB) reads no more bytes than the remote one.
		lr, err := lri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		rr, err := fx.ri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		if lr.Plan.Data.BytesRead > rr.Plan.Data.BytesRead || len(lr.Rows) != len(rr.Rows) {
			t.Errorf("key %d: local gap read %d bytes (%d rows), remote gap %d bytes (%d rows)", k,
				lr.Plan.Data.BytesRead, len(lr.Rows), rr.Plan.Data.BytesRead, len(rr.Rows))
		}
		// First lookup caches the dictionary pages it needs.
		if _, err := fx.ri.Lookup(ctx, Query{Key: k}); err != nil {
			t.Fatal(err)
		}
		fx.data.Reset()
		res, err := fx.ri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]bool{}
		for _, r := range res.Rows {
			files[r.File] = true
		}
		p := res.Plan
		if p.Index.Requests != 0 || p.Data.Misses != 0 {
			t.Errorf("key %d warm: index requests %d, misses %d", k, p.Index.Requests, p.Data.Misses)
		}
		if p.Data.Requests > int64(len(files)) {
			t.Errorf("key %d warm: %d data requests for %d files", k, p.Data.Requests, len(files))
		}
		if got := fx.data.Snapshot().Total.Requests; got != p.Requests() {
			t.Errorf("key %d: the store saw %d requests, the plan says %d", k, got, p.Requests())
		}
		if fx.data.Snapshot().Read.Bytes != p.Data.BytesRead {
			t.Errorf("key %d: the store sent %d bytes, the plan says %d", k, fx.data.Snapshot().Read.Bytes, p.Data.BytesRead)
		}
		if len(res.Rows) == 0 {
			t.Errorf("key %d: no rows", k)
		}
	}
}

func TestCoveredAndFilteredLookups(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, false, Definition{Name: "u", Key: "user_id", Cover: []string{"duration_ms", "track_uri"},
		Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}, {Op: "max", Column: "duration_ms"}, {Op: "count-by", Column: "track_uri"}}})
	k := hot(2)
	kb, _ := EncodeKey(k)
	want := fullScan(t, fx.dir, fx.uris, "user_id", kb, kb)
	durCol, trackCol := 3, 2 // leaf order of lakegen.Listen
	valueAt := func(r scanRow, col int) any {
		for _, v := range r.vals {
			if v.Column() == col {
				return valueOf(v)
			}
		}
		return nil
	}

	fx.data.Reset()
	res, err := fx.ri.Lookup(ctx, Query{Key: k, Columns: []string{"duration_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Plan.Covered || res.Plan.Data.Requests != 0 || fx.data.Snapshot().Total.Requests != 0 {
		t.Fatalf("covered lookup read data: %+v, store requests %d", res.Plan, fx.data.Snapshot().Total.Requests)
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("covered lookup: %d rows, want %d", len(res.Rows), len(want))
	}
	var sum, mx int64
	tracks := map[string]int64{}
	for i, r := range res.Rows {
		if r.Covered[0] != valueAt(want[i], durCol) || r.Row != want[i].row || r.File != want[i].file {
			t.Fatalf("covered row %d: %v %s#%d, want %v %s#%d", i, r.Covered, r.File, r.Row, valueAt(want[i], durCol), want[i].file, want[i].row)
		}
		d := r.Covered[0].(int64)
		sum += d
		mx = max(mx, d)
		tracks[valueAt(want[i], trackCol).(string)]++
	}
	agg := res.Aggregates[0].Values
	if agg["count"] != int64(len(want)) || agg["sum:duration_ms"] != sum || agg["max:duration_ms"] != mx {
		t.Fatalf("aggregates %v, want count %d sum %d max %d", agg, len(want), sum, mx)
	}
	if fmt.Sprint(agg["count-by:track_uri"]) != fmt.Sprint(tracks) {
		t.Fatalf("count-by %v, want %v", agg["count-by:track_uri"], tracks)
	}

	// The key column is covered by the index itself.
	res, err = fx.ri.Lookup(ctx, Query{Key: k, Columns: []string{"user_id", "track_uri"}})
	if err != nil || !res.Plan.Covered || len(res.Rows) != len(want) || res.Rows[0].Covered[0] != k || res.Rows[0].Covered[1] != valueAt(want[0], trackCol) {
		t.Fatalf("key+cover lookup: %v, plan %+v", err, res.Plan)
	}

	// Aggregates only: no rows, no data.
	res, err = fx.ri.Lookup(ctx, Query{Key: k, NoRows: true})
	if err != nil || len(res.Rows) != 0 || res.Plan.Data.Requests != 0 || res.Aggregates[0].Values["count"] != int64(len(want)) {
		t.Fatalf("aggregate-only lookup: %v %+v", err, res)
	}

	// A filter on a cover column applies before reading: only matching rows
	// are read, and they are exactly the scan's matching rows.
	var wantF []scanRow
	for _, r := range want {
		if valueAt(r, durCol).(int64) >= 200_000 {
			wantF = append(wantF, r)
		}
	}
	res, err = fx.ri.Lookup(ctx, Query{Key: k, Where: []Filter{{Column: "duration_ms", Op: ">=", Value: 200_000}}})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, "filtered", res.Rows, wantF)
	all, err := fx.ri.Lookup(ctx, Query{Key: k})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.RowRanges > len(wantF) || res.Plan.RowRanges >= all.Plan.RowRanges {
		t.Fatalf("filtered lookup read %d row ranges (%d bytes) for %d rows; unfiltered %d (%d bytes)",
			res.Plan.RowRanges, res.Plan.Data.BytesRead, len(wantF), all.Plan.RowRanges, all.Plan.Data.BytesRead)
	}
	if _, err := fx.ri.Lookup(ctx, Query{Key: k, Where: []Filter{{Column: "context", Op: "=", Value: "x"}}}); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("filter on a non-cover column: %v", err)
	}
}

func TestPagination(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, false, Definition{Name: "u", Key: "user_id"})
	k := hot(1)
	kb, _ := EncodeKey(k)
	want := fullScan(t, fx.dir, fx.uris, "user_id", kb, kb)
	var got []Row
	cur := ""
	pages := 0
	for {
		res, err := fx.ri.Lookup(ctx, Query{Key: k, Limit: 7, Cursor: cur, Columns: []string{"user_id", "ts"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) > 7 {
			t.Fatalf("page of %d rows with limit 7", len(res.Rows))
		}
		got = append(got, res.Rows...)
		pages++
		if res.Cursor == "" {
			break
		}
		cur = res.Cursor
		if pages > len(want) {
			t.Fatal("pagination does not end")
		}
	}
	if len(got) != len(want) {
		t.Fatalf("paged %d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].File != want[i].file || got[i].Row != want[i].row {
			t.Fatalf("row %d: %s#%d, want %s#%d", i, got[i].File, got[i].Row, want[i].file, want[i].row)
		}
	}
	if _, err := fx.ri.Lookup(ctx, Query{Key: k, Cursor: "!!"}); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestSortedRangeLookups(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, true, Definition{Name: "r", Key: "user_id", Kind: KindSorted})
	cases := []struct{ lo, hi int64 }{
		{0, 1 << 40}, {1_000_000_000, 1_100_000_000}, {hot(0), hot(0)}, {5, 6},
	}
	for _, c := range cases {
		lo, _ := EncodeKey(c.lo)
		hi, _ := EncodeKey(c.hi)
		want := fullScan(t, fx.dir, fx.uris, "user_id", lo, hi)
		res, err := fx.ri.Lookup(ctx, Query{Low: c.lo, High: c.hi})
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, fmt.Sprintf("range %d..%d", c.lo, c.hi), res.Rows, want)
	}
	// Text bounds from the command line, open high end.
	q, err := ParseKeyFlag("user_id=4000000000..")
	if err != nil {
		t.Fatal(err)
	}
	q.Columns = []string{"user_id"}
	res, err := fx.ri.Lookup(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := ParseKeyFlag("track_uri=x"); true {
		if _, err := fx.ri.Lookup(ctx, q); !errors.Is(err, ErrBadQuery) {
			t.Fatalf("lookup on another column: %v", err)
		}
	}
	lo, _ := EncodeKey(int64(4_000_000_000))
	hi, _ := EncodeKey(int64(1 << 62))
	if want := fullScan(t, fx.dir, fx.uris, "user_id", lo, hi); len(res.Rows) != len(want) {
		t.Fatalf("open range: %d rows, want %d", len(res.Rows), len(want))
	}
	// A hash index refuses ranges.
	h := newFixture(t, true, Definition{Name: "h", Key: "user_id"})
	if _, err := h.ri.Lookup(ctx, Query{Low: 1, High: 2}); !errors.Is(err, ErrBadQuery) {
		t.Fatalf("range on a hash index: %v", err)
	}
}

func TestUpdateAppendsAndCompactMerges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, true)
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	def := Definition{Name: "u", Key: "user_id", Aggregates: []Aggregate{{Op: "count"}}}
	res := StoreResolver{data}
	m1, _, err := Create(ctx, idx, def, res, uris[:2])
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Create(ctx, idx, def, res, uris); !errors.Is(err, ErrExists) {
		t.Fatalf("second Create: %v", err)
	}
	m2, _, err := Update(ctx, idx, "u", res, uris) // adds the 4 others
	if err != nil {
		t.Fatal(err)
	}
	if m2.Version != 2 || len(m2.Files) != len(uris) || len(m2.Fragments) != len(m1.Fragments)+1 || m2.Fragments[0].Path != m1.Fragments[0].Path {
		t.Fatalf("update: version %d, %d files, fragments %v", m2.Version, len(m2.Files), m2.Fragments)
	}
	m3, _, err := Update(ctx, idx, "u", res, uris)
	if err != nil || m3.Version != 2 {
		t.Fatalf("no-op update: %v, version %d", err, m3.Version)
	}
	check := func(what string) {
		ri, err := Open(ctx, idx, "u", Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int64{hot(0), hot(7), hot(400)} {
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, uris, "user_id", kb, kb)
			r, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, fmt.Sprintf("%s key %d", what, k), r.Rows, want)
			if len(want) > 0 && r.Aggregates[0].Values["count"] != int64(len(want)) {
				t.Fatalf("%s key %d: count %v, want %d", what, k, r.Aggregates[0].Values["count"], len(want))
			}
		}
	}
	check("after update")
	m4, err := Compact(ctx, idx, "u")
	if err != nil {
		t.Fatal(err)
	}
	// Aggregates are per (key, data file), so merging fragments without
	// removals keeps every entry.
	if m4.Version != 3 || len(m4.Fragments) != 1 || m4.Entries() != m2.Entries() {
		t.Fatalf("compact: version %d, %d fragments, %d entries (was %d)", m4.Version, len(m4.Fragments), m4.Entries(), m2.Entries())
	}
	for _, fr := range m2.Fragments {
		if ok, _ := store.Exists(ctx, idx, folderOf("u")+fr.Path); ok {
			t.Fatalf("compacted fragment %s still exists", fr.Path)
		}
	}
	check("after compact")
	// A handle opened before the compaction refreshes itself.
	old, err := Open(ctx, idx, "u", Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	old.setManifest(m2)
	if r, err := old.Lookup(ctx, Query{Key: hot(0)}); err != nil || old.Manifest().Version != m4.Version || len(r.Rows) == 0 {
		t.Fatalf("stale handle after compaction: %v, version %d", err, old.Manifest().Version)
	}
	// A second row index on another column; dropping it leaves the first.
	if _, _, err := Create(ctx, idx, Definition{Name: "t", Key: "track_uri"}, res, uris); err != nil {
		t.Fatal(err)
	}
	defs, err := List(ctx, idx)
	if err != nil || len(defs) != 2 {
		t.Fatalf("List: %v %v", defs, err)
	}
	if err := Drop(ctx, idx, "t"); err != nil {
		t.Fatal(err)
	}
	if defs, _ := List(ctx, idx); len(defs) != 1 || defs[0].Name != "u" {
		t.Fatalf("after Drop: %v", defs)
	}
	check("after drop of another")
}

func TestConcurrentCommitLoses(t *testing.T) {
	ctx := context.Background()
	idx, _ := store.Open(ctx, "mem://")
	man := &Manifest{Version: 1, Definition: Definition{Name: "x", Key: "k", Kind: KindHash}}
	if err := commitManifest(ctx, idx, man); err != nil {
		t.Fatal(err)
	}
	if err := commitManifest(ctx, idx, man); !errors.Is(err, ErrConcurrentUpdate) {
		t.Fatalf("second commit of version 1: %v", err)
	}
}

func TestChangedDataFileIsAnError(t *testing.T) {
	ctx := context.Background()
	for _, change := range []string{"truncate", "replace"} {
		t.Run(change, func(t *testing.T) {
			fx := newFixture(t, true, Definition{Name: "u", Key: "user_id"})
			k := hot(0)
			res, err := fx.ri.Lookup(ctx, Query{Key: k})
			if err != nil || len(res.Rows) == 0 {
				t.Fatal(err)
			}
			victim := filepath.Join(fx.dir, res.Rows[0].File)
			switch change {
			case "truncate":
				info, _ := os.Stat(victim)
				if err := os.Truncate(victim, info.Size()/2); err != nil {
					t.Fatal(err)
				}
			case "replace":
				// Same size, other content: another file of the lake.
				other := ""
				for _, u := range fx.uris {
					if filepath.Join(fx.dir, u) != victim {
						other = filepath.Join(fx.dir, u)
					}
				}
				b, _ := os.ReadFile(other)
				info, _ := os.Stat(victim)
				b = append(b, make([]byte, max(0, int(info.Size())-len(b)))...)
				if err := os.WriteFile(victim, b[:min(len(b), int(info.Size()))], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Cold: the footer check catches it.
			fx.ri.DropCache()
			_, err = fx.ri.Lookup(ctx, Query{Key: k})
			var fce *FileChangedError
			if !errors.Is(err, ErrDataFileChanged) || !errors.As(err, &fce) {
				t.Fatalf("cold lookup on a %sd file: %v", change, err)
			}
		})
	}
	t.Run("truncate-warm", func(t *testing.T) {
		fx := newFixture(t, true, Definition{Name: "u", Key: "user_id"})
		// Without the page cache, which would serve the pages read before
		// the change (as every cache serves what it read).
		ri, err := Open(ctx, fx.idx, "u", Options{Resolver: StoreResolver{fx.data}, PageCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		fx.ri = ri
		k := hot(0)
		res, err := fx.ri.Lookup(ctx, Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range fx.uris {
			if err := os.Truncate(filepath.Join(fx.dir, u), 100); err != nil {
				t.Fatal(err)
			}
		}
		_, err = fx.ri.Lookup(ctx, Query{Key: k})
		if !errors.Is(err, ErrDataFileChanged) {
			t.Fatalf("warm lookup on truncated files (had %d rows): %v", len(res.Rows), err)
		}
	})
}

// TestWarmLookupNamesTruncatedFile: a warm lookup over several files of
// which one was truncated names that file in its FileChangedError, not
// another whose read the failure cancelled (both have no data).
func TestWarmLookupNamesTruncatedFile(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, true, Definition{Name: "u", Key: "user_id"})
	k := hot(0)
	res, err := fx.ri.Lookup(ctx, Query{Key: k})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, r := range res.Rows {
		if !slices.Contains(files, r.File) {
			files = append(files, r.File)
		}
	}
	if len(files) < 2 {
		t.Fatalf("key in %d files, want several", len(files))
	}
	for _, victim := range files {
		// Warm, without the page cache (which serves pages read before).
		ri, err := Open(ctx, fx.idx, "u", Options{Resolver: StoreResolver{fx.data}, PageCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Lookup(ctx, Query{Key: k}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(fx.dir, victim)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 100); err != nil {
			t.Fatal(err)
		}
		_, err = ri.Lookup(ctx, Query{Key: k})
		var fce *FileChangedError
		if !errors.As(err, &fce) || fce.URI != victim || fce.Reason != "truncated" {
			t.Errorf("%s truncated: %v", victim, err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcurrentLookups runs lookups from several goroutines on one handle
// (shared cache, cold and warm) and checks each against a full scan.
func TestConcurrentLookups(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t, false, Definition{Name: "u", Key: "user_id"})
	fx.ri.cache = newCache(2 << 20) // small: evictions happen under load
	keys := []int64{hot(0), hot(1), hot(2), hot(30), hot(600), hot(1999), 5}
	want := map[int64][]scanRow{}
	for _, k := range keys {
		kb, _ := EncodeKey(k)
		want[k] = fullScan(t, fx.dir, fx.uris, "user_id", kb, kb)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 12 {
				k := keys[(g+i)%len(keys)]
				res, err := fx.ri.Lookup(ctx, Query{Key: k})
				if err == nil && len(res.Rows) != len(want[k]) {
					err = fmt.Errorf("key %d: %d rows, want %d", k, len(res.Rows), len(want[k]))
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestStringKeys indexes a string column (hash and sorted) and checks
// equality and range lookups against a full scan.
func TestStringKeys(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []Kind{KindHash, KindSorted} {
		fx := newFixture(t, false, Definition{Name: "t", Key: "track_uri", Kind: kind})
		for _, k := range []string{"spotify:track:0000000000000000000007", "spotify:track:0000000000000000000499", "nope"} {
			kb, _ := EncodeKey(k)
			want := fullScan(t, fx.dir, fx.uris, "track_uri", kb, kb)
			res, err := fx.ri.Lookup(ctx, Query{KeyText: k})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, fmt.Sprintf("%s %s", kind, k), res.Rows, want)
		}
		if kind == KindSorted {
			lo, _ := EncodeKey("spotify:track:0000000000000000000100")
			hi, _ := EncodeKey("spotify:track:0000000000000000000105")
			want := fullScan(t, fx.dir, fx.uris, "track_uri", lo, hi)
			res, err := fx.ri.Lookup(ctx, Query{Low: "spotify:track:0000000000000000000100", High: "spotify:track:0000000000000000000105"})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("empty reference range")
			}
			checkRows(t, "string range", res.Rows, want)
		}
	}
}

// TestListHeads: List decodes only each manifest's head (the definition),
// and gives the definitions Open gives, by name; it checks the head as
// Open does (a manifest of a newer format, or not JSON, is ErrCorrupt),
// and a dropped row index is not listed.
func TestListHeads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	res := StoreResolver{data}
	idx, _ := store.Open(ctx, "mem://")
	for _, def := range []Definition{
		{Name: "u", Key: "user_id", Kind: KindHash, Cover: []string{"ts", "duration_ms"}, Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}}},
		{Name: "t", Key: "track_uri", Kind: KindSorted},
		{Name: "gone", Key: "user_id"},
	} {
		if _, _, err := Create(ctx, idx, def, res, uris[:2]); err != nil {
			t.Fatal(err)
		}
	}
	if err := Drop(ctx, idx, "gone"); err != nil {
		t.Fatal(err)
	}
	defs, err := List(ctx, idx)
	if err != nil {
		t.Fatal(err)
	}
	var want []Definition
	for _, name := range []string{"t", "u"} {
		ri, err := Open(ctx, idx, name, Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ri.Manifest().Definition)
	}
	if !reflect.DeepEqual(defs, want) {
		t.Fatalf("List: %+v\nwant (Open's) %+v", defs, want)
	}

	// A newest manifest List cannot read fails it, as it fails Open.
	rewrite := func(edit func(b []byte) []byte) {
		t.Helper()
		for _, key := range []string{manifestKey("t", 1), latestCopyKey("t")} {
			b, err := store.ReadAll(ctx, idx, key)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.WriteAll(ctx, idx, key, edit(b), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	rewrite(func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"formatVersion":`), []byte(`"formatVersion":9`), 1)
	})
	if _, err := List(ctx, idx); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "format version") {
		t.Fatalf("List with a manifest of a newer format: %v, want ErrCorrupt", err)
	}
	rewrite(func(b []byte) []byte { return b[:len(b)/2] })
	if _, err := List(ctx, idx); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("List with a truncated manifest: %v, want ErrCorrupt", err)
	}
	if _, err := Open(ctx, idx, "t", Options{Resolver: res}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a truncated manifest: %v, want ErrCorrupt", err)
	}
}
