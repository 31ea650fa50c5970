package prepared_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	apq "github.com/apache/arrow-go/v18/parquet"
	acompress "github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// New user's case, scaled down 20× from the (20 files, 2M rows):
// 20 files of 5,000 unsorted rows written by arrow-go's pqarrow with its
// default properties except SNAPPY (pyarrow's default codec; arrow-go's is
// none, which would make the size bound trivial): dictionary encoding for
// every column, 1 MiB pages.
const (
	newUserFiles   = 20
	newUserRows    = 5000 // per file
	newUserUsers   = 20_000
	newUserHot     = 50 // users with 20 % of the rows
	newUserTracks  = 8000
	newUserCountry = 30
)

// writeNewUserFiles writes the files into dir and returns their paths.
func writeNewUserFiles(t *testing.T, dir string) []string {
	t.Helper()
	mem := memory.NewGoAllocator()
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "user_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "track_uri", Type: arrow.BinaryTypes.String},
		{Name: "duration_ms", Type: arrow.PrimitiveTypes.Int32},
		{Name: "country", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "context", Type: arrow.BinaryTypes.String},
	}, nil)
	rng := rand.New(rand.NewPCG(12, 1))
	var paths []string
	for f := range newUserFiles {
		b := array.NewRecordBuilder(mem, sch)
		for range newUserRows {
			u := int64(rng.IntN(newUserUsers))
			if rng.IntN(5) == 0 {
				u = int64(rng.IntN(newUserHot))
			}
			b.Field(0).(*array.Int64Builder).Append(u*7919 + 1_000_003)
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(1_717_200_000_000 + rng.Int64N(30*86_400_000)))
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("spotify:track:%022d", rng.IntN(newUserTracks)))
			b.Field(3).(*array.Int32Builder).Append(int32(90_000 + rng.IntN(240_000)))
			if rng.IntN(20) == 0 {
				b.Field(4).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("C%02d", rng.IntN(newUserCountry)))
			}
			b.Field(5).(*array.StringBuilder).Append(fmt.Sprintf(`{"type":"playlist","id":"%016x","pos":%d}`, rng.Uint64(), rng.IntN(100)))
		}
		rec := b.NewRecordBatch()
		b.Release()
		var buf bytes.Buffer
		fw, err := pqarrow.NewFileWriter(sch, &buf, apq.NewWriterProperties(apq.WithCompression(acompress.Codecs.Snappy)), pqarrow.DefaultWriterProps())
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		p := filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", f))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestNewUserDefaults: prepare with no tuning option on a new user's files
// (arrow-go defaults, unsorted): files no larger than 1.15× the input, ZSTD
// in every column chunk, no large dictionary, the choices in the marker, a
// row index lookup that reads fewer bytes than on the input, and DuckDB
// reads the same rows.
func TestNewUserDefaults(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	inDir := filepath.Join(root, "in")
	if err := os.MkdirAll(inDir, 0o755); err != nil {
		t.Fatal(err)
	}
	paths := writeNewUserFiles(t, inDir)
	src, err := store.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	res := rowindex.StoreResolver{Store: src}
	srcs, err := prepared.Sources(ctx, res, []string{"in"})
	if err != nil {
		t.Fatal(err)
	}
	// The input is what the issue saw: SNAPPY with dictionary pages.
	in := openLocal(t, paths[0])
	if md := in.Metadata().RowGroups[0].Columns[5].MetaData; md.Codec.String() != "SNAPPY" || md.DictionaryPageOffset == 0 {
		t.Fatalf("input context column: %v, dictionary page at %d", md.Codec, md.DictionaryPageOffset)
	}
	dst, err := store.Open(ctx, "file://"+filepath.Join(root, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	st, err := prepared.PrepareFiles(ctx, res, srcs, dst, prepared.Options{Key: "user_id", Sort: []string{"ts"}})
	if err != nil {
		t.Fatal(err)
	}
	ch := st.Choices
	t.Logf("%d → %d bytes (%.3f×), %d files, %d pages; choices %+v", st.SourceBytes, st.Bytes, float64(st.Bytes)/float64(st.SourceBytes), len(st.Files), st.Pages, *ch)
	if float64(st.Bytes) > 1.15*float64(st.SourceBytes) {
		t.Errorf("prepared files are %d bytes, %.3f× the input's %d (want ≤ 1.15×)", st.Bytes, float64(st.Bytes)/float64(st.SourceBytes), st.SourceBytes)
	}
	if !slices.Equal(ch.Chosen, []string{"buckets", "codec", "encodings", "page_bytes", "row_group_rows"}) || ch.PageBytes <= 0 ||
		ch.Basis.Rows != newUserFiles*newUserRows || ch.Basis.Sources != newUserFiles {
		t.Errorf("choices %+v", ch)
	}
	// Distinct users: the estimate is within 5 % of the truth.
	if k := float64(ch.Basis.KeyGroups); k < 0.95*float64(st.Keys) || k > 1.05*float64(st.Keys) {
		t.Errorf("estimated %d key groups, the files hold %d", ch.Basis.KeyGroups, st.Keys)
	}
	encs := map[string]string{}
	for _, c := range ch.Columns {
		encs[c.Column] = c.Encoding
	}
	// The country (30 values) keeps a dictionary; the JSON context (all
	// distinct) and the timestamps do not.
	if encs["country"] != "RLE_DICTIONARY" || encs["context"] == "RLE_DICTIONARY" || encs["ts"] == "RLE_DICTIONARY" {
		t.Errorf("encodings %v", encs)
	}
	var outURIs []string
	for _, f := range st.Files {
		outURIs = append(outURIs, "out/"+f.Key)
		pf := openLocal(t, filepath.Join(root, "out", f.Key))
		m, ok, err := prepared.MarkerOf(pf)
		if !ok || err != nil || m.Choices == nil || m.Codec != "ZSTD" || m.PageBytes != ch.PageBytes || m.RowGroupRows != ch.RowGroupRows ||
			m.Encodings["country"] != "RLE_DICTIONARY" || len(m.Choices.Columns) != 6 || m.Choices.Basis.Rows != ch.Basis.Rows {
			t.Errorf("%s: marker %+v %v %v", f.Key, m, ok, err)
		}
		for _, rg := range pf.Metadata().RowGroups {
			for c, cc := range rg.Columns {
				if cc.MetaData.Codec.String() != "ZSTD" {
					t.Errorf("%s column %d: codec %v", f.Key, c, cc.MetaData.Codec)
				}
				name := strings.Join(cc.MetaData.PathInSchema, ".")
				if (cc.MetaData.DictionaryPageOffset > 0) != (encs[name] == "RLE_DICTIONARY") {
					t.Errorf("%s column %s: dictionary page at %d, encoding chosen %s", f.Key, name, cc.MetaData.DictionaryPageOffset, encs[name])
				}
			}
		}
	}
	// Lookups of hot and light users read fewer bytes on the prepared files.
	var inURIs []string
	for _, s := range srcs {
		inURIs = append(inURIs, s.URI)
	}
	var keys []int64
	for u := range int64(10) {
		keys = append(keys, u*7919+1_000_003)                   // hot
		keys = append(keys, (newUserHot+u*1999)*7919+1_000_003) // light
	}
	inBytes, inRows := lookupBytes(t, src, inURIs, keys)
	outBytes, outRows := lookupBytes(t, src, outURIs, keys)
	t.Logf("row index lookups of %d keys: %d bytes read on the input, %d on the prepared files", len(keys), inBytes, outBytes)
	if !slices.Equal(inRows, outRows) {
		t.Errorf("rows per key: input %v, prepared %v", inRows, outRows)
	}
	if outBytes >= inBytes {
		t.Errorf("lookups read %d bytes on the prepared files, %d on the input", outBytes, inBytes)
	}
	// DuckDB reads the same rows from both.
	db, err := duck.Open(ctx, duck.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	inGlob, outGlob := duck.String(filepath.Join(inDir, "*.parquet")), duck.String(filepath.Join(root, "out", "*.parquet"))
	q := fmt.Sprintf(`SELECT (SELECT count(*) FROM read_parquet(%[1]s)), (SELECT count(*) FROM read_parquet(%[2]s)),
		(SELECT count(*) FROM (SELECT * FROM read_parquet(%[1]s) EXCEPT ALL SELECT * FROM read_parquet(%[2]s))),
		(SELECT count(*) FROM (SELECT * FROM read_parquet(%[2]s) EXCEPT ALL SELECT * FROM read_parquet(%[1]s)))`, inGlob, outGlob)
	_, rows, err := db.QueryAll(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows[0]); got != fmt.Sprintf("[%d %d 0 0]", newUserFiles*newUserRows, newUserFiles*newUserRows) {
		t.Errorf("DuckDB: rows in, out, in-only, out-only: %s", got)
	}
}

// lookupBytes indexes files by user_id and returns the data bytes that
// warm lookups of keys read, and the rows found per key.
func lookupBytes(t *testing.T, data store.Store, uris []string, keys []int64) (int64, []int) {
	t.Helper()
	ctx := context.Background()
	idx, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	res := rowindex.StoreResolver{Store: data}
	if _, _, err := rowindex.Create(ctx, idx, rowindex.Definition{Name: "u", Key: "user_id"}, res, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := rowindex.Open(ctx, idx, "u", rowindex.Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	var total int64
	var rows []int
	for _, k := range keys {
		r, err := ri.Lookup(ctx, rowindex.Query{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		total += r.Plan.Data.BytesRead
		rows = append(rows, len(r.Rows))
	}
	return total, rows
}

func openLocal(t *testing.T, path string) *parquet.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
