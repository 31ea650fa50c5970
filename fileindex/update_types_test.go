package fileindex

import (
	"context"
	"errors"
	"testing"

	"github.com/ariadne-go/ariadne/bloom"
)

const (
	updSchemaTable3   = `{"type":"struct","fields":[{"name":"Id","type":"string","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}`
	updSchemaTemporal = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}},{"name":"UpdatedAt","type":"timestamp","nullable":true,"metadata":{}}]}`
	updSchemaEvents   = `{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},{"name":"event_type","type":"string","nullable":true,"metadata":{}},{"name":"timestamp","type":"string","nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"name","type":"string","nullable":true,"metadata":{}},{"name":"category","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},{"name":"user_ids","type":{"type":"array","elementType":"long","containsNull":true},"nullable":true,"metadata":{}}]}`
	updSchemaArray    = `{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},{"name":"event_type","type":"string","nullable":true,"metadata":{}},{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`
)

// TestUpdateIndexTypes builds each index type over the spec's data files
// and asserts the main table's cells (§3.2–§3.7, §4.2).
func TestUpdateIndexTypes(t *testing.T) {
	ctx := context.Background()
	type def struct {
		regular  []string
		computed [][2]string
		exploded [][3]string
		temporal [][2]string
		bloom    []string
		ranges   []string
	}
	tests := []struct {
		name, schema, format string
		opts                 map[string]string
		files                []string
		def                  def
		want                 map[string]map[string]string // file → column → canonical cell
		wantSchema           map[string]string            // column → Spark type JSON
	}{
		{
			name: "computed (§8.8 computed_index)", schema: updSchemaTable3, format: "csv", opts: map[string]string{"header": "true"},
			files: []string{"table3_part0.csv", "table3_part1.csv"},
			def:   def{computed: [][2]string{{"Category", "substring(Id, 1, 4)"}}},
			want: map[string]map[string]string{
				"table3_part0.csv": {"Category": "[cat1,cat2]"},
				"table3_part1.csv": {"Category": "[cat1,cat3,cat4]"},
			},
			wantSchema: map[string]string{"Category": `{"type":"array","elementType":"string","containsNull":true}`},
		},
		{
			name: "exploded over a JSON array (§8.8 JSON exploded)", schema: updSchemaArray, format: "json", opts: map[string]string{"multiLine": "true"},
			files: []string{"array_test.json"},
			def:   def{exploded: [][3]string{{"users", "id", "user_id"}}, regular: []string{"event_type"}},
			want: map[string]map[string]string{
				"array_test.json": {"user_id": "[100,101,102]", "event_type": "[login,logout,purchase]"},
			},
			wantSchema: map[string]string{"user_id": `{"type":"array","elementType":"long","containsNull":true}`},
		},
		{
			name: "two exploded mappings over line-delimited JSON", schema: updSchemaEvents, format: "json",
			files: []string{"events.json"},
			def:   def{exploded: [][3]string{{"tags", "name", "tag_name"}, {"tags", "category", "tag_category"}}, regular: []string{"event_type"}},
			want: map[string]map[string]string{
				"events.json": {
					"tag_name":     "[checkout,desktop,homepage,mobile,product-page,registration]",
					"tag_category": "[commerce,device,navigation,onboarding]",
					"event_type":   "[page_view,purchase,signup]",
				},
			},
		},
		{
			name: "computed over JSON (§8.8 JSON computed)", schema: updSchemaArray, format: "json", opts: map[string]string{"multiLine": "true"},
			files: []string{"array_test.json"},
			def:   def{computed: [][2]string{{"event_prefix", "substring(event_id, 1, 1)"}}},
			want:  map[string]map[string]string{"array_test.json": {"event_prefix": "[e]"}},
		},
		{
			name: "temporal: latest per key (T0/T1)", schema: updSchemaTemporal, format: "csv", opts: map[string]string{"header": "true"},
			files: []string{"temporal_part0.csv", "temporal_part1.csv"},
			def:   def{temporal: [][2]string{{"Id", "UpdatedAt"}}},
			want: map[string]map[string]string{
				"temporal_part0.csv": {"Id": "[[1,2024-01-15T10:00:00Z],[2,2024-01-15T10:00:00Z],[3,2024-01-15T10:00:00Z],[4,2024-01-15T10:00:00Z]]"},
				"temporal_part1.csv": {"Id": "[[1,2024-06-15T12:00:00Z],[2,2024-03-15T11:00:00Z],[5,2024-06-15T12:00:00Z]]"},
			},
			wantSchema: map[string]string{"Id": `{"type":"array","elementType":{"type":"struct","fields":[{"name":"value","type":"integer","nullable":true,"metadata":{}},{"name":"max_ts","type":"timestamp","nullable":true,"metadata":{}}]},"containsNull":true}`},
		},
		{
			name: "range (§8.11 store min/max per file)", schema: updT1S, format: "csv", opts: map[string]string{"header": "true"},
			files: []string{"table1_part0.csv", "table1_part1.csv"},
			def:   def{ranges: []string{"Id", "Value"}},
			want: map[string]map[string]string{
				"table1_part0.csv": {"range_Id": "{1,3}", "range_Value": "{3,5}"},
				"table1_part1.csv": {"range_Id": "{1,4}", "range_Value": "{2,9}"},
			},
			wantSchema: map[string]string{"range_Id": `{"type":"struct","fields":[{"name":"min","type":"integer","nullable":true,"metadata":{}},{"name":"max","type":"integer","nullable":true,"metadata":{}}]}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newUpdEnv(t)
			ix := e.open("types", tc.schema, tc.format, tc.opts)
			uris := map[string]string{}
			for _, f := range tc.files {
				uris[f] = updDataURI(t, f)
				updAddFiles(t, ix, uris[f])
			}
			d := tc.def
			for _, c := range d.regular {
				must(t, ix.AddIndex(ctx, c))
			}
			for _, c := range d.computed {
				must(t, ix.AddComputedIndex(ctx, c[0], c[1]))
			}
			for _, c := range d.exploded {
				must(t, ix.AddExplodedFieldIndex(ctx, c[0], c[1], c[2]))
			}
			for _, c := range d.temporal {
				must(t, ix.AddTemporalIndex(ctx, c[0], c[1]))
			}
			for _, c := range d.bloom {
				must(t, ix.AddBloomIndex(ctx, c, 0.01))
			}
			for _, c := range d.ranges {
				must(t, ix.AddRangeIndex(ctx, c))
			}
			updMust(t, e.fi(ix))
			got := updMainTable(t, ix)
			sch, rows := updTableRows(t, ix.Root(), ix.Paths().Main)
			for f, cols := range tc.want {
				for c, v := range cols {
					g := got[uris[f]][c]
					if len(c) > 6 && c[:6] == "range_" {
						for i, fl := range sch.Fields {
							if fl.Name == c {
								for _, r := range rows {
									if r[0] == uris[f] {
										g = updRangeCanon(r[i])
									}
								}
							}
						}
					}
					if g != v {
						t.Errorf("%s %s = %s, want %s", f, c, g, v)
					}
				}
			}
			for c, js := range tc.wantSchema {
				f, ok := sch.Field(c)
				if !ok {
					t.Errorf("main table lacks %s", c)
					continue
				}
				if got := marshalType(f.Type); got != js {
					t.Errorf("%s type %s, want %s", c, got, js)
				}
			}
		})
	}
}

