package delta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

const testSchema = `{"type":"struct","fields":[
{"name":"id","type":"long","nullable":false,"metadata":{}},
{"name":"name","type":"string","nullable":true,"metadata":{}},
{"name":"part","type":"string","nullable":true,"metadata":{}},
{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`

func memStore(t testing.TB) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func parseSchema(t testing.TB, s string) *schema.Struct {
	t.Helper()
	st, err := schema.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func row(id int64, name, part string) []any {
	var n, p any
	if name != "" {
		n = name
	}
	if part != "" {
		p = part
	}
	return []any{id, n, p, []any{fmt.Sprint("t", id)}}
}

func rowsOf(from, to int64, part string) [][]any {
	var out [][]any
	for i := from; i < to; i++ {
		out = append(out, row(i, fmt.Sprint("n", i), part))
	}
	return out
}

// tableRows reads the latest snapshot of a freshly opened table, rendered
// and sorted, so tests compare contents independent of file order.
func tableRows(t testing.TB, s store.Store) (int64, []string) {
	t.Helper()
	ctx := context.Background()
	tb, err := Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Version(), scanRendered(t, snap)
}

func scanRendered(t testing.TB, snap *Snapshot) []string {
	t.Helper()
	var out []string
	for r, err := range snap.Scan(context.Background(), ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(r))
	}
	sort.Strings(out)
	return out
}

func render(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprint(r)
	}
	sort.Strings(out)
	return out
}

