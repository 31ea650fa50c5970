package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// readLog records the keys of every read and stat of a store.
type readLog struct {
	store.Store
	mu   sync.Mutex
	keys map[string]int
}

func newReadLog(s store.Store) *readLog { return &readLog{Store: s, keys: map[string]int{}} }

func (r *readLog) note(key string) {
	r.mu.Lock()
	r.keys[key]++
	r.mu.Unlock()
}

func (r *readLog) Stat(ctx context.Context, key string) (store.ObjectInfo, error) {
	r.note(key)
	return r.Store.Stat(ctx, key)
}

func (r *readLog) NewRangeReader(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	r.note(key)
	return r.Store.NewRangeReader(ctx, key, off, n)
}

func (r *readLog) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys[key]
}

// removeDef covers two columns and has every aggregate kind.
func removeDef(name string, kind Kind) Definition {
	return Definition{Name: name, Key: "user_id", Kind: kind, Cover: []string{"duration_ms", "track_uri"},
		Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}, {Op: "max", Column: "duration_ms"}, {Op: "count-by", Column: "track_uri"}}}
}

// allKeys returns the distinct keys of a full scan, in key order.
func allKeys(rows []scanRow) [][]byte {
	var ks [][]byte
	for _, r := range rows {
		if len(ks) == 0 || !bytes.Equal(ks[len(ks)-1], r.key) {
			ks = append(ks, r.key)
		}
	}
	return ks
}

// sameResult compares two lookup results row by row (file, row, values or
// covered values) and aggregate by aggregate.
func sameResult(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if len(got.Rows) != len(want.Rows) {
		t.Fatalf("%s: %d rows, fresh index %d", what, len(got.Rows), len(want.Rows))
	}
	for i := range got.Rows {
		g, w := got.Rows[i], want.Rows[i]
		if g.File != w.File || g.Row != w.Row || !rowsEqual(g.Values, w.Values) || fmt.Sprint(g.Covered) != fmt.Sprint(w.Covered) {
			t.Fatalf("%s: row %d is %s#%d %v %v, fresh index %s#%d %v %v", what, i, g.File, g.Row, g.Values, g.Covered, w.File, w.Row, w.Values, w.Covered)
		}
	}
	if fmt.Sprint(got.Aggregates) != fmt.Sprint(want.Aggregates) {
		t.Fatalf("%s: aggregates %v, fresh index %v", what, got.Aggregates, want.Aggregates)
	}
	if got.Cursor == "" != (want.Cursor == "") {
		t.Fatalf("%s: cursor %q, fresh index %q", what, got.Cursor, want.Cursor)
	}
}

