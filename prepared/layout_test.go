package prepared

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// TestChooseRules checks each rule of choose on measured figures: buckets
// for ≈128 MiB files (input files already that size keep their count),
// page size from the widest column's compression ratio, row groups from
// the row size, and options that are set are kept and not listed as
// chosen.
func TestChooseRules(t *testing.T) {
	schema := parquet.SchemaOf(struct {
		User    int64  `parquet:"user"`
		Country string `parquet:"country"`
	}{})
	sample := func(distinct int) []colSample {
		s := make([]colSample, 2)
		for c := range s {
			s[c] = colSample{values: 60_000, plainBytes: 60_000 * 8, distinct: map[string]struct{}{}}
		}
		for i := range distinct {
			s[1].distinct[fmt.Sprint(i)] = struct{}{}
			s[1].distinctBytes += 8
		}
		return s
	}
	for _, c := range []struct {
		name                   string
		opts                   Options
		partBytes              int64
		partSources            int
		ratio                  float64
		countries              int
		wantBuckets, wantPage  int
		wantRowGroup           int64
		wantCountry, wantChose string
	}{
		{"20 small files: one file", Options{}, 20 << 20, 20, 3, 30, 1, 32 << 10, 128 << 20 / 16, "RLE_DICTIONARY",
			"[buckets codec encodings page_bytes row_group_rows]"},
		{"1 GB in 100 files of 10 MB: 8 files", Options{}, 1000 << 20, 100, 1, 30, 8, 16 << 10, 128 << 20 / 16, "RLE_DICTIONARY",
			"[buckets codec encodings page_bytes row_group_rows]"},
		{"20 files of 200 MB: their count kept", Options{}, 20 * 200 << 20, 20, 9, 30, 32, 64 << 10, 128 << 20 / 16, "RLE_DICTIONARY",
			"[buckets codec encodings page_bytes row_group_rows]"},
		{"10 files of 100 MB: ≥ 64 MiB each, kept", Options{}, 10 * 100 << 20, 10, 5.45, 30, 10, 64 << 10, 128 << 20 / 16, "RLE_DICTIONARY",
			"[buckets codec encodings page_bytes row_group_rows]"},
		{"a large dictionary is not kept", Options{}, 1 << 20, 1, 1, 16_000, 1, 16 << 10, 128 << 20 / 16, "DELTA_LENGTH_BYTE_ARRAY",
			"[buckets codec encodings page_bytes row_group_rows]"},
		{"options set are kept", Options{Buckets: 3, PageBytes: PageBytesPerKey, RowGroupRows: 1000, Compression: &parquet.Snappy,
			Encodings: map[string]encoding.Encoding{"user": &parquet.Plain, "country": &parquet.Plain}}, 1 << 30, 4, 3, 30, 3, PageBytesPerKey, 1000, "PLAIN", "[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.Key = "user"
			o, err := opts.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			s := &scanned{schema: schema, sample: sample(c.countries), basis: Basis{Rows: 1e6, MaxPartitionBytes: c.partBytes,
				MaxPartitionSources: c.partSources, WidestRatio: c.ratio, RowBytes: 16}}
			o, ch, err := choose(o, s)
			if err != nil {
				t.Fatal(err)
			}
			if o.Buckets != c.wantBuckets || ch.Buckets != c.wantBuckets || o.PageBytes != c.wantPage || o.RowGroupRows != c.wantRowGroup ||
				ch.Columns[1].Encoding != c.wantCountry || fmt.Sprint(ch.Chosen) != c.wantChose {
				t.Errorf("buckets %d, page %d, row group %d, country %s, chosen %v; want %d, %d, %d, %s, %s",
					o.Buckets, o.PageBytes, o.RowGroupRows, ch.Columns[1].Encoding, ch.Chosen,
					c.wantBuckets, c.wantPage, c.wantRowGroup, c.wantCountry, c.wantChose)
			}
		})
	}
}

// TestKeyEstimate: the k-minimum-values sketch is exact below its size and
// within 5 % above it, whatever the order and repetition of the keys.
func TestKeyEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 4000, 50_000, 400_000} {
		k := newKMV()
		for range 3 * n {
			k.add(hashKey(parquet.ValueOf(int64(rng.IntN(max(n, 1))))))
		}
		// All n values (some were not drawn); count them exactly.
		seen := map[int64]bool{}
		rng2 := rand.New(rand.NewPCG(1, 2))
		for range 3 * n {
			seen[int64(rng2.IntN(max(n, 1)))] = true
		}
		got, want := float64(k.estimate()), float64(len(seen))
		if (want < kmvSize && got != want) || got < 0.95*want || got > 1.05*want {
			t.Errorf("n=%d: estimate %.0f, distinct %.0f", n, got, want)
		}
	}
}