func newTable(t testing.TB, s store.Store, parts ...string) *Table {
	t.Helper()
	tb, err := Create(context.Background(), s, parseSchema(t, testSchema), CreateOptions{PartitionColumns: parts})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestCreateAppendRead(t *testing.T) {
	ctx := context.Background()
	for _, parts := range [][]string{nil, {"part"}} {
		t.Run(fmt.Sprint(parts), func(t *testing.T) {
			s := memStore(t)
			tb := newTable(t, s, parts...)
			if _, err := Create(ctx, s, parseSchema(t, testSchema), CreateOptions{}); !errors.Is(err, ErrTableExists) {
				t.Fatalf("second Create: %v, want ErrTableExists", err)
			}
			want := append(rowsOf(0, 100, "a"), rowsOf(100, 150, "")...)
			want = append(want, rowsOf(150, 160, "x y/=%")...)
			v, err := tb.Append(ctx, Rows(want), WriteOptions{})
			if err != nil || v != 1 {
				t.Fatalf("Append = %d, %v", v, err)
			}
			ver, got := tableRows(t, s)
			if ver != 1 || !slices.Equal(got, render(want)) {
				t.Fatalf("version %d rows %d, want %d", ver, len(got), len(want))
			}
			snap, _ := tb.Snapshot(ctx)
			for _, f := range snap.Files() {
				if f.Stats == "" || !strings.Contains(f.Stats, `"numRecords"`) {
					t.Errorf("add %s without stats", f.Path)
				}
				name, _ := DecodePath(f.Path)
				if !strings.Contains(name, "part-0") || !strings.HasSuffix(name, "-c000.snappy.parquet") {
					t.Errorf("file name %q", name)
				}
				if parts != nil && !strings.HasPrefix(name, "part=") {
					t.Errorf("partitioned file %q not in a partition folder", name)
				}
			}
			if parts != nil {
				if snap.NumFiles() != 3 {
					t.Errorf("files = %d, want one per partition", snap.NumFiles())
				}
				var dirs []string
				for _, f := range snap.Files() {
					name, _ := DecodePath(f.Path)
					dirs = append(dirs, name[:strings.LastIndexByte(name, '/')])
				}
				sort.Strings(dirs)
				wantDirs := []string{"part=__HIVE_DEFAULT_PARTITION__", "part=a", "part=x y%2F%3D%25"}
				if !slices.Equal(dirs, wantDirs) {
					t.Errorf("partition folders %q, want %q", dirs, wantDirs)
				}
			}
			ci, err := snap.CommitInfo(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if ci["operation"] != "WRITE" || ci["engineInfo"] != EngineInfo || ci["isBlindAppend"] != true || ci["txnId"] == nil {
				t.Errorf("commitInfo %v", ci)
			}
		})
	}
}

func TestAppendRollsFiles(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	tb := newTable(t, s)
	if _, err := tb.Append(ctx, Rows(rowsOf(0, 5000, "p")), WriteOptions{TargetFileSize: 16 << 10}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	if snap.NumFiles() < 3 {
		t.Errorf("NumFiles = %d, want several at a 16 KiB target", snap.NumFiles())
	}
	var total int64
	for _, f := range snap.Files() {
		n, ok := f.NumRecords()
		if !ok {
			t.Fatalf("no numRecords in %s", f.Stats)
		}
		total += n
	}
	if total != 5000 {
		t.Errorf("numRecords sum %d", total)
	}
}

func TestDeleteUpsertDeleteKeys(t *testing.T) {
	ctx := context.Background()
	for _, parts := range [][]string{nil, {"part"}} {
		t.Run(fmt.Sprint(parts), func(t *testing.T) {
			s := memStore(t)
			tb := newTable(t, s, parts...)
			// Three files: ids 0-99, 100-199, 200-299.
			for i := int64(0); i < 3; i++ {
				if _, err := tb.Append(ctx, Rows(rowsOf(i*100, i*100+100, fmt.Sprint("p", i))), WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			model := map[int64][]any{}
			for i := int64(0); i < 300; i++ {
				model[i] = row(i, fmt.Sprint("n", i), fmt.Sprint("p", i/100))
			}
			check := func(step string) {
				t.Helper()
				var want [][]any
				for _, r := range model {
					want = append(want, r)
				}
				if _, got := tableRows(t, s); !slices.Equal(got, render(want)) {
					t.Fatalf("%s: table has %d rows, model %d", step, len(got), len(want))
				}
			}
			// Delete ids 10..19 with a key filter: only the first file is rewritten.
			var keys []any
			for i := int64(10); i < 20; i++ {
				keys = append(keys, i)
				delete(model, i)
			}
			res, err := tb.Delete(ctx, func(r []any) bool { return r[0].(int64) >= 10 && r[0].(int64) < 20 },
				DeleteOptions{Filter: &KeyFilter{Column: "id", Keys: keys}})
			if err != nil {
				t.Fatal(err)
			}
			if res.FilesRemoved != 1 || res.RowsDeleted != 10 || res.RowsCopied != 90 || res.Version != 4 {
				t.Errorf("Delete result %+v", res)
			}
			check("delete")
			// Nothing matches: no commit.
			res, err = tb.Delete(ctx, func(r []any) bool { return false }, DeleteOptions{})
			if err != nil || res.Committed || res.Version != 4 {
				t.Errorf("no-op delete: %+v %v", res, err)
			}
			// Upsert: update 150, 250 (two files) and insert 1000.
			src := [][]any{row(150, "updated", "p1"), row(250, "updated", "p2"), row(1000, "new", "p9")}
			res, err = tb.Upsert(ctx, []string{"id"}, Rows(src), WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range src {
				model[r[0].(int64)] = r
			}
			if res.FilesRemoved != 2 || res.RowsUpdated != 2 || res.RowsInserted != 1 {
				t.Errorf("Upsert result %+v", res)
			}
			check("upsert")
			// DeleteKeys.
			res, err = tb.DeleteKeys(ctx, "id", []any{int64(0), int64(1000), int64(99999)}, WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			delete(model, 0)
			delete(model, 1000)
			if res.RowsDeleted != 2 {
				t.Errorf("DeleteKeys result %+v", res)
			}
			check("deletekeys")
			// Duplicate source keys are refused.
			if _, err := tb.Upsert(ctx, []string{"id"}, Rows([][]any{row(1, "a", ""), row(1, "b", "")}), WriteOptions{}); err == nil {
				t.Error("duplicate source keys accepted")
			}
			// Optimize compacts small files into one file per partition.
			extra := rowsOf(2000, 2010, "p0")
			if _, err := tb.Append(ctx, Rows(extra), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, r := range extra {
				model[r[0].(int64)] = r
			}
			m, err := tb.Optimize(ctx, OptimizeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !m.Committed || m.FilesRemoved < 2 {
				t.Errorf("Optimize metrics %+v", m)
			}
			check("optimize")
			snap, _ := tb.Snapshot(ctx)
			quiet := 0
			for _, f := range snap.Files() {
				if !f.DataChange {
					quiet++
				}
			}
			if quiet != m.FilesAdded {
				t.Errorf("%d files with dataChange=false, Optimize added %d", quiet, m.FilesAdded)
			}
			// Checkpoint, then a fresh Open reads through it.
			if err := tb.Checkpoint(ctx, snap.Version()); err != nil {
				t.Fatal(err)
			}
			if ok, _ := store.Exists(ctx, s, LastCheckpointKey); !ok {
				t.Error("no _last_checkpoint")
			}
			check("checkpoint")
			// Vacuum with zero retention deletes exactly the unreferenced files.
			all := listData(t, s)
			deleted, err := tb.Vacuum(ctx, 0, VacuumOptions{AllowShortRetention: true, Now: time.Now().Add(time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			live := map[string]bool{}
			for _, f := range snap.Files() {
				p, _ := DecodePath(f.Path)
				live[p] = true
			}
			for _, k := range all {
				if live[k] == slices.Contains(deleted, k) {
					t.Errorf("vacuum: %s live=%v deleted=%v", k, live[k], slices.Contains(deleted, k))
				}
			}
			check("vacuum")
		})
	}
}

func listData(t testing.TB, s store.Store) []string {
	var out []string
	for info, err := range s.List(context.Background(), store.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(info.Key, LogDir) {
			out = append(out, info.Key)
		}
	}
	return out
}

func TestVacuumRetention(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	tb := newTable(t, s)
	tb.Append(ctx, Rows(rowsOf(0, 10, "")), WriteOptions{})
	tb.Append(ctx, Rows(rowsOf(10, 20, "")), WriteOptions{})
	if _, err := tb.Optimize(ctx, OptimizeOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Vacuum(ctx, time.Hour, VacuumOptions{}); err == nil {
		t.Error("short retention accepted without AllowShortRetention")
	}
	// Within the retention window nothing goes.
	got, err := tb.Vacuum(ctx, time.Hour, VacuumOptions{AllowShortRetention: true})
	if err != nil || len(got) != 0 {
		t.Errorf("vacuum within retention deleted %v, %v", got, err)
	}
	// Dry run lists without deleting.
	later := time.Now().Add(2 * time.Hour)
	got, _ = tb.Vacuum(ctx, time.Hour, VacuumOptions{AllowShortRetention: true, DryRun: true, Now: later})
	if len(got) != 2 || len(listData(t, s)) != 3 {
		t.Errorf("dry run: %v, files %v", got, listData(t, s))
	}
}

func TestSchemaEvolution(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	tb := newTable(t, s)
	tb.Append(ctx, Rows(rowsOf(0, 3, "")), WriteOptions{})
	wider := parseSchema(t, testSchema[:len(testSchema)-2]+`,{"name":"extra","type":"integer","nullable":true,"metadata":{}}]}`)
	r := append(row(3, "n3", ""), int32(7))
	if _, err := tb.Append(ctx, Rows([][]any{r}), WriteOptions{Schema: wider}); !errors.Is(err, ErrSchemaChange) {
		t.Fatalf("append with a new column without MergeSchema: %v", err)
	}
	if _, err := tb.Append(ctx, Rows([][]any{r}), WriteOptions{Schema: wider, MergeSchema: true}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	if !schema.Equal(snap.Schema(), wider) {
		t.Fatalf("schema after merge %s", snap.Schema())
	}
	got := scanRendered(t, snap)
	want := render([][]any{append(row(0, "n0", ""), nil), append(row(1, "n1", ""), nil), append(row(2, "n2", ""), nil), r})
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	changed := parseSchema(t, strings.Replace(testSchema, `"name":"name","type":"string"`, `"name":"name","type":"integer"`, 1))
	if _, err := tb.Append(ctx, Rows(nil), WriteOptions{Schema: changed, MergeSchema: true}); !errors.Is(err, ErrSchemaChange) {
		t.Errorf("type change: %v", err)
	}
}

func TestWriterFeatures(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		opts   CreateOptions
		create bool // Create itself refuses
		op     func(*Table) error
	}{
		{"appendOnly delete", CreateOptions{Configuration: map[string]string{"delta.appendOnly": "true"}}, false,
			func(tb *Table) error {
				_, err := tb.Delete(ctx, func([]any) bool { return true }, DeleteOptions{})
				return err
			}},
		{"appendOnly upsert", CreateOptions{Configuration: map[string]string{"delta.appendOnly": "true"}}, false,
			func(tb *Table) error { _, err := tb.Upsert(ctx, []string{"id"}, Rows(nil), WriteOptions{}); return err }},
		{"check constraint", CreateOptions{Configuration: map[string]string{"delta.constraints.pos": "id > 0"}}, true, nil},
		{"rowTracking", CreateOptions{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: []string{"rowTracking"}}}, true, nil},
		{"writer v8", CreateOptions{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 8}}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := memStore(t)
			tb, err := Create(ctx, s, parseSchema(t, testSchema), tc.opts)
			if tc.create {
				if !errors.Is(err, ErrUnsupportedFeature) {
					t.Fatalf("Create: %v, want ErrUnsupportedFeature", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Append(ctx, Rows(rowsOf(0, 2, "")), WriteOptions{}); err != nil {
				t.Fatalf("append: %v", err)
			}
			if err := tc.op(tb); !errors.Is(err, ErrUnsupportedFeature) {
				t.Errorf("op: %v, want ErrUnsupportedFeature", err)
			}
		})
	}
}

func TestAutomaticCheckpoint(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	tb, err := Create(ctx, s, parseSchema(t, testSchema), CreateOptions{Configuration: map[string]string{"delta.checkpointInterval": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 7; i++ {
		if _, err := tb.Append(ctx, Rows(rowsOf(i*10, i*10+10, "")), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []int64{3, 6} {
		if ok, _ := store.Exists(ctx, s, fmt.Sprintf("%s%020d.checkpoint.parquet", LogDir, v)); !ok {
			t.Errorf("no checkpoint at %d", v)
		}
	}
	// Reading through the checkpoint alone: delete the commits it covers.
	for v := int64(0); v <= 6; v++ {
		s.Delete(ctx, CommitKey(v), nil)
	}
	ver, got := tableRows(t, s)
	if ver != 7 || !slices.Equal(got, render(rowsOf(0, 70, ""))) {
		t.Errorf("after checkpoint: version %d, %d rows", ver, len(got))
	}
}

func TestAppIDIdempotence(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	tb := newTable(t, s)
	if _, err := tb.Append(ctx, Rows(rowsOf(0, 1, "")), WriteOptions{AppID: "app", AppVersion: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Append(ctx, Rows(rowsOf(1, 2, "")), WriteOptions{AppID: "app", AppVersion: 1}); !errors.Is(err, ErrConflict) {
		t.Errorf("replayed app version: %v, want ErrConflict", err)
	}
}

func TestCreateProtocolForTimestampNTZ(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	st := parseSchema(t, `{"type":"struct","fields":[{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]}`)
	tb, err := Create(ctx, s, st, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := tb.Snapshot(ctx)
	p := snap.Protocol()
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Contains(p.ReaderFeatures, "timestampNtz") || !slices.Contains(p.WriterFeatures, "timestampNtz") {
		t.Errorf("protocol %+v", p)
	}
	wall := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	if _, err := tb.Append(ctx, Rows([][]any{{wall}, {nil}}), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, got := tableRows(t, s); !slices.Equal(got, render([][]any{{wall}, {nil}})) {
		t.Errorf("rows %v", got)
	}
	// Column mapping without physical names is refused.
	_, err = Create(ctx, memStore(t), parseSchema(t, testSchema), CreateOptions{
		Protocol:      &Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
		Configuration: map[string]string{ColumnMappingModeKey: "name"}})
	if !errors.Is(err, ErrUnsupportedFeature) {
		t.Errorf("column-mapped Create without physical names: %v", err)
	}
}
