package prepared

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/ariadne-go/ariadne/internal/duck"
)

// duckText renders an event as the DuckDB query of TestDuckDBReadsTheSameRows
// renders a row.
func (e event) duckText() string {
	u, n := "null", "null"
	if e.User != nil {
		u = fmt.Sprint(*e.User)
	}
	if e.Name != nil {
		n = *e.Name
	}
	return fmt.Sprintf("%s|%d|%s|%d|%d|%x|%s", u, e.TS.UnixMicro(), n, int64(e.Score*4), e.N, e.Blob, strings.Join(e.Tags, ","))
}

// TestDuckDBReadsTheSameRows: DuckDB's own Parquet reader returns the rows
// written, for each page policy (pages of one key, packed, split keys), and
// with dictionary-encoded columns written from an external sort, and with
// a key larger than the budget streamed from runs merged in passes.
func TestDuckDBReadsTheSameRows(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(6, 10_000)
	var want []string
	for _, e := range evs {
		want = append(want, e.duckText())
	}
	slices.Sort(want)
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := fileStore(t)
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"per-key", Options{PageBytes: PageBytesPerKey}},
		{"packed", Options{PageBytes: 4096}},
		// Dictionaries kept (as chosen for small ones), and rows sorted
		// externally in runs.
		{"dictionaries-external", Options{PageBytes: 4096, MemoryBytes: 1 << 20, TempDir: t.TempDir(),
			Encodings: map[string]encoding.Encoding{"name": &parquet.RLEDictionary, "n": &parquet.RLEDictionary, "score": &parquet.Plain}}},
		// The heavy user's ≈330 KB of rows over a 256 KiB budget: many runs,
		// merged in passes of 4, page buffers on disk, the key streamed
		// into 512-byte pages of its own by 2 workers.
		{"streamed-key-external", Options{PageBytes: 512, MemoryBytes: 256 << 10, TempDir: t.TempDir(), Parallelism: 2, mergeFanIn: 4}},
	} {
		name := c.name + ".parquet"
		target := c.name
		schema, rows := eventRows(t, evs)
		o := c.opts
		o.Key, o.Sort, o.RowGroupRows = "user", []string{"ts"}, 3000
		if _, err := Write(ctx, st, name, schema, rows, o); err != nil {
			t.Fatal(err)
		}
		if o.Encodings != nil {
			f, _ := openFile(t, st, name)
			if md := f.Metadata().RowGroups[0].Columns[2].MetaData; md.DictionaryPageOffset == 0 {
				t.Fatalf("%s: column %v has no dictionary page", c.name, md.PathInSchema)
			}
		}
		path := filepath.Join(strings.TrimPrefix(st.URL(), "file://"), name)
		q := `SELECT concat_ws('|', coalesce(CAST("user" AS VARCHAR), 'null'), CAST(epoch_us(ts) AS VARCHAR), coalesce(name, 'null'),
			CAST(CAST(score * 4 AS BIGINT) AS VARCHAR), CAST(n AS VARCHAR), lower(hex(blob)), coalesce(array_to_string(tags, ','), ''))
			FROM read_parquet(` + duck.String(path) + `)`
		_, res, err := db.QueryAll(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res {
			got = append(got, fmt.Sprint(r[0]))
		}
		slices.Sort(got)
		if len(got) != len(want) {
			t.Fatalf("%s: DuckDB reads %d rows, %d written", target, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: DuckDB row %q, written %q", target, got[i], want[i])
			}
		}
	}
}