// TestRemoveMatchesFreshIndex: after removing two data files (one of each
// build's fragment), every kind of lookup answers exactly as an index built
// over the remaining files, and never touches the removed files; Compact
// then gives the same answers, the fresh index's entries and fewer bytes.
func TestRemoveMatchesFreshIndex(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sorted bool
		kind   Kind
	}{
		{"hash-unsorted", false, KindHash},
		{"sorted-index-sorted-lake", true, KindSorted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			data, uris, _ := testLake(t, dir, tc.sorted)
			log := newReadLog(data)
			res := StoreResolver{log}
			idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
			if err != nil {
				t.Fatal(err)
			}
			// Two builds, so that the removals hit two fragments.
			if _, _, err := Create(ctx, idx, removeDef("all", tc.kind), res, uris[:3]); err != nil {
				t.Fatal(err)
			}
			before, _, err := Update(ctx, idx, "all", res, uris)
			if err != nil {
				t.Fatal(err)
			}
			gone := []string{uris[1], uris[4]}
			kept := slices.DeleteFunc(slices.Clone(uris), func(u string) bool { return slices.Contains(gone, u) })
			man, n, err := Remove(ctx, idx, "all", append(slices.Clone(gone), "lake/not-indexed.parquet"))
			if err != nil || n != 2 {
				t.Fatalf("Remove: %d files, %v", n, err)
			}
			if man.Version != before.Version+1 || len(man.Files) != len(kept) || len(man.Removed) != 2 || fmt.Sprint(man.Fragments) != fmt.Sprint(before.Fragments) {
				t.Fatalf("Remove committed version %d, %d files, tombstones %v, fragments rewritten: %v",
					man.Version, len(man.Files), man.Removed, fmt.Sprint(man.Fragments) != fmt.Sprint(before.Fragments))
			}
			if again, n, err := Remove(ctx, idx, "all", gone); err != nil || n != 0 || again.Version != man.Version {
				t.Fatalf("second Remove: %d files, version %d, %v", n, again.Version, err)
			}
			fresh, _, err := Create(ctx, idx, removeDef("fresh", tc.kind), res, kept)
			if err != nil {
				t.Fatal(err)
			}

			// Keys: the hottest, some of each removed file only, absent.
			lo, _ := EncodeKey(int64(math.MinInt64))
			hi, _ := EncodeKey(int64(math.MaxInt64))
			scan := fullScan(t, dir, uris, "user_id", lo, hi)
			inFile := map[string]map[string]bool{} // key → files
			for _, r := range scan {
				if inFile[string(r.key)] == nil {
					inFile[string(r.key)] = map[string]bool{}
				}
				inFile[string(r.key)][r.file] = true
			}
			var keys []any
			onlyGone := 0
			for _, k := range allKeys(scan) {
				fs := inFile[string(k)]
				if len(fs) == 1 && (fs[gone[0]] || fs[gone[1]]) && onlyGone < 3 {
					kv, _ := DecodeKey(k)
					keys = append(keys, kv)
					onlyGone++
				}
			}
			if onlyGone == 0 {
				t.Fatal("no key lives only in a removed file")
			}
			keys = append(keys, hot(0), hot(1), hot(5), hot(40), hot(300), int64(-1))

			check := func(stage string) {
				t.Helper()
				got, err := Open(ctx, idx, "all", Options{Resolver: res})
				if err != nil {
					t.Fatal(err)
				}
				want, err := Open(ctx, idx, "fresh", Options{Resolver: StoreResolver{data}})
				if err != nil {
					t.Fatal(err)
				}
				queries := []Query{}
				for _, k := range keys {
					queries = append(queries,
						Query{Key: k},
						Query{Key: k, Columns: []string{"user_id", "duration_ms"}},
						Query{Key: k, NoRows: true},
						Query{Key: k, Columns: []string{"track_uri"}, Where: []Filter{{Column: "duration_ms", Op: ">=", Value: 180_000}}},
						Query{Key: k, Limit: 3})
				}
				if tc.kind == KindSorted {
					queries = append(queries, Query{Low: hot(0) - 50_000_000, High: hot(0) + 50_000_000}, Query{Range: true, Columns: []string{"duration_ms"}})
				}
				for i, q := range queries {
					what := fmt.Sprintf("%s: query %d %+v", stage, i, q)
					g, err := got.Lookup(ctx, q)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					w, err := want.Lookup(ctx, q)
					if err != nil {
						t.Fatalf("%s: fresh: %v", what, err)
					}
					sameResult(t, what, g, w)
					if q.Key != nil && q.Columns == nil && !q.NoRows && q.Limit == 0 {
						kb, _ := EncodeKey(q.Key)
						checkRows(t, what, g.Rows, fullScan(t, dir, kept, "user_id", kb, kb))
					}
				}
				if _, err := got.Warm(ctx); err != nil {
					t.Fatal(err)
				}
				for _, u := range gone {
					if n := log.count(u); n != 0 {
						t.Fatalf("%s: %d requests to removed file %s", stage, n, u)
					}
				}
			}
			// The removed files' requests so far were the builds'.
			log.keys = map[string]int{}
			check("after remove")

			compacted, err := Compact(ctx, idx, "all")
			if err != nil {
				t.Fatal(err)
			}
			if len(compacted.Removed) != 0 || compacted.Entries() != fresh.Entries() || compacted.IndexBytes() >= before.IndexBytes() {
				t.Fatalf("compact: tombstones %v, %d entries (fresh index %d), %d bytes (before the removal %d)",
					compacted.Removed, compacted.Entries(), fresh.Entries(), compacted.IndexBytes(), before.IndexBytes())
			}
			check("after compact")

			// A removed URI listed again is indexed afresh, under a new id.
			readded, st, err := Update(ctx, idx, "all", res, uris)
			if err != nil || st.Files != 2 {
				t.Fatalf("re-adding: %d files, %v", st.Files, err)
			}
			for _, f := range readded.Files {
				if slices.Contains(gone, f.URI) && f.ID < before.NextFileID {
					t.Fatalf("re-added %s reuses id %d", f.URI, f.ID)
				}
			}
			ri, err := Open(ctx, idx, "all", Options{Resolver: res})
			if err != nil {
				t.Fatal(err)
			}
			kb, _ := EncodeKey(hot(0))
			r, err := ri.Lookup(ctx, Query{Key: hot(0)})
			if err != nil {
				t.Fatal(err)
			}
			// Rows come in file-id order: the re-added files last.
			want := fullScan(t, dir, append(slices.Clone(kept), gone...), "user_id", kb, kb)
			checkRows(t, "after re-adding", r.Rows, want)
			if r.Aggregates[0].Values["count"] != int64(len(want)) {
				t.Fatalf("after re-adding: count %v, want %d", r.Aggregates[0].Values["count"], len(want))
			}
		})
	}
}

