package rowindex

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/store"
)

// TestDictBytes checks that a build records each data file's dictionary
// pages decompressed (FileEntry.DictBytes) close to the sizes their page
// headers give, and that a handle opened with no budget sizes its cache to
// hold them (AutoCacheBytes).
func TestDictBytes(t *testing.T) {
	ctx := context.Background()
	type row struct {
		K int64  `parquet:"k"`
		S string `parquet:"s,dict,snappy"`
		V int64  `parquet:"v,dict,snappy"`
	}
	data, _ := store.Open(ctx, "mem://")
	var uris []string
	for fi := range 2 {
		rows := make([]row, 20_000)
		for i := range rows {
			rows[i] = row{K: int64(i % 700), S: fmt.Sprintf("spotify:track:%022d", (i*7919+fi)%5000), V: int64(i*31) % 9000}
		}
		name := fmt.Sprintf("d%d.parquet", fi)
		writeRows(t, ctx, data, name, rows)
		uris = append(uris, name)
	}
	idx, _ := store.Open(ctx, "mem://")
	man, _, err := Create(ctx, idx, Definition{Name: "d", Key: "k", Kind: KindSorted}, StoreResolver{Store: data}, uris)
	if err != nil {
		t.Fatal(err)
	}
	for _, fe := range man.Files {
		b, err := store.ReadAll(ctx, data, fe.URI)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, g := range f.Metadata().RowGroups {
			for _, c := range g.Columns {
				if c.MetaData.DictionaryPageOffset <= 0 {
					continue
				}
				h, _, err := parsePageHeader(b[c.MetaData.DictionaryPageOffset:])
				if err != nil || h.Type != format.DictionaryPage {
					t.Fatalf("%s: dictionary page header %v, %v", fe.URI, h.Type, err)
				}
				want += int64(h.UncompressedPageSize)
			}
		}
		if want < 100_000 {
			t.Fatalf("%s: dictionaries of %d bytes: the test needs larger ones", fe.URI, want)
		}
		if fe.DictBytes < want*7/10 || fe.DictBytes > want*3/2 {
			t.Errorf("%s: DictBytes %d, the dictionary pages hold %d", fe.URI, fe.DictBytes, want)
		}
	}
	// A manifest whose dictionaries pass the default budget gets a larger
	// one, and one without dictionaries the default.
	big := *man
	big.Files = append([]FileEntry(nil), man.Files...)
	big.Files[0].DictBytes = 400 << 20
	if got := AutoCacheBytes(&big); got*3/4 < 600<<20 || got > MaxAutoCacheBytes {
		t.Errorf("400 MiB of dictionaries: budget %d", got)
	}
	if got := AutoCacheBytes(&Manifest{}); got != DefaultCacheBytes {
		t.Errorf("an empty index: budget %d, want %d", got, DefaultCacheBytes)
	}
	big.Files[0].DictBytes = 100 << 30
	if got := AutoCacheBytes(&big); got != MaxAutoCacheBytes {
		t.Errorf("100 GiB of dictionaries: budget %d, want the cap", got)
	}
	// A manifest's lying sizes neither wrap nor shrink the budget.
	big.Files[0].DictBytes, big.Files[1].DictBytes = -1<<62, 1<<62
	if got := AutoCacheBytes(&big); got != MaxAutoCacheBytes {
		t.Errorf("dictionaries of -2^62 and 2^62 bytes: budget %d, want the cap", got)
	}
}
