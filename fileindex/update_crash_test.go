package fileindex

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/store"
)

// crashFixture is an index over four generated files whose update takes
// several batches (L = 3), two consolidations (threshold 2), an
// auto-compaction (threshold 3) and a large-index table.
type crashFixture struct {
	dir   string
	files []string
}

func newCrashFixture(t *testing.T) *crashFixture {
	dir := t.TempDir()
	f := &crashFixture{dir: dir}
	for i, n := range []int{2, 2, 5, 3} {
		f.files = append(f.files, updCSVIDs(t, dir, fmt.Sprintf("c%d.csv", i), n))
	}
	return f
}

// setup creates the index in e (without updating it).
func (f *crashFixture) setup(t *testing.T, e *updEnv) *index.Index {
	ctx := context.Background()
	e.cfg.LargeIndexLimit = 3
	e.cfg.StagingConsolidationThreshold = 2
	e.cfg.AutoCompactThreshold, e.cfg.HasAutoCompact = 3, true
	ix := e.open("crash", updSchemaIDs, "csv", map[string]string{"header": "true", "mode": "FAILFAST"})
	updAddFiles(t, ix, f.files...)
	must(t, ix.AddIndex(ctx, "Id"))
	must(t, ix.AddRangeIndex(ctx, "Value"))
	must(t, ix.AddBloomIndex(ctx, "Category", 0.01))
	return ix
}

// indexState renders everything an index holds: main-table cells, large
// rows, staging presence and the metadata counters that must be exact.
func indexState(t *testing.T, ix *index.Index) string {
	t.Helper()
	must(t, ix.RefreshMetadata(context.Background()))
	var b strings.Builder
	main := updMainTable(t, ix)
	for _, fn := range updSortedKeys(main) {
		cols := main[fn]
		for _, c := range slices.Sorted(maps.Keys(cols)) {
			fmt.Fprintf(&b, "%s %s=%s\n", fn[strings.LastIndex(fn, "/")+1:], c, cols[c])
		}
	}
	if updTableVersion(t, ix.Root(), ix.Paths().LargeIndex("Id")) >= 0 {
		_, rows := updTableRows(t, ix.Root(), ix.Paths().LargeIndex("Id"))
		var l []string
		for _, r := range rows {
			l = append(l, fmt.Sprint(r[0].(string)[strings.LastIndex(r[0].(string), "/")+1:], "=", r[1]))
		}
		slices.Sort(l)
		fmt.Fprintf(&b, "large %v\n", l)
	}
	m := ix.Metadata()
	fmt.Fprintf(&b, "staging=%d total=%d auto=%v\n", updTableVersion(t, ix.Root(), ix.Paths().Staging), m.TotalIndexedFileSize, m.AutoBloomIndexes)
	return b.String()
}

// TestUpdateCrashAfterEveryWrite crashes the update after its k-th store
// write, for every k, and checks that the next update finishes the job: the
// index then holds exactly what an uninterrupted update produces.
func TestUpdateCrashAfterEveryWrite(t *testing.T) {
	ctx := context.Background()
	fx := newCrashFixture(t)
	ref := newUpdEnv(t)
	refIx := fx.setup(t, ref)
	res := updMust(t, ref.fi(refIx))
	if res.Batches != 4 || res.Consolidations != 2 || res.Compactions != 1 {
		t.Fatalf("fixture does not exercise what it should: %+v", res)
	}
	want := indexState(t, refIx)

	crashed := 0
	for k := 1; k < 500; k++ {
		e := newUpdEnv(t)
		ix := fx.setup(t, e)
		faulty := store.NewFaulty(e.root, store.Faults{CrashAfterWrites: k})
		cfg := e.cfg
		fcat := index.NewCatalog(faulty, index.Options{Config: cfg})
		fix, err := fcat.Get(ctx, ix.Name())
		must(t, err)
		_, err = New(fix, Options{Config: &cfg}).Update(ctx, UpdateOptions{})
		if err == nil {
			break // k exceeds the writes of a whole update
		}
		crashed++
		// The process died holding the lock; its staleness healing is
		// tested in package lock: here the lock simply expires.
		if err := e.root.Delete(ctx, ix.Paths().UpdateLock, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			t.Fatal(err)
		}
		ix, err = e.cat.Get(ctx, ix.Name())
		must(t, err)
		if _, err := e.fi(ix).Update(ctx, UpdateOptions{}); err != nil {
			t.Fatalf("k=%d: update after the crash failed: %v", k, err)
		}
		if got := indexState(t, ix); got != want {
			t.Fatalf("k=%d: after recovery\n%s\nwant\n%s", k, got, want)
		}
	}
	if crashed < 10 {
		t.Fatalf("only %d crash points exercised", crashed)
	}
	t.Logf("%d crash points", crashed)
}