// legacyize rewrites a row index as a build before removal existed wrote it:
// one aggregate record per key per fragment (file aggFile), instead of one
// per (key, data file).
func legacyize(t *testing.T, ctx context.Context, idx store.Store, name string) {
	t.Helper()
	ri, err := Open(ctx, idx, name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cur := ri.Manifest()
	man := cur.clone()
	man.Version++
	man.Fragments = nil
	m := new(meter)
	for i := range cur.Fragments {
		fr := &cur.Fragments[i]
		var es []entry
		for gi := range fr.Groups {
			g, err := ri.group(ctx, m, fr, gi)
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, g...)
		}
		var out []entry
		acc := map[string]*aggState{}
		for _, e := range es {
			if e.RG != aggRG {
				out = append(out, e)
				continue
			}
			s, err := decodeAggState(cur.Aggregates, e.Cover)
			if err != nil {
				t.Fatal(err)
			}
			if a, ok := acc[string(e.Key)]; ok {
				a.merge(cur.Aggregates, s)
			} else {
				acc[string(e.Key)] = s
			}
		}
		for k, s := range acc {
			out = append(out, entry{Bucket: cur.bucket([]byte(k)), Key: []byte(k), File: aggFile, Cover: s.encode(cur.Aggregates)})
		}
		slices.SortFunc(out, func(a, b entry) int { return compareEntries(&a, &b) })
		frags, _, err := writeFragments(ctx, idx, name, cur.Kind, out)
		if err != nil {
			t.Fatal(err)
		}
		man.Fragments = append(man.Fragments, frags...)
	}
	if err := commitManifest(ctx, idx, man); err != nil {
		t.Fatal(err)
	}
}

// TestRemoveWithLegacyAggregates: aggregates stored per key per fragment (by
// builds before removal existed) stay exact for keys the removal did not
// touch, and keys it touched fail with ErrStaleAggregates, before and after
// Compact; rows stay exact either way.
func TestRemoveWithLegacyAggregates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	res := StoreResolver{data}
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	def := Definition{Name: "u", Key: "user_id", Aggregates: []Aggregate{{Op: "count"}, {Op: "sum", Column: "duration_ms"}}}
	if _, _, err := Create(ctx, idx, def, res, uris[:3]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Update(ctx, idx, "u", res, uris); err != nil {
		t.Fatal(err)
	}
	legacyize(t, ctx, idx, "u")
	removed := uris[1] // in the first build's fragment

	lo, _ := EncodeKey(int64(math.MinInt64))
	hi, _ := EncodeKey(int64(math.MaxInt64))
	scan := fullScan(t, dir, uris, "user_id", lo, hi)
	firstBuild := map[string]bool{uris[0]: true, uris[1]: true, uris[2]: true}
	var touched, untouchedFirst, secondOnly []byte // keys
	files := map[string]map[string]bool{}
	for _, r := range scan {
		if files[string(r.key)] == nil {
			files[string(r.key)] = map[string]bool{}
		}
		files[string(r.key)][r.file] = true
	}
	for _, k := range allKeys(scan) {
		fs := files[string(k)]
		inFirst := false
		for f := range fs {
			inFirst = inFirst || firstBuild[f]
		}
		switch {
		case fs[removed] && touched == nil:
			touched = k
		case inFirst && !fs[removed] && untouchedFirst == nil:
			untouchedFirst = k
		case !inFirst && secondOnly == nil:
			secondOnly = k
		}
	}
	if touched == nil || untouchedFirst == nil || secondOnly == nil {
		t.Fatal("lake lacks the keys this test needs")
	}
	if _, _, err := Remove(ctx, idx, "u", []string{removed}); err != nil {
		t.Fatal(err)
	}
	kept := slices.DeleteFunc(slices.Clone(uris), func(u string) bool { return u == removed })
	check := func(stage string) {
		t.Helper()
		ri, err := Open(ctx, idx, "u", Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range [][]byte{untouchedFirst, secondOnly} {
			kv, _ := DecodeKey(k)
			r, err := ri.Lookup(ctx, Query{Key: kv})
			if err != nil {
				t.Fatalf("%s: key %v: %v", stage, kv, err)
			}
			want := fullScan(t, dir, kept, "user_id", k, k)
			checkRows(t, fmt.Sprintf("%s: key %v", stage, kv), r.Rows, want)
			if r.Aggregates[0].Values["count"] != int64(len(want)) {
				t.Fatalf("%s: key %v: count %v, want %d", stage, kv, r.Aggregates[0].Values["count"], len(want))
			}
		}
		kv, _ := DecodeKey(touched)
		_, err = ri.Lookup(ctx, Query{Key: kv, NoRows: true})
		var se *StaleAggregatesError
		if !errors.Is(err, ErrStaleAggregates) || !errors.As(err, &se) || se.Key != kv || !strings.Contains(err.Error(), "rebuild") {
			t.Fatalf("%s: touched key %v: %v", stage, kv, err)
		}
	}
	check("after remove")
	if _, err := Compact(ctx, idx, "u"); err != nil {
		t.Fatal(err)
	}
	check("after compact")
}

// hookStore runs hook once, just before the first manifest commit through it.
type hookStore struct {
	store.Store
	once sync.Once
	hook func()
}

func (h *hookStore) NewWriter(ctx context.Context, key string, opts *store.WriteOptions) (store.Writer, error) {
	if strings.Contains(key, "/_manifest/") {
		h.once.Do(h.hook)
	}
	return h.Store.NewWriter(ctx, key, opts)
}

// fragmentFiles lists the fragment objects of a row index.
func fragmentFiles(t *testing.T, ctx context.Context, idx store.Store, name string) []string {
	t.Helper()
	var out []string
	for info, err := range idx.List(ctx, store.ListOptions{Prefix: folderOf(name) + "fragments/"}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimPrefix(info.Key, folderOf(name)))
	}
	return out
}

