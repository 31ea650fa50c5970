package metadata

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	fixtureDir    = "../testdata/ariadne/index_metadata"
	alpha37       = "../testdata/ariadne/fixtures/alpha37/index-root/metadata.json"
	alpha37Schema = `{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":false,"metadata":{}},` +
		`{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"integer","nullable":false,"metadata":{}}]},"containsNull":true},"nullable":false,"metadata":{}}]}`
)

// fixtureMetadata returns the record fixture vN.json must load into (§4.7):
// the fields up to version n carry the fixture's values, later fields their
// defaults.
func fixtureMetadata(n int) *Metadata {
	m := &Metadata{
		Format: "parquet", Schema: "not a real schema",
		Indexes: []string{"Test", "Test2"}, TotalIndexedFileSize: -1,
	}
	if n >= 2 {
		m.ComputedIndexes = NewStringMap("test", "expr1", "test2", "expr2")
	}
	if n >= 3 {
		m.ExplodedFieldIndexes = []ExplodedFieldIndex{{"users", "id", "user_id"}, {"tags", "name", "tag_name"}}
	}
	if n >= 4 {
		m.ReadOptions = NewStringMap("header", "true", "multiLine", "true")
	}
	if n >= 5 {
		m.BloomIndexes = []BloomIndex{{"transaction_id", 0.01}, {"session_id", 0.001}}
	}
	if n >= 6 {
		m.TemporalIndexes = []TemporalIndex{{"entity_id", "updated_at"}, {"user_id", "last_modified"}}
	}
	if n >= 7 {
		m.RangeIndexes = []RangeIndex{{"amount"}, {"score"}}
	}
	if n >= 8 {
		m.AutoBloomIndexes = []string{"Test", "Test2"}
	}
	if n >= 9 {
		m.TotalIndexedFileSize = 1048576
	}
	m.setDefaults()
	return m
}

// fixtures lists every stored metadata.json of the test data with the record
// it must load into and the golden file of its Gson rendering.
var fixtures = []struct {
	name, path string
	want       *Metadata
}{
	{"v1", fixtureDir + "/v1.json", fixtureMetadata(1)},
	{"v2", fixtureDir + "/v2.json", fixtureMetadata(2)},
	{"v3", fixtureDir + "/v3.json", fixtureMetadata(3)},
	{"v4", fixtureDir + "/v4.json", fixtureMetadata(4)},
	{"v5", fixtureDir + "/v5.json", fixtureMetadata(5)},
	{"v6", fixtureDir + "/v6.json", fixtureMetadata(6)},
	{"v7", fixtureDir + "/v7.json", fixtureMetadata(7)},
	{"v8", fixtureDir + "/v8.json", fixtureMetadata(8)},
	{"v9", fixtureDir + "/v9.json", fixtureMetadata(9)},
	{"alpha37", alpha37, func() *Metadata {
		m := &Metadata{Format: "json", Schema: alpha37Schema, TotalIndexedFileSize: -1,
			ExplodedFieldIndexes: []ExplodedFieldIndex{{"users", "id", "user_id"}}}
		m.setDefaults()
		return m
	}()},
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseFixtures checks every field of every fixture (§4.7, §8.3): earlier
// fields keep their values, later ones take their defaults, collections are
// never nil and the absent version markers stay absent.
func TestParseFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			m, err := Parse(mustRead(t, fx.path))
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(m, fx.want) {
				t.Errorf("got  %+v\nwant %+v", *m, *fx.want)
			}
			if m.Indexes == nil || m.ExplodedFieldIndexes == nil || m.BloomIndexes == nil || m.TemporalIndexes == nil ||
				m.RangeIndexes == nil || m.AutoBloomIndexes == nil {
				t.Errorf("nil collection after load: %+v", *m)
			}
			if m.MetadataVersion != nil || m.StorageFormatVersion != nil {
				t.Errorf("markers = %v, %v; want absent", m.MetadataVersion, m.StorageFormatVersion)
			}
			if m.BatchesSinceCompact != 0 {
				t.Errorf("batches_since_compact = %d, want 0", m.BatchesSinceCompact)
			}
			if !NeedsMigration(m) {
				t.Error("unversioned fixture must need migration")
			}
		})
	}
}