// TestUpdateBloom: a bloom index stores one Guava filter per file that
// holds exactly that file's values (§3.5), sized from its distinct count.
func TestUpdateBloom(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("bloom", updT1S, "csv", map[string]string{"header": "true"})
	p0, p1 := updDataURI(t, "table1_part0.csv"), updDataURI(t, "table1_part1.csv")
	updAddFiles(t, ix, p0, p1)
	must(t, ix.AddBloomIndex(ctx, "Id", 0.01))
	updMust(t, e.fi(ix))
	sch, rows := updTableRows(t, ix.Root(), ix.Paths().Main)
	bi := fieldIndex(sch, BloomColumn("Id"))
	if bi < 0 {
		t.Fatalf("no %s column", BloomColumn("Id"))
	}
	want := map[string][]string{p0: {"1", "2", "3"}, p1: {"1", "3", "4"}}
	for _, r := range rows {
		f, err := bloom.Unmarshal(r[bi].([]byte))
		if err != nil {
			t.Fatal(err)
		}
		// n = 3 distinct values at 1%: m = floor(3·9.585) = 28 bits → 1 word.
		if f.NumBits() != 64 || f.NumHashes() != 7 {
			t.Errorf("%s: %d bits, k=%d", r[0], f.NumBits(), f.NumHashes())
		}
		for _, v := range want[r[0].(string)] {
			if !f.MightContainString(v) {
				t.Errorf("%s: filter misses %s", r[0], v)
			}
		}
	}
}

