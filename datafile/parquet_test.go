package datafile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/pqrow"
)

const parquetData = testdata + "/parquet-testing/data/"

func TestParquet(t *testing.T) {
	uri := uriOf(t, parquetData+"alltypes_plain.parquet")
	// Columns by name, in the stored schema's order; a column missing from
	// the file reads as null; only the projection is decoded.
	spec := Spec{Format: "parquet", Schema: mustSchema(t, "int_col int, id int, not_in_file string, bigint_col bigint")}
	got, err := readAll(t, uri, spec, []string{"id", "not_in_file", "bigint_col"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[4,null,0]", "[5,null,10]", "[6,null,0]", "[7,null,10]", "[2,null,0]", "[3,null,10]", "[0,null,0]", "[1,null,10]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rows %v, want %v", got, want)
	}
}

// A file we write with pqrow round-trips through the reader, including
// nested types.
func TestParquetWritten(t *testing.T) {
	st := mustSchema(t, `{"type":"struct","fields":[{"name":"k","type":"string","nullable":true,"metadata":{}},{"name":"v","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}]}`)
	var buf bytes.Buffer
	w := pqrow.NewWriter(&buf, st, pqrow.WriterOptions{})
	if err := w.Write(pqrow.Row{"a", []any{[]any{int32(1)}, nil}}, pqrow.Row{nil, nil}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "w.parquet")
	os.WriteFile(p, buf.Bytes(), 0o644)
	got, err := readAll(t, uriOf(t, p), Spec{Format: "parquet", Schema: st}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["a",[[1],null]] [null,null]`; strings.Join(got, " ") != want {
		t.Errorf("rows %v, want %s", got, want)
	}
}

func TestParquetCorrupt(t *testing.T) {
	good, err := os.ReadFile(parquetData + "alltypes_plain.parquet")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := map[string][]byte{
		"truncated.parquet":   good[:len(good)/2],
		"not-parquet.parquet": []byte("Id,Value\n1,2\n"),
		"empty.parquet":       {},
		"bad-footer.parquet":  append(append([]byte{}, good[:len(good)-8]...), 0xff, 0xff, 0xff, 0x7f, 'P', 'A', 'R', '1'),
	}
	for name, b := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		uri := uriOf(t, p)
		_, err := readAll(t, uri, Spec{Format: "parquet", Schema: mustSchema(t, "id int")}, nil)
		if !errors.Is(err, ErrCorruptFile) || !isFileError(err, uri) {
			t.Errorf("%s: %v, want ErrCorruptFile in a *FileError", name, err)
		}
	}
	// The Parquet project's malformed files give errors, never a crash.
	bad, _ := filepath.Glob(testdata + "/parquet-testing/bad_data/*.parquet")
	if len(bad) == 0 {
		t.Fatal("no bad_data files")
	}
	for _, p := range bad {
		uri := uriOf(t, p)
		_, err := readAll(t, uri, Spec{Format: "parquet", Schema: mustSchema(t, "a int, b string")}, nil)
		if err != nil && !isFileError(err, uri) {
			t.Errorf("%s: error %v does not name the file", filepath.Base(p), err)
		}
	}
}

func TestGzipCSV(t *testing.T) {
	uri := uriOf(t, filepath.Join(t.TempDir(), "x.csv.gz"))
	p := strings.TrimPrefix(uri, "file://")
	var buf bytes.Buffer
	zw := newGzipWriter(&buf)
	io.WriteString(zw, "Id,Value\n1,2.5\n")
	zw.Close()
	os.WriteFile(p, buf.Bytes(), 0o644)
	got, err := readAll(t, uri, Spec{Format: "csv", Schema: mustSchema(t, "Id int, Value double"), Options: map[string]string{"header": "true"}}, nil)
	if err != nil || strings.Join(got, " ") != "[1,2.5]" {
		t.Errorf("gzip csv: %v %v", got, err)
	}
	os.WriteFile(p, []byte("not gzip at all"), 0o644)
	if _, err := readAll(t, uri, Spec{Format: "csv", Schema: mustSchema(t, "Id int")}, nil); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("broken gzip: %v", err)
	}
}

func TestRelation(t *testing.T) {
	ctx := context.Background()
	dir := testdata + "/ariadne/data/"
	plan, err := Compile(Spec{Format: "csv", Schema: mustSchema(t, "Id int, Version int, Value double"), Options: map[string]string{"header": "true"}}, []string{"Id"})
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := uriOf(t, dir+"table1_part0.csv"), uriOf(t, dir+"table1_part1.csv")
	rel := NewRelation(plan, newResolver(t), []string{p0, "  ", p1 + " "}, "")
	defer rel.Close()
	if got := rel.Schema().String(); got != "struct<Id:int,filename:string>" {
		t.Errorf("schema %s", got)
	}
	var got []string
	for {
		b, err := rel.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b {
			got = append(got, fmt.Sprintf("%v@%s", r[0], filepath.Base(r[1].(string))))
		}
	}
	want := "1@table1_part0.csv 2@table1_part0.csv 3@table1_part0.csv 1@table1_part0.csv 4@table1_part1.csv 4@table1_part1.csv 3@table1_part1.csv 1@table1_part1.csv"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v", got)
	}
	// A column named like the filename column is replaced in place.
	plan2, _ := Compile(Spec{Format: "csv", Schema: mustSchema(t, "filename string, Version int")}, nil)
	if s := NewRelation(plan2, newResolver(t), []string{p0}, "").Schema().String(); s != "struct<filename:string,Version:int>" {
		t.Errorf("replaced schema %s", s)
	}
	// The first failing file stops the relation with its name.
	bad := uriOf(t, dir+"missing.csv")
	rel = NewRelation(plan, newResolver(t), []string{p0, bad}, "")
	for err = nil; err == nil; _, err = rel.Next(ctx) {
	}
	if !isFileError(err, bad) {
		t.Errorf("missing file in relation: %v", err)
	}
}

// writeBigCSV writes about size bytes of CSV rows (Id, Name, Value, Ts).
func writeBigCSV(t testing.TB, size int) (uri string, rows int) {
	p := filepath.Join(t.TempDir(), "big.csv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	f.WriteString("Id,Name,Value,Ts\n")
	written := 0
	for written < size {
		b.Reset()
		for i := 0; i < 1000; i++ {
			fmt.Fprintf(&b, "%d,\"name %d, quoted\",%d.5,2024-01-%02d 10:00:00\n", rows, rows%977, rows%1000, rows%28+1)
			rows++
		}
		n, _ := f.WriteString(b.String())
		written += n
	}
	f.Close()
	return uriOf(t, p), rows
}

// Streaming: a multi-megabyte file is read in batches of BatchRows, every
// row accounted for, in order.
func TestStreamingBatches(t *testing.T) {
	uri, n := writeBigCSV(t, 4<<20)
	ctx := context.Background()
	rd, err := Open(ctx, newResolver(t), uri, Spec{Format: "csv", Schema: mustSchema(t, "Id bigint, Name string, Value double, Ts timestamp"), Options: map[string]string{"header": "true"}, BatchRows: 500}, []string{"Id", "Ts"})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	seen := 0
	for {
		b, err := rd.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 500 {
			t.Fatalf("batch of %d rows", len(b))
		}
		for _, r := range b {
			if r[0].(int64) != int64(seen) || r[1] == nil {
				t.Fatalf("row %d: %v", seen, r)
			}
			seen++
		}
	}
	if seen != n {
		t.Errorf("read %d rows, wrote %d", seen, n)
	}
}

// BenchmarkReadCSV streams a 200 MB CSV and reports the peak heap while
// reading (sampled every batch): bounded by the batch and buffer sizes,
// not the file size.
func BenchmarkReadCSV(b *testing.B) {
	uri, rows := writeBigCSV(b, 200<<20)
	ctx := context.Background()
	spec := Spec{Format: "csv", Schema: mustSchema(b, "Id bigint, Name string, Value double, Ts timestamp"), Options: map[string]string{"header": "true"}}
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		rd, err := Open(ctx, newResolver(b), uri, spec, nil)
		if err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		for k := 0; ; k++ {
			_, err := rd.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if k%64 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
		rd.Close()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
