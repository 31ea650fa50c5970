package prepared

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// play is the record of TestDefaultsOnCardinalities: a key, a timestamp
// and a track name, as the listening lakes have.
type play struct {
	User  int64  `parquet:"user"`
	TS    int64  `parquet:"ts,timestamp(millisecond)"`
	Track string `parquet:"track"`
}

// TestDefaultsOnCardinalities prepares, with no layout option, one ZSTD
// source (parquet-go's default layout) of 150,000 rows whose keys are all
// distinct (the "10 MB file with 1M distinct keys became 288 MB"
// with one page per key), then one of 20 keys: both outputs stay within
// 1.15× the source, use packed pages within the chosen bounds, one file
// (the source is far below 128 MiB), ZSTD and no dictionary on the
// distinct columns, and record the choices in the marker; the distinct-key
// estimate is within 5 %.
func TestDefaultsOnCardinalities(t *testing.T) {
	ctx := context.Background()
	const rows = 150_000
	for _, c := range []struct {
		name string
		keys int
	}{{"all keys distinct", rows}, {"20 keys", 20}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.keys), 3))
			perm := rng.Perm(rows)
			ps := make([]play, rows)
			for i := range ps {
				ps[i] = play{User: int64(perm[i] % c.keys), TS: 1_717_200_000_000 + rng.Int64N(86_400_000),
					Track: fmt.Sprintf("spotify:track:%022d", rng.IntN(50_000))}
			}
			src := fileStore(t)
			sw, err := src.NewWriter(ctx, "in/a.parquet", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := parquet.Write(sw, ps, parquet.Compression(&parquet.Zstd)); err != nil {
				t.Fatal(err)
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			res := storeResolver{src}
			srcs, err := Sources(ctx, res, []string{"in"})
			if err != nil {
				t.Fatal(err)
			}
			dst := fileStore(t)
			st, err := PrepareFiles(ctx, res, srcs, dst, Options{Key: "user", Sort: []string{"ts"}, TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			ch := st.Choices
			if r := float64(st.Bytes) / float64(st.SourceBytes); r > 1.15 {
				t.Errorf("output %d bytes, %.2f× the source's %d", st.Bytes, r, st.SourceBytes)
			}
			if ch.PageBytes < minAutoPageBytes || ch.PageBytes > maxAutoPageBytes || ch.Buckets != 1 || ch.Codec != "ZSTD" || len(st.Files) != 1 {
				t.Errorf("choices %+v, %d files", ch, len(st.Files))
			}
			if want := []string{"buckets", "codec", "encodings", "page_bytes", "row_group_rows"}; fmt.Sprint(ch.Chosen) != fmt.Sprint(want) {
				t.Errorf("chosen %v, want %v", ch.Chosen, want)
			}
			if d := float64(ch.Basis.KeyGroups)/float64(c.keys) - 1; d < -0.05 || d > 0.05 {
				t.Errorf("estimated %d distinct keys of %d", ch.Basis.KeyGroups, c.keys)
			}
			if st.Keys != int64(c.keys) {
				t.Errorf("%d key groups written, want %d", st.Keys, c.keys)
			}
			for _, col := range ch.Columns {
				if col.Column != "ts" && col.Encoding == "RLE_DICTIONARY" && c.keys == rows {
					t.Errorf("%s dictionary-encoded though its values are nearly all distinct", col.Column)
				}
			}
			if c.keys == rows && st.PagesPerKey() > 0.01 {
				t.Errorf("%.3f pages per key and column: keys not packed", st.PagesPerKey())
			}
			f, _ := openFile(t, dst, st.Files[0].Key)
			m, ok, err := MarkerOf(f)
			if err != nil || !ok || m.Choices == nil {
				t.Fatalf("marker %+v, %v, %v", m, ok, err)
			}
			got, _ := json.Marshal(m.Choices)
			want, _ := json.Marshal(ch)
			if string(got) != string(want) {
				t.Errorf("marker's choices %s, want %s", got, want)
			}
			for _, rg := range f.Metadata().RowGroups {
				for _, cc := range rg.Columns {
					if cc.MetaData.Codec.String() != "ZSTD" {
						t.Errorf("column %v: codec %s", cc.MetaData.PathInSchema, cc.MetaData.Codec)
					}
				}
			}
			t.Logf("%d keys: %d → %d bytes (%.2f×), page bytes %d, %d pages", c.keys, st.SourceBytes, st.Bytes,
				float64(st.Bytes)/float64(st.SourceBytes), ch.PageBytes, st.Pages)
		})
	}
}