// TestComputedMalformed: a malformed computed expression fails the update
// with a typed error before anything is written.
func TestComputedMalformed(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("badsql", updT1S, "csv", map[string]string{"header": "true"})
	updAddFiles(t, ix, updDataURI(t, "table1_part0.csv"))
	must(t, ix.AddIndex(ctx, "Id"))
	must(t, ix.AddComputedIndex(ctx, "broken", "Id +* )"))
	_, err := e.fi(ix).Update(ctx, UpdateOptions{})
	var ce *ComputedIndexError
	if !errors.Is(err, ErrComputedExpression) || !errors.As(err, &ce) || ce.Name != "broken" {
		t.Fatalf("want ComputedIndexError for broken, got %v", err)
	}
	if v := updTableVersion(t, ix.Root(), ix.Paths().Main); v != -1 {
		t.Errorf("main table written (version %d)", v)
	}
	if v := updTableVersion(t, ix.Root(), ix.Paths().Staging); v != -1 {
		t.Errorf("staging written (version %d)", v)
	}
}

// TestBackfillRange is §8.11 "should backfill range index on existing
// files": a range index added after the first update is built for the
// files already indexed, and a third update is a no-op.
func TestBackfillRange(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("backfill", updT1S, "csv", map[string]string{"header": "true"})
	p0, p1 := updDataURI(t, "table1_part0.csv"), updDataURI(t, "table1_part1.csv")
	updAddFiles(t, ix, p0, p1)
	must(t, ix.AddIndex(ctx, "Id"))
	fi := e.fi(ix)
	updMust(t, fi)
	must(t, ix.AddRangeIndex(ctx, "Version"))
	res := updMust(t, fi)
	if res.BackfilledFiles != 2 || res.NewFiles != 0 {
		t.Fatalf("backfill result %+v", res)
	}
	sch, rows := updTableRows(t, ix.Root(), ix.Paths().Main)
	ri := fieldIndex(sch, RangeColumn("Version"))
	if ri < 0 || len(rows) != 2 {
		t.Fatalf("schema %s, %d rows", sch.Marshal(), len(rows))
	}
	want := map[string]string{p0: "{1,2}", p1: "{1,3}"}
	for _, r := range rows {
		if got := updRangeCanon(r[ri]); got != want[r[0].(string)] {
			t.Errorf("%s range_Version %s, want %s", r[0], got, want[r[0].(string)])
		}
	}
	// The backfill did not double the size total (§5.4).
	must(t, ix.RefreshMetadata(ctx))
	if tot, want := ix.Metadata().TotalIndexedFileSize, updFileSize(t, p0)+updFileSize(t, p1); tot != want {
		t.Errorf("total %d, want %d", tot, want)
	}
	before := updTableVersion(t, ix.Root(), ix.Paths().Main)
	if res := updMust(t, fi); res.Batches != 0 {
		t.Errorf("third update did work: %+v", res)
	}
	if after := updTableVersion(t, ix.Root(), ix.Paths().Main); after != before {
		t.Errorf("third update committed %d → %d", before, after)
	}
}