// listing opens row index name and returns the data-file URIs and the
// (sorted) fragment paths its newest manifest lists.
func listing(t *testing.T, ctx context.Context, idx store.Store, name string, res Resolver) (files, frags []string, ri *RowIndex) {
	t.Helper()
	ri, err := Open(ctx, idx, name, Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	man := ri.Manifest()
	for _, f := range man.Files {
		files = append(files, f.URI)
	}
	for _, f := range man.Fragments {
		frags = append(frags, f.Path)
	}
	slices.Sort(frags)
	return files, frags, ri
}

// TestConcurrentUpdateAndRemove: an Update and a Remove that race both land
// whichever commits first; two Updates that race leave one with
// ErrConcurrentUpdate and no orphan fragment.
func TestConcurrentUpdateAndRemove(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, true)
	res := StoreResolver{data}
	setup := func(name string) store.Store {
		idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, name))
		if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id", Aggregates: []Aggregate{{Op: "count"}}}, res, uris[:3]); err != nil {
			t.Fatal(err)
		}
		return idx
	}
	var landedWith func(idx store.Store, wantFiles []string)
	// landed checks that the newest manifest lists uris[3:], not uris[0],
	// references exactly the fragment files present, and answers hot(0)
	// like a scan of what it lists.
	landed := func(idx store.Store) {
		t.Helper()
		landedWith(idx, uris[1:])
	}
	// landedWith is landed for a final listing of wantFiles.
	landedWith = func(idx store.Store, wantFiles []string) {
		t.Helper()
		listed, frags, ri := listing(t, ctx, idx, "u", res)
		removed := ri.Manifest().Removed
		if !slices.Equal(listed, wantFiles) || len(removed) != 1 || !slices.Equal(frags, fragmentFiles(t, ctx, idx, "u")) {
			t.Fatalf("files %v (want %v), tombstones %v, fragments %v on disk %v", listed, wantFiles, removed, frags, fragmentFiles(t, ctx, idx, "u"))
		}
		kb, _ := EncodeKey(hot(0))
		r, err := ri.Lookup(ctx, Query{Key: hot(0)})
		if err != nil {
			t.Fatal(err)
		}
		want := fullScan(t, dir, wantFiles, "user_id", kb, kb)
		checkRows(t, "after the race", r.Rows, want)
		if r.Aggregates[0].Values["count"] != int64(len(want)) {
			t.Fatalf("count %v, want %d", r.Aggregates[0].Values["count"], len(want))
		}
	}

	t.Run("remove commits during update", func(t *testing.T) {
		idx := setup("a")
		h := &hookStore{Store: idx, hook: func() {
			if _, _, err := Remove(ctx, idx, "u", uris[:1]); err != nil {
				t.Error(err)
			}
		}}
		if _, _, err := Update(ctx, h, "u", res, uris); err != nil {
			t.Fatal(err)
		}
		landed(idx)
	})
	t.Run("update commits during remove", func(t *testing.T) {
		idx := setup("b")
		h := &hookStore{Store: idx, hook: func() {
			if _, _, err := Update(ctx, idx, "u", res, uris); err != nil {
				t.Error(err)
			}
		}}
		if _, n, err := Remove(ctx, h, "u", uris[:1]); err != nil || n != 1 {
			t.Fatalf("Remove: %d, %v", n, err)
		}
		landed(idx)
	})
	t.Run("in parallel", func(t *testing.T) {
		idx := setup("c")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Go(func() { _, _, errs[0] = Update(ctx, idx, "u", res, uris) })
		wg.Go(func() { _, _, errs[1] = Remove(ctx, idx, "u", uris[:1]) })
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		// Either order is a serialization: the Update committed first
		// (and the Remove then dropped uris[0]), or the Remove committed
		// before the Update read the manifest, and the Update, asked to
		// index uris, indexed uris[0] afresh under a new id (Update's doc).
		listed, _, ri := listing(t, ctx, idx, "u", res)
		if slices.Contains(listed, uris[0]) {
			for _, f := range ri.Manifest().Files {
				if f.URI == uris[0] && slices.Contains(ri.Manifest().Removed, f.ID) {
					t.Fatalf("%s listed under its removed id %d", f.URI, f.ID)
				}
			}
			want := slices.Clone(uris)
			slices.Sort(want)
			got := slices.Clone(listed)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("files %v, want all of %v", listed, uris)
			}
			landedWith(idx, listed)
			return
		}
		landed(idx)
	})
	t.Run("update commits during update", func(t *testing.T) {
		idx := setup("d")
		h := &hookStore{Store: idx, hook: func() {
			if _, _, err := Update(ctx, idx, "u", res, uris[:4]); err != nil {
				t.Error(err)
			}
		}}
		if _, _, err := Update(ctx, h, "u", res, uris); !errors.Is(err, ErrConcurrentUpdate) {
			t.Fatalf("losing Update: %v", err)
		}
		ri, err := Open(ctx, idx, "u", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var frags []string
		for _, f := range ri.Manifest().Fragments {
			frags = append(frags, f.Path)
		}
		slices.Sort(frags)
		if len(ri.Manifest().Files) != 4 || !slices.Equal(frags, fragmentFiles(t, ctx, idx, "u")) {
			t.Fatalf("after the lost race: %d files, fragments %v, on disk %v", len(ri.Manifest().Files), frags, fragmentFiles(t, ctx, idx, "u"))
		}
	})
}