// TestSpec83 restates the named cases of §8.3 as counts, independently of
// the full-record table above.
func TestSpec83(t *testing.T) {
	load := func(n int) *Metadata {
		t.Helper()
		m, err := Parse(mustRead(t, filepath.Join(fixtureDir, "v"+string(rune('0'+n))+".json")))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	type counts struct{ regular, computed, exploded, readOpts, bloom, temporal, rng, autoBloom int }
	count := func(m *Metadata) counts {
		return counts{len(m.Indexes), m.ComputedIndexes.Len(), len(m.ExplodedFieldIndexes), m.ReadOptions.Len(),
			len(m.BloomIndexes), len(m.TemporalIndexes), len(m.RangeIndexes), len(m.AutoBloomIndexes)}
	}
	for _, tc := range []struct {
		name string
		v    int
		want counts
	}{
		{"v1", 1, counts{regular: 2}},
		{"v2", 2, counts{regular: 2, computed: 2}},
		{"v3", 3, counts{2, 2, 2, 0, 0, 0, 0, 0}},
		{"v4", 4, counts{2, 2, 2, 2, 0, 0, 0, 0}},
		{"v5", 5, counts{2, 2, 2, 2, 2, 0, 0, 0}},
		{"v6", 6, counts{2, 2, 2, 2, 2, 2, 0, 0}},
		{"v7", 7, counts{2, 2, 2, 2, 2, 2, 2, 0}},
		{"v8", 8, counts{2, 2, 2, 2, 2, 2, 2, 2}},
		{"v9 all 8 collections of size 2", 9, counts{2, 2, 2, 2, 2, 2, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := load(tc.v)
			if got := count(m); got != tc.want {
				t.Errorf("counts = %+v, want %+v", got, tc.want)
			}
			wantTotal := int64(-1)
			if tc.v == 9 {
				wantTotal = 1048576
			}
			if m.TotalIndexedFileSize != wantTotal || m.BatchesSinceCompact != 0 {
				t.Errorf("total, batches = %d, %d; want %d, 0", m.TotalIndexedFileSize, m.BatchesSinceCompact, wantTotal)
			}
		})
	}
	v1 := load(1)
	if v1.Format != "parquet" || v1.Schema != "not a real schema" || strings.Join(v1.Indexes, ",") != "Test,Test2" {
		t.Errorf("v1 = %+v", *v1)
	}
	if got := v1.ComputedIndexes.Keys(); len(got) != 0 {
		t.Errorf("v1 computed = %v", got)
	}
	if got := strings.Join(load(2).ComputedIndexes.Keys(), ","); got != "test,test2" {
		t.Errorf("v2 computed keys = %s", got)
	}
	v3 := load(3)
	if e := v3.ExplodedFieldIndexes; e[0] != (ExplodedFieldIndex{"users", "id", "user_id"}) || e[1] != (ExplodedFieldIndex{"tags", "name", "tag_name"}) {
		t.Errorf("v3 exploded = %+v", e)
	}
	if v, _ := load(4).ReadOptions.Get("multiLine"); v != "true" {
		t.Errorf("v4 multiLine = %q", v)
	}
	if b := load(5).BloomIndexes; b[0].Column != "transaction_id" || b[0].FPR != 0.01 || b[1].Column != "session_id" || b[1].FPR != 0.001 {
		t.Errorf("v5 bloom = %+v", b)
	}
	if tm := load(6).TemporalIndexes; tm[0] != (TemporalIndex{"entity_id", "updated_at"}) || tm[1] != (TemporalIndex{"user_id", "last_modified"}) {
		t.Errorf("v6 temporal = %+v", tm)
	}
	if r := load(7).RangeIndexes; r[0].Column != "amount" || r[1].Column != "score" {
		t.Errorf("v7 range = %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		cause    error // nil: any cause
		field    string
	}{
		{"empty", "", ErrBlank, ""},
		{"blank", " \n\t\r ", ErrBlank, ""},
		{"syntax error", `{"format":"csv",`, nil, ""},
		{"trailing data", `{"format":"csv","schema":"s"} x`, nil, ""},
		{"JSON null", "null", ErrNull, ""},
		{"JSON null padded", "  null\n", ErrNull, ""},
		{"list", `[]`, nil, ""},
		{"string", `"x"`, nil, ""},
		{"missing required format field", `{"schema":"x","indexes":["a"]}`, ErrMissingRequired, ""},
		{"missing required schema field", `{"format":"parquet","indexes":["a"]}`, ErrMissingRequired, ""},
		{"null format", `{"format":null,"schema":"x"}`, ErrMissingRequired, ""},
		{"empty object", `{}`, ErrMissingRequired, ""},
		{"format is an object", `{"format":{},"schema":"x"}`, nil, "format"},
		{"indexes not a list", `{"format":"csv","schema":"x","indexes":"a"}`, nil, "indexes"},
		{"null index entry", `{"format":"csv","schema":"x","indexes":["a",null]}`, nil, "indexes"},
		{"computed not an object", `{"format":"csv","schema":"x","computed_indexes":[]}`, nil, "computed_indexes"},
		{"computed duplicate key", `{"format":"csv","schema":"x","computed_indexes":{"a":"1","a":"2"}}`, nil, "computed_indexes"},
		{"bloom entry not an object", `{"format":"csv","schema":"x","bloom_indexes":["a"]}`, nil, "bloom_indexes"},
		{"bloom fpr not a number", `{"format":"csv","schema":"x","bloom_indexes":[{"column":"a","fpr":"x"}]}`, nil, "bloom_indexes"},
		{"bloom fpr NaN", `{"format":"csv","schema":"x","bloom_indexes":[{"column":"a","fpr":"NaN"}]}`, nil, "bloom_indexes"},
		{"metadata_version fraction", `{"format":"csv","schema":"x","metadata_version":1.5}`, nil, "metadata_version"},
		{"metadata_version beyond int", `{"format":"csv","schema":"x","metadata_version":2147483648}`, nil, "metadata_version"},
		{"batches not a number", `{"format":"csv","schema":"x","batches_since_compact":true}`, nil, "batches_since_compact"},
		{"total beyond long", `{"format":"csv","schema":"x","total_indexed_file_size":9223372036854775808}`, nil, "total_indexed_file_size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.in))
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error", tc.in, *m)
			}
			if !errors.Is(err, aerr.ErrMetadataMissingOrCorrupt) {
				t.Fatalf("err = %v, want ErrMetadataMissingOrCorrupt", err)
			}
			if want := "Index metadata is missing or corrupt. Delete and re-create the index."; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q does not start with %q", err, want)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("err = %v, want cause %v", err, tc.cause)
			}
			var fe *FieldError
			if tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field) {
				t.Errorf("err = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
}

// TestParseLenient covers what Gson accepts that a strict reader would not,
// and the defaults of absent and null fields.
func TestParseLenient(t *testing.T) {
	in := `{"schema":"s","format":"csv","unknown":{"deep":[1,2]},"indexes":null,
		"bloom_indexes":[{"column":"b"},{"column":"c","fpr":"0.05"},{"fpr":1e-2}],
		"read_options":{"z":"1","a":2,"m":true,"n":null},
		"total_indexed_file_size":"42","batches_since_compact":3.0,
		"metadata_version":"9","storage_format_version":2}`
	m, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &Metadata{Format: "csv", Schema: "s",
		BloomIndexes:         []BloomIndex{{"b", 0}, {"c", 0.05}, {"", 0.01}},
		ReadOptions:          NewStringMap("z", "1", "a", "2", "m", "true"),
		TotalIndexedFileSize: 42, BatchesSinceCompact: 3}
	want.SetVersions(9, 2)
	want.setDefaults()
	if !Equal(m, want) {
		t.Fatalf("got  %+v\nwant %+v", *m, *want)
	}
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const golden = `{"format":"csv","schema":"s","indexes":[],"computed_indexes":{},"exploded_field_indexes":[],` +
		`"bloom_indexes":[{"column":"b","fpr":0.0},{"column":"c","fpr":0.05},{"column":"","fpr":0.01}],"temporal_indexes":[],` +
		`"read_options":{"z":"1","a":"2","m":"true"},"range_indexes":[],"auto_bloom_indexes":[],` +
		`"total_indexed_file_size":42,"batches_since_compact":3,"metadata_version":9,"storage_format_version":2}`
	if string(out) != golden {
		t.Errorf("Marshal:\n got %s\nwant %s", out, golden)
	}
}

// TestMarshalGolden renders every fixture and compares it with its golden
// file (go test -update rewrites them; review the diff by hand against the
// Gson rules of Marshal's doc comment). It also checks that rendering is a
// fixed point: Parse(Marshal(m)) == m.
func TestMarshalGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			m, err := Parse(mustRead(t, fx.path))
			if err != nil {
				t.Fatal(err)
			}
			out, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", fx.name+".json")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want := mustRead(t, golden); string(out) != string(want) {
				t.Errorf("Marshal:\n got %s\nwant %s", out, want)
			}
			back, err := Parse(out)
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(back, m) {
				t.Errorf("round trip changed the record:\n got %+v\nwant %+v", *back, *m)
			}
		})
	}
}