// TestBackfillAndNewFiles: a run that adds a column and a file handles
// both (§5.4): both files then carry both columns.
func TestBackfillAndNewFiles(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("both", updT1S, "csv", map[string]string{"header": "true"})
	p0, p1 := updDataURI(t, "table1_part0.csv"), updDataURI(t, "table1_part1.csv")
	updAddFiles(t, ix, p0)
	must(t, ix.AddIndex(ctx, "Id"))
	fi := e.fi(ix)
	updMust(t, fi)
	must(t, ix.AddIndex(ctx, "Version"))
	updAddFiles(t, ix, p1)
	res := updMust(t, fi)
	if res.BackfilledFiles != 1 || res.NewFiles != 1 {
		t.Fatalf("result %+v", res)
	}
	got := updMainTable(t, ix)
	if got[p0]["Version"] != "[1,2]" || got[p1]["Version"] != "[1,2,3]" || got[p1]["Id"] != "[1,3,4]" {
		t.Fatalf("main table %v", got)
	}
}

// TestUpdateNoIndexColumns: with no index definition at all, files still
// get rows (filename, file_size), and a later update adds rows instead of
// overwriting the table (§9 item 17 fixed).
func TestUpdateNoIndexColumns(t *testing.T) {
	e := newUpdEnv(t)
	ix := e.open("bare", updT1S, "csv", map[string]string{"header": "true"})
	p0, p1 := updDataURI(t, "table1_part0.csv"), updDataURI(t, "table1_part1.csv")
	updAddFiles(t, ix, p0)
	fi := e.fi(ix)
	updMust(t, fi)
	updAddFiles(t, ix, p1)
	updMust(t, fi)
	got := updMainTable(t, ix)
	if len(got) != 2 || got[p0][FileSizeColumn] != updItoa(updFileSize(t, p0)) || got[p1][FileSizeColumn] != updItoa(updFileSize(t, p1)) {
		t.Fatalf("main table %v", got)
	}
}

// TestUpdateBloomZeroBits: an fpr so close to 1 that a one-value file's
// filter would have no bits fails the update with a typed error before
// anything is staged (§9 item 22).
func TestUpdateBloomZeroBits(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	ix := e.open("zerobits", updT1S, "csv", map[string]string{"header": "true"})
	// table2_part0 has one row: n = 1, and m = floor(−ln 0.99 / ln²2) = 0.
	updAddFiles(t, ix, updDataURI(t, "table2_part0.csv"))
	must(t, ix.AddBloomIndex(ctx, "Id", 0.99))
	_, err := e.fi(ix).Update(ctx, UpdateOptions{})
	var be *BloomBuildError
	if !errors.As(err, &be) || !errors.Is(err, bloom.ErrZeroBits) || be.Column != "Id" {
		t.Fatalf("want BloomBuildError(ErrZeroBits) for Id, got %v", err)
	}
	if v := updTableVersion(t, ix.Root(), ix.Paths().Staging); v != -1 {
		t.Errorf("staging written (version %d)", v)
	}
}

// TestUpdateNothingTracked: an update of an index without tracked files
// succeeds and creates no table.
func TestUpdateNothingTracked(t *testing.T) {
	e := newUpdEnv(t)
	ix := e.open("empty", updT1S, "csv", map[string]string{"header": "true"})
	must(t, ix.AddIndex(context.Background(), "Id"))
	res := updMust(t, e.fi(ix))
	if res.Batches != 0 || res.NewFiles != 0 {
		t.Errorf("result %+v", res)
	}
	if v := updTableVersion(t, ix.Root(), ix.Paths().Main); v != -1 {
		t.Errorf("main table created (version %d)", v)
	}
}