// TestUpdateCorruptFileMidway: on the engine path without the read cache
// (every file read by the analysis and again by its batch), a data file that turns malformed
// after the analysis fails the update in its batch with a typed error
// naming it; once it is fixed, the next update recovers the staged batches
// and finishes, producing the same index as an uninterrupted run.
func TestUpdateCorruptFileMidway(t *testing.T) {
	ctx := context.Background()
	fx := newCrashFixture(t)
	ref := newUpdEnv(t)
	refIx := fx.setup(t, ref)
	updMust(t, ref.fi(refIx))
	want := indexState(t, refIx)

	e := newUpdEnv(t)
	ix := fx.setup(t, e)
	victim := fx.files[2] // the oversize file: the last batch
	path := strings.TrimPrefix(victim, "file://")
	good, err := os.ReadFile(path)
	must(t, err)
	cfg := e.cfg
	fi := New(ix, Options{Config: &cfg, Progress: func(p Progress) {
		if p.Phase == "stage" && p.Done == 1 {
			must(t, os.WriteFile(path, []byte("Id,Version,Category,Value\nnot-a-number,1,x,1.0\n"), 0o644))
		}
	}})
	_, err = fi.Update(ctx, UpdateOptions{ReadCacheBytes: -1, engineOnly: true})
	var fe *datafile.FileError
	if !errors.Is(err, datafile.ErrMalformedRecord) || !errors.As(err, &fe) || fe.URI != victim {
		t.Fatalf("want a malformed-record FileError for %s, got %v", victim, err)
	}
	if updTableVersion(t, ix.Root(), ix.Paths().Staging) < 0 {
		t.Fatalf("no staged batch survived the failure")
	}
	must(t, os.WriteFile(path, good, 0o644))
	res := updMust(t, e.fi(ix))
	if !res.RecoveredStaging {
		t.Errorf("leftover staging was not recovered: %+v", res)
	}
	if got := indexState(t, ix); got != want {
		t.Fatalf("after recovery\n%s\nwant\n%s", got, want)
	}
}

// TestUpdateSkipsVanishedFiles: a tracked file that no longer exists is
// reported and skipped; the others are indexed; it stays unindexed.
func TestUpdateSkipsVanishedFiles(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("vanished", updT1S, "csv", map[string]string{"header": "true"})
	p0 := updDataURI(t, "table1_part0.csv")
	gone := updFileURI(t, t.TempDir()+"/gone.csv")
	updAddFiles(t, ix, p0, gone)
	must(t, ix.AddIndex(ctx, "Id"))
	res := updMust(t, e.fi(ix))
	if len(res.Skipped) != 1 || res.Skipped[0].URI != gone || !errors.Is(res.Skipped[0].Err, store.ErrNotExist) {
		t.Fatalf("skipped %+v", res.Skipped)
	}
	if main := updMainTable(t, ix); len(main) != 1 || main[p0] == nil {
		t.Fatalf("main table %v", updSortedKeys(main))
	}
}

// TestUpdateReadCacheReadsOnce: with the Go summaries, or on the engine
// path with the read cache, the files the analysis read are not read again: a file corrupted after the analysis is indexed
// as the analysis read it (one consistent read), and the index is exactly
// an uninterrupted run's. A budget smaller than the first analysis chunk
// keeps nothing, and the corruption is then seen by the build.
func TestUpdateReadCacheReadsOnce(t *testing.T) {
	ctx := context.Background()
	fx := newCrashFixture(t)
	ref := newUpdEnv(t)
	refIx := fx.setup(t, ref)
	if _, err := ref.fi(refIx).Update(ctx, UpdateOptions{ReadCacheBytes: -1, engineOnly: true}); err != nil {
		t.Fatal(err)
	}
	want := indexState(t, refIx)
	for _, tc := range []struct {
		name   string
		budget int64
		engine bool
		cached bool
	}{
		{"go summaries", 0, false, true},
		{"engine, default budget", 0, true, true},
		{"engine, one byte", 1, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newUpdEnv(t)
			ix := fx.setup(t, e)
			victim := fx.files[2] // the oversize file: the last batch
			path := strings.TrimPrefix(victim, "file://")
			good, err := os.ReadFile(path)
			must(t, err)
			defer func() { must(t, os.WriteFile(path, good, 0o644)) }()
			cfg := e.cfg
			fi := New(ix, Options{Config: &cfg, Progress: func(p Progress) {
				if p.Phase == "stage" && p.Done == 1 {
					must(t, os.WriteFile(path, []byte("Id,Version,Category,Value\nnot-a-number,1,x,1.0\n"), 0o644))
				}
			}})
			_, err = fi.Update(ctx, UpdateOptions{ReadCacheBytes: tc.budget, engineOnly: tc.engine})
			if !tc.cached {
				if !errors.Is(err, datafile.ErrMalformedRecord) {
					t.Fatalf("uncached: want the build to read the corrupted file, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := indexState(t, ix); got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestUpdateMalformedFileSummary: a malformed file fails the Go summaries'
// read pass with a typed error naming it, before anything is staged.
func TestUpdateMalformedFileSummary(t *testing.T) {
	ctx := context.Background()
	fx := newCrashFixture(t)
	e := newUpdEnv(t)
	ix := fx.setup(t, e)
	victim := fx.files[1]
	must(t, os.WriteFile(strings.TrimPrefix(victim, "file://"), []byte("Id,Version,Category,Value\nnot-a-number,1,x,1.0\n"), 0o644))
	_, err := e.fi(ix).Update(ctx, UpdateOptions{})
	var fe *datafile.FileError
	if !errors.Is(err, datafile.ErrMalformedRecord) || !errors.As(err, &fe) || fe.URI != victim {
		t.Fatalf("want a malformed-record FileError for %s, got %v", victim, err)
	}
	if v := updTableVersion(t, ix.Root(), ix.Paths().Staging); v != -1 {
		t.Errorf("staging written (version %d)", v)
	}
}
