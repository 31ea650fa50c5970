package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// TestRowIndexMaintenance: compact merges a row index's fragments and keeps
// every lookup's answer; after delete-files it drops the removed file's
// entries; describe reports each row index as its manifest says;
// drop-row-index removes one row index (its lookups then fail with the
// typed error) and refuses an unknown name.
func TestRowIndexMaintenance(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lakeDir, lf := genLake(t, lakegen.Config{Seed: 11, TargetBytes: 1 << 20, Days: 2, FilesPerDay: 2, Users: 300, Tracks: 500, Sorted: true})
	if len(lf) != 4 {
		t.Fatalf("lake: %d files", len(lf))
	}
	files := make([]string, len(lf))
	for i, f := range lf {
		files[i] = filepath.Join(lakeDir, f.Key)
	}
	mustRun := func(args ...string) string { t.Helper(); return runOK(t, dir, args...) }
	mustJSON := func(args ...string) map[string]any {
		t.Helper()
		return decode(t, mustRun(append([]string{"--json"}, args...)...))
	}
	// manifest reads a row index's newest manifest with the rowindex package.
	manifest := func(name string) *rowindex.Manifest {
		t.Helper()
		var m *rowindex.Manifest
		g := &globals{storeURL: "file://" + dir, env: Env{LookupEnv: func(string) (string, bool) { return "", false }}}
		err := g.withIndex(ctx, "plays", func(ix *index.Index) error {
			ri, err := rowindex.Open(ctx, indexFolder(ix), name, rowindex.Options{})
			if err == nil {
				m = ri.Manifest()
			}
			return err
		})
		if err != nil {
			t.Fatalf("open row index %s: %v", name, err)
		}
		return m
	}
	// describe returns describe's row indexes by name, each checked against
	// its manifest.
	describe := func() map[string]map[string]any {
		t.Helper()
		out := map[string]map[string]any{}
		for _, r := range mustJSON("describe", "plays")["row_indexes"].([]any) {
			r := r.(map[string]any)
			name := r["name"].(string)
			out[name] = r
			m := manifest(name)
			aggs := make([]any, len(m.Aggregates))
			for i, a := range m.Aggregates {
				aggs[i] = a.String()
			}
			cover := make([]any, len(m.Cover))
			for i, c := range m.Cover {
				cover[i] = c
			}
			want := map[string]any{
				"name": m.Name, "key": m.Key, "kind": string(m.Kind), "cover": cover, "aggregates": aggs,
				"version": float64(m.Version), "files": float64(len(m.Files)), "removed": float64(len(m.Removed)),
				"entries": float64(m.Entries()), "fragments": float64(len(m.Fragments)),
				"index_bytes": float64(m.IndexBytes()), "data_bytes": float64(m.DataBytes()),
				"index_fraction":   float64(m.IndexBytes()) / float64(m.DataBytes()),
				"committed":        m.Committed.UTC().Format(time.RFC3339Nano),
				"skipped":          make([]any, len(m.Skipped)),
				"format_version":   float64(m.FormatVersion),
				"bucket_hash":      nil,
				"shape_files":      0.0, // no `warm --save-shapes` here
				"shape_file_bytes": 0.0,
			}
			if m.Kind == rowindex.KindHash {
				want["bucket_hash"] = m.BucketHash.String()
			}
			if g, w := jsonText(t, r), jsonText(t, want); g != w {
				t.Fatalf("describe row index %s:\n got %s\nwant %s", name, g, w)
			}
		}
		return out
	}
	// lookups answers a fixed set of queries on both row indexes, as text.
	keys := []string{
		"user_id=" + itoa(lakegen.UserID(0)), "user_id=" + itoa(lakegen.UserID(3)), "user_id=" + itoa(lakegen.UserID(40)),
		"duration_ms=180000..180500", "duration_ms=..30500",
	}
	lookups := func(keys []string) []string {
		t.Helper()
		var out []string
		for _, k := range keys {
			res := mustJSON("lookup", "plays", "--key", k)
			rows := make([]string, 0, len(res["rows"].([]any)))
			for _, r := range res["rows"].([]any) {
				rows = append(rows, jsonText(t, r))
			}
			slices.Sort(rows) // fragments may order entries of other files differently
			out = append(out, k+": "+strings.Join(rows, ",")+" aggregates "+jsonText(t, res["aggregates"]))
		}
		return out
	}

	mustRun("create", "plays", "--format", "parquet", "--infer-from", files[0])
	mustRun("add-files", "plays", files[0], files[1])
	mustRun("add-row-index", "plays", "--key", "user_id", "--cover", "duration_ms", "--aggregate", "count")
	mustRun("add-files", "plays", files[2], files[3])
	mustRun("update", "plays") // the second fragment of user_id
	mustRun("add-row-index", "plays", "--key", "duration_ms", "--kind", "sorted", "--name", "by_duration", "--aggregate", "sum:duration_ms")

	d := describe()
	if len(d) != 2 || d["user_id"]["fragments"] != 2.0 || d["user_id"]["files"] != 4.0 || d["by_duration"]["fragments"] != 1.0 {
		t.Fatalf("describe before compact: %v", d)
	}
	// A new hash row index names its bucket hash and format 3; a sorted one
	// has no bucket hash and stays at format 2.
	if d["user_id"]["bucket_hash"] != "fnv1a-fmix64" || d["user_id"]["format_version"] != 3.0 ||
		d["by_duration"]["bucket_hash"] != nil || d["by_duration"]["format_version"] != 2.0 {
		t.Fatalf("describe: bucket hash and format: %v", d)
	}
	if human := mustRun("describe", "plays"); !strings.Contains(human, "BUCKET HASH") || !strings.Contains(human, "fnv1a-fmix64") {
		t.Fatalf("describe output:\n%s", human)
	}
	before := lookups(keys)
	for i, b := range before {
		if !strings.Contains(b, `"duration_ms":`) {
			t.Fatalf("%s: no rows", keys[i])
		}
	}

	// Compact: one fragment, the same entries and answers.
	c := mustJSON("compact", "plays")["row_indexes"].(map[string]any)
	ui := c["user_id"].(map[string]any)
	if ui["fragments_before"] != 2.0 || ui["fragments_after"] != 1.0 || ui["entries_before"] != ui["entries_after"] ||
		ui["removed_files"] != 0.0 || ui["index_bytes_before"] != d["user_id"]["index_bytes"] {
		t.Fatalf("compact user_id: %v", ui)
	}
	if bd := c["by_duration"].(map[string]any); bd["fragments_after"] != 1.0 || bd["entries_after"] != d["by_duration"]["entries"] {
		t.Fatalf("compact by_duration: %v", bd)
	}
	d = describe()
	if d["user_id"]["fragments"] != 1.0 || d["user_id"]["index_bytes"] != ui["index_bytes_after"] || d["user_id"]["version"] != ui["version"] {
		t.Fatalf("describe after compact: %v, compact said %v", d["user_id"], ui)
	}
	if after := lookups(keys); !slices.Equal(after, before) {
		t.Fatalf("lookups changed by compact:\n%s\n---\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
	}

	// delete-files leaves tombstones; compact drops their entries.
	mustRun("delete-files", "plays", files[0])
	d = describe()
	if d["user_id"]["removed"] != 1.0 || d["user_id"]["files"] != 3.0 || d["user_id"]["entries"] != ui["entries_after"] {
		t.Fatalf("describe after delete-files: %v", d["user_id"])
	}
	deleted := lookups(keys)
	if slices.Equal(deleted, before) {
		t.Fatal("delete-files changed no lookup")
	}
	out := mustRun("compact", "plays")
	if !strings.Contains(out, "row index user_id: fragments 1 → 1") || !strings.Contains(out, "1 removed file(s) dropped") {
		t.Fatalf("compact output:\n%s", out)
	}
	d2 := describe()
	for _, n := range []string{"user_id", "by_duration"} {
		if d2[n]["removed"] != 0.0 || d2[n]["entries"].(float64) >= d[n]["entries"].(float64) || d2[n]["index_bytes"].(float64) >= d[n]["index_bytes"].(float64) {
			t.Fatalf("%s after compacting a removal: %v, before %v", n, d2[n], d[n])
		}
	}
	if after := lookups(keys); !slices.Equal(after, deleted) {
		t.Fatalf("lookups changed by compacting a removal:\n%s\n---\n%s", strings.Join(deleted, "\n"), strings.Join(after, "\n"))
	}

	// vacuum deletes a row index's orphan fragments (a writer that crashed
	// before committing), never the listed ones.
	g := &globals{storeURL: "file://" + dir, env: Env{LookupEnv: func(string) (string, bool) { return "", false }}}
	if err := g.withIndex(ctx, "plays", func(ix *index.Index) error {
		return store.WriteAll(ctx, indexFolder(ix), rowindex.Folder+"/user_id/fragments/orphan.parquet", []byte("PAR1"), nil)
	}); err != nil {
		t.Fatal(err)
	}
	kept := mustJSON("vacuum", "plays")["row_indexes"].(map[string]any)["user_id"].(map[string]any)
	if kept["kept"] != 1.0 || len(kept["deleted"].([]any)) != 0 {
		t.Fatalf("vacuum with the default retention: %v", kept)
	}
	vac := mustJSON("vacuum", "plays", "--retain", "0s")["row_indexes"].(map[string]any)["user_id"].(map[string]any)
	if del := vac["deleted"].([]any); len(del) != 1 || del[0] != "fragments/orphan.parquet" {
		t.Fatalf("vacuum --retain 0s: %v", vac)
	}
	if after := lookups(keys); !slices.Equal(after, deleted) {
		t.Fatalf("lookups changed by vacuum")
	}

	// drop-row-index removes one row index and nothing else.
	if got := mustJSON("drop-row-index", "plays", "by_duration"); got["dropped"] != "by_duration" {
		t.Fatalf("drop-row-index: %v", got)
	}
	if d := describe(); len(d) != 1 || d["user_id"] == nil {
		t.Fatalf("describe after drop: %v", d)
	}
	code, out, _ := run(t, dir, "--json", "lookup", "plays", "--key", "duration_ms=..30500")
	if code != 1 || decode(t, out)["kind"] != "row index not found" {
		t.Fatalf("lookup on a dropped row index: exit %d, %s", code, out)
	}
	if got := lookups(keys[:3]); !slices.Equal(got, deleted[:3]) {
		t.Fatalf("user_id lookups changed by dropping another row index: %v", got)
	}
	human := mustRun("describe", "plays")
	if !strings.Contains(human, "ROW INDEX") || !strings.Contains(human, "user_id") || strings.Contains(human, "by_duration") {
		t.Fatalf("describe output:\n%s", human)
	}

	// Unknown and invalid names.
	for _, tc := range []struct {
		args       []string
		code       int
		kind, text string
	}{
		{[]string{"drop-row-index", "plays", "by_duration"}, 1, "row index not found", `no row index "by_duration" (row indexes: user_id)`},
		{[]string{"drop-row-index", "nosuch", "user_id"}, 1, "index not found", ""},
		{[]string{"drop-row-index", "plays", "../user_id"}, 2, "usage", "invalid row index name"},
		{[]string{"drop-row-index", "plays"}, 2, "usage", ""},
	} {
		code, out, errs := run(t, dir, append([]string{"--json"}, tc.args...)...)
		if code != tc.code || decode(t, out)["kind"] != tc.kind || !strings.Contains(decode(t, out)["error"].(string), tc.text) || errs != "" {
			t.Errorf("%v: exit %d, %s, stderr %q; want exit %d, kind %q, %q", tc.args, code, out, errs, tc.code, tc.kind, tc.text)
		}
	}
	if m := manifest("user_id"); len(m.Files) != 3 {
		t.Fatalf("user_id after the failed drops: %d files", len(m.Files))
	}
}

// jsonText renders v as JSON (map keys sorted) for comparisons.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// indexFolder is the store view of an index's folder, where its row
// indexes live (the tests reach into it; the commands go through the face).
func indexFolder(ix *index.Index) store.Store { return store.Sub(ix.Root(), ix.Paths().Dir) }
