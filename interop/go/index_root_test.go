package interop

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/store"
)

// testData is the shared test data folder, relative to this package.
const testData = "../../../shared/testdata/ariadne/data"

// gsonFieldOrder is the order of metadata.json's fields (spec §4.6): Gson
// writes the fields of IndexMetadata in declaration order, null ones omitted.
var gsonFieldOrder = []string{
	"format", "schema", "indexes", "computed_indexes", "exploded_field_indexes", "bloom_indexes",
	"temporal_indexes", "read_options", "range_indexes", "auto_bloom_indexes", "total_indexed_file_size",
	"batches_since_compact", "metadata_version", "storage_format_version",
}

// indexCheck is index_check.py's output.
type indexCheck struct {
	Metadata map[string]struct {
		Keys  []string       `json:"keys"`
		Value map[string]any `json:"value"`
		Error *string        `json:"error"`
	} `json:"metadata"`
	Tables map[string]CheckResult `json:"tables"`
}

// TestIndexRootReadBySpark is issue 5 item 4c: a store root made by our index
// package (create, add files, regular/bloom/range definitions) is readable on
// the Spark side — each FileList is a Delta table that Spark + delta-spark and
// delta-rs read with exactly the rows our delta reader gives, and each
// metadata.json parses with Python's json, fields in Gson's order with the
// values we set. (Opening the root with the Spark Ariadne library itself
// waits for its JARs: docs/interop.md, "Ariadne releases".)
func TestIndexRootReadBySpark(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 5*time.Minute)
	rootDir := t.TempDir()
	root := openStore(t, ctx, rootDir)
	cat := index.NewCatalog(root, index.Options{})

	data, err := filepath.Abs(testData)
	if err != nil {
		t.Fatal(err)
	}
	csvSchema := mustSchema(`{"type":"struct","fields":[` +
		`{"name":"Id","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"Version","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`)
	type def struct {
		name    string
		files   []string
		regular []string
		bloom   map[string]float64
		ranges  []string
	}
	defs := []def{
		{name: "regular", files: []string{"table1_part0.csv", "table1_part1.csv"}, regular: []string{"Id", "Version"}},
		{name: "bloom", files: []string{"table1_part0.csv", "table1_part1.csv"}, bloom: map[string]float64{"Id": 0.01}},
		{name: "range <&'=>", files: []string{"table1_part0.csv"}, ranges: []string{"Value"}, regular: []string{"Id"}},
	}
	wantFiles := map[string][]string{}
	for _, d := range defs {
		ix, err := cat.Open(ctx, d.name, index.OpenOptions{Schema: csvSchema, Format: "csv", ReadOptions: map[string]string{"header": "true"}})
		if err != nil {
			t.Fatalf("open %s: %v", d.name, err)
		}
		var in []string
		for _, f := range d.files {
			in = append(in, filepath.Join(data, f))
		}
		uris, err := ix.ExpandFiles(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := ix.AddFiles(ctx, uris...); err != nil || n != len(uris) {
			t.Fatalf("%s: AddFiles = %d, %v; want %d", d.name, n, err, len(uris))
		}
		for _, c := range d.regular {
			if err := ix.AddIndex(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		for c, fpr := range d.bloom {
			if err := ix.AddBloomIndex(ctx, c, fpr); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range d.ranges {
			if err := ix.AddRangeIndex(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		wantFiles[d.name] = uris
	}

	out, err := e.RunScript(ctx, "index_check.py", rootDir)
	if err != nil {
		t.Fatal(err)
	}
	var got indexCheck
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("index_check.py output: %v", err)
	}

	for _, d := range defs {
		md, ok := got.Metadata[d.name]
		if !ok {
			t.Errorf("%s: no metadata.json found by Python", d.name)
			continue
		}
		if md.Error != nil {
			t.Errorf("%s: Python's json refuses metadata.json: %s", d.name, *md.Error)
			continue
		}
		var order []string // gsonFieldOrder restricted to the keys present
		for _, k := range gsonFieldOrder {
			if slices.Contains(md.Keys, k) {
				order = append(order, k)
			}
		}
		if !slices.Equal(md.Keys, order) {
			t.Errorf("%s: metadata.json keys %v, want Gson order %v", d.name, md.Keys, order)
		}
		for _, k := range []string{"format", "schema", "indexes", "bloom_indexes", "range_indexes", "read_options", "metadata_version", "storage_format_version"} {
			if !slices.Contains(md.Keys, k) {
				t.Errorf("%s: metadata.json lacks %q", d.name, k)
			}
		}
		v := md.Value
		if v["format"] != "csv" || v["schema"] != csvSchema.Marshal() {
			t.Errorf("%s: format %v schema %v", d.name, v["format"], v["schema"])
		}
		if ro, _ := v["read_options"].(map[string]any); ro["header"] != "true" {
			t.Errorf("%s: read_options %v", d.name, v["read_options"])
		}
		if v["metadata_version"] != float64(10) || v["storage_format_version"] != float64(3) {
			t.Errorf("%s: versions %v/%v, want 10/3", d.name, v["metadata_version"], v["storage_format_version"])
		}
		if got, want := anyStrings(v["indexes"]), d.regular; !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%s: indexes %v, want %v", d.name, got, want)
		}
		var bloom map[string]float64
		for _, b := range anySlice(v["bloom_indexes"]) {
			m, _ := b.(map[string]any)
			if bloom == nil {
				bloom = map[string]float64{}
			}
			c, _ := m["column"].(string)
			bloom[c], _ = m["fpr"].(float64)
		}
		if len(bloom)+len(d.bloom) > 0 && !equalMaps(bloom, d.bloom) {
			t.Errorf("%s: bloom_indexes %v, want %v", d.name, v["bloom_indexes"], d.bloom)
		}
		var ranges []string
		for _, r := range anySlice(v["range_indexes"]) {
			m, _ := r.(map[string]any)
			c, _ := m["column"].(string)
			ranges = append(ranges, c)
		}
		if !slices.Equal(ranges, d.ranges) {
			t.Errorf("%s: range_indexes %v, want %v", d.name, v["range_indexes"], d.ranges)
		}
	}

	// Every Delta table of the root (the FileLists; no main index table
	// exists before an update) is read by both engines as our reader reads it.
	seen := 0
	for _, d := range defs {
		paths, err := index.PathsFor(d.name)
		if err != nil {
			t.Fatal(err)
		}
		res, ok := got.Tables[paths.FileList]
		if !ok {
			t.Errorf("%s: FileList %q not found as a Delta table by index_check.py (found %v)", d.name, paths.FileList, keys(got.Tables))
			continue
		}
		seen++
		tbl, err := delta.Open(ctx, store.Sub(root, paths.FileList+"/"))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := scanLines(ctx, snap)
		if err != nil {
			t.Fatal(err)
		}
		if len(ours) != len(wantFiles[d.name]) {
			t.Errorf("%s: our reader sees %d FileList rows, want %d", d.name, len(ours), len(wantFiles[d.name]))
		}
		for _, eng := range []Engine{DeltaRS, Spark} {
			er := res.Engine(eng)
			if er == nil || er.Error != nil {
				t.Errorf("%s FileList read by %s: %v", d.name, eng, er)
				continue
			}
			if diff := diffLines(ours, er.Rows); diff != "" {
				t.Errorf("%s FileList read by %s: %s", d.name, eng, diff)
			}
			if er.EngineSchema == nil {
				t.Errorf("%s FileList read by %s: no schema", d.name, eng)
			} else if err := sameSchema(snap.Schema(), *er.EngineSchema); err != nil {
				t.Errorf("%s FileList read by %s: %v", d.name, eng, err)
			}
		}
		// The rows name exactly the files we added.
		files, err := cat.Get(ctx, d.name)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := files.Files(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, fe := range entries {
			names = append(names, fe.Name)
		}
		want := slices.Clone(wantFiles[d.name])
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s: FileList names %v, want %v", d.name, names, want)
		}
	}
	if seen != len(defs) {
		t.Errorf("found %d of %d FileLists", seen, len(defs))
	}
}

func anySlice(v any) []any { s, _ := v.([]any); return s }

func anyStrings(v any) []string {
	var out []string
	for _, x := range anySlice(v) {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func equalMaps(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