// TestUpdateAllRemovesUntracked: UpdateAll removes what uris no longer
// holds and adds what is new, in every row index of the folder; RemoveAll
// removes from every one.
func TestUpdateAllRemovesUntracked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, true)
	res := StoreResolver{data}
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	for _, d := range []Definition{{Name: "u", Key: "user_id"}, {Name: "t", Key: "track_uri", Kind: KindSorted}} {
		if _, _, err := Create(ctx, idx, d, res, uris[:4]); err != nil {
			t.Fatal(err)
		}
	}
	tracked := append(slices.Clone(uris[1:3]), uris[4:]...) // drops 0 and 3, adds 4 and 5
	sts, err := UpdateAll(ctx, idx, res, tracked)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"u", "t"} {
		if st := sts[name]; st.Removed != 2 || st.Files != 2 {
			t.Fatalf("%s: removed %d, added %d", name, st.Removed, st.Files)
		}
		ri, err := Open(ctx, idx, name, Options{Resolver: res})
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, f := range ri.Manifest().Files {
			listed = append(listed, f.URI)
		}
		if !slices.Equal(listed, tracked) {
			t.Fatalf("%s lists %v, want %v", name, listed, tracked)
		}
	}
	got, err := RemoveAll(ctx, idx, []string{uris[1], "nope"})
	if err != nil || got["u"] != 1 || got["t"] != 1 {
		t.Fatalf("RemoveAll: %v, %v", got, err)
	}
}