func TestNewMetadata(t *testing.T) {
	m := NewMetadata("csv", `{"type":"struct","fields":[]}`)
	out, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"format":"csv","schema":"{\"type\":\"struct\",\"fields\":[]}","indexes":[],"computed_indexes":{},` +
		`"exploded_field_indexes":[],"bloom_indexes":[],"temporal_indexes":[],"read_options":{},"range_indexes":[],` +
		`"auto_bloom_indexes":[],"total_indexed_file_size":-1,"batches_since_compact":0,"metadata_version":10,"storage_format_version":3}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if NeedsMigration(m) {
		t.Error("a new record needs no migration")
	}
	if err := ValidateDeclaredVersions(m); err != nil {
		t.Error(err)
	}
}

func TestClone(t *testing.T) {
	m := fixtureMetadata(9)
	m.SetVersions(10, 3)
	c := m.Clone()
	if !Equal(c, m) {
		t.Fatal("clone differs")
	}
	c.Indexes[0] = "changed"
	c.ComputedIndexes.Set("test", "changed")
	c.BloomIndexes[0].FPR = 0.5
	*c.MetadataVersion = 1
	if !Equal(m, fixtureMetadata9Versioned()) {
		t.Errorf("mutating the clone changed the original: %+v", *m)
	}
}

func fixtureMetadata9Versioned() *Metadata {
	m := fixtureMetadata(9)
	m.SetVersions(10, 3)
	return m
}
