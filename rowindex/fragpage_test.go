package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/store"
)

// TestPointReadCoverPages checks the page path of a point lookup
// (coverPages): fragments whose cover column spans several pages per row
// group are looked up key by key, and every key's entries must equal those
// of the whole decoded group, for every key of every group (so keys on page
// boundaries and the first and last key of a group are among them), for
// keys absent between present ones, through the row index's cached path
// (groupKey), and with the page index ignored (a fragment without one, the
// old path); and the same through resident groups (resident.go).
func TestPointReadCoverPages(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []Kind{KindHash, KindSorted} {
		t.Run(string(kind), func(t *testing.T) {
			es := syntheticEntries(kind, testHash(kind), true, 6_000)
			for i := range es {
				if es[i].File != aggFile {
					// Covers of 100–400 bytes: a group's cover column is
					// several pages.
					es[i].Cover = bytes.Repeat(fmt.Appendf(nil, "%d.", i), 100+i%300)[:100+i%300]
				}
			}
			st, man := writeTestIndex(t, "pp", kind, es)
			frs := man.Fragments
			whole, err := Open(ctx, st, man.Name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			point, err := Open(ctx, st, man.Name, Options{ResidentBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			// Every group resident (covers make them larger than
			// AutoResidentBytes' estimate, so the budget is set).
			res, err := Open(ctx, st, man.Name, Options{ResidentBytes: 64 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := res.Warm(ctx); err != nil {
				t.Fatal(err)
			}
			checkAllResident(t, res)
			multiPage, keys := 0, 0
			for fi := range frs {
				fr := &frs[fi]
				fm, err := point.fragmentMeta(ctx, new(meter), fr)
				if err != nil {
					t.Fatal(err)
				}
				cover := fm.f.Root().Column("cover").Index()
				for gi := range fr.Groups {
					if len(fm.offsetIndex(gi, cover)) > 1 {
						multiPage++
					}
					all, err := whole.group(ctx, new(meter), fr, gi)
					if err != nil {
						t.Fatal(err)
					}
					byKey := map[string][]entry{}
					for _, e := range all {
						byKey[string(e.Key)] = append(byKey[string(e.Key)], e)
					}
					for k, want := range byKey {
						keys++
						// The key just after k (absent: keys are multiples of 3).
						v, _ := DecodeKey([]byte(k))
						absent, _ := EncodeKey(v.(int64) + 1)
						for _, ri := range []*RowIndex{point, res} {
							checkPointRead(t, ctx, ri, fr, gi, []byte(k), want)
							checkPointRead(t, ctx, ri, fr, gi, absent, nil)
						}
					}
				}
			}
			if multiPage == 0 {
				t.Fatal("no row group has a cover column of several pages: the test does not reach the page path")
			}
			t.Logf("%d keys, %d row groups with several cover pages", keys, multiPage)
		})
	}
}

// checkPointRead compares the point path's entries of key in one group
// with want, through the page index and without it.
func checkPointRead(t *testing.T, ctx context.Context, ri *RowIndex, fr *FragmentEntry, gi int, key []byte, want []entry) {
	t.Helper()
	fm, err := ri.fragmentMeta(ctx, new(meter), fr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ri.groupBytes(ctx, new(meter), fr, gi)
	if err != nil {
		t.Fatal(err)
	}
	// Through the row index (its decoded cache keeps the key's entries).
	got, ok, err := ri.groupKey(ctx, new(meter), fr, gi, key)
	if err != nil || !ok {
		t.Fatalf("groupKey: %v, %v", ok, err)
	}
	if len(got) != len(want) {
		t.Fatalf("group %d key %x (groupKey): %d entries, want %d", gi, key, len(got), len(want))
	}
	for i := range want {
		if compareEntries(&got[i], &want[i]) != 0 || got[i].N != want[i].N || !bytes.Equal(got[i].Cover, want[i].Cover) {
			t.Fatalf("group %d key %x entry %d (groupKey): got %+v, want %+v", gi, key, i, got[i], want[i])
		}
	}
	noIndex := *fm
	noIndex.aligned = make([]bool, len(fm.aligned))
	for _, m := range []*fileMeta{fm, &noIndex} {
		pr := &pageReader{ctx: ctx, m: new(meter), sp: spans{{fr.Groups[gi].Offset, b}}}
		got, err := ri.decodeGroupKey(m, gi, pr, ri.Manifest().Kind, ri.Manifest().BucketHash, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("group %d key %x (page index %v): %d entries, want %d", gi, key, m == fm, len(got), len(want))
		}
		for i := range want {
			if compareEntries(&got[i], &want[i]) != 0 || got[i].N != want[i].N || !bytes.Equal(got[i].Cover, want[i].Cover) {
				t.Fatalf("group %d key %x entry %d (page index %v): got %+v, want %+v", gi, key, i, m == fm, got[i], want[i])
			}
		}
	}
}

// TestCoverPagesRefusesWithoutIndex checks that a chunk without a usable
// offset index is refused with errNoPageIndex (the caller's cue to decode
// the whole column), not misread.
func TestCoverPagesRefusesWithoutIndex(t *testing.T) {
	ctx := context.Background()
	es := syntheticEntries(KindHash, BucketFNV1aMix, true, 2_000)
	st, _ := store.Open(ctx, "mem://")
	frs, _, err := writeFragments(ctx, st, "np", KindHash, es)
	if err != nil {
		t.Fatal(err)
	}
	man := &Manifest{Version: 1, Definition: Definition{Name: "np", Key: "k", Kind: KindHash}, BucketHash: BucketFNV1aMix, Fragments: frs}
	if err := commitManifest(ctx, st, man); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, st, "np", Options{})
	if err != nil {
		t.Fatal(err)
	}
	fm, err := ri.fragmentMeta(ctx, new(meter), &frs[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := ri.groupBytes(ctx, new(meter), &frs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	cover := fm.f.Root().Column("cover").Index()
	n := int(fm.f.RowGroups()[0].NumRows())
	if _, err := ri.coverPages(fm, 0, cover, b, frs[0].Groups[0].Offset, n, []int{0, n - 1}); err != nil {
		t.Fatalf("with the page index: %v", err)
	}
	noIndex := *fm
	noIndex.aligned = make([]bool, len(fm.aligned))
	if _, err := ri.coverPages(&noIndex, 0, cover, b, frs[0].Groups[0].Offset, n, []int{0}); err != errNoPageIndex {
		t.Fatalf("without the page index: %v, want errNoPageIndex", err)
	}
	// The group's bytes cut short: the page lies outside them.
	if _, err := ri.coverPages(fm, 0, cover, b[:10], frs[0].Groups[0].Offset, n, []int{n - 1}); err != errNoPageIndex {
		t.Fatalf("page outside the bytes: %v, want errNoPageIndex", err)
	}
}

// TestWalkedMeta checks a fragment's metadata as loadWalkedMeta reads it
// (its footer decoded once, by parquet-go, without the page index) against
// loadFileMetaTail's (decoded, re-encoded with the offset indexes, opened
// again): the same offset indexes and levels, the same entries decoded
// from every group, whether the tail hint is exact, too small or unknown;
// and a fragment whose footer does not decode is a FileChangedError.
func TestWalkedMeta(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []Kind{KindSorted, KindHash} {
		t.Run(string(kind), func(t *testing.T) {
			es := syntheticEntries(kind, BucketFNV1aMix, true, 20_000)
			st, _ := store.Open(ctx, "mem://")
			frs, _, err := writeFragments(ctx, st, "wm", kind, es)
			if err != nil {
				t.Fatal(err)
			}
			fr := &frs[0]
			if len(fr.Groups) < 2 {
				t.Fatalf("%d groups: the test wants several", len(fr.Groups))
			}
			o := object{st: st, key: folderOf("wm") + fr.Path, uri: fr.Path}
			want, err := loadFileMetaTail(ctx, new(meter), o, fr.Size, 0, nil, fr.TailBytes, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, hint := range []int64{fr.TailBytes, 16, 0} {
				m := new(meter)
				got, err := loadWalkedMeta(ctx, m, o, fr.Size, hint)
				if err != nil {
					t.Fatalf("hint %d: %v", hint, err)
				}
				if !reflect.DeepEqual(got.ois, want.ois) || !slices.Equal(got.aligned, want.aligned) {
					t.Fatalf("hint %d: offset indexes differ", hint)
				}
				if !slices.Equal(got.maxRep, want.maxRep) || !slices.Equal(got.maxDef, want.maxDef) || !slices.Equal(got.typeLen, want.typeLen) ||
					got.ncol() != want.ncol() || got.tail != want.tail || got.footerBytes != want.footerBytes || got.footerCRC != want.footerCRC ||
					got.indexRange != want.indexRange || got.charge != want.charge || got.chunks == nil || got.chunks.Bytes() != want.chunks.Bytes() {
					t.Fatalf("hint %d: got %+v, want %+v", hint, got, want)
				}
				if got.f.OffsetIndexes() != nil {
					t.Fatalf("hint %d: parquet-go decoded the page index", hint)
				}
				for gi := range fr.Groups {
					b, err := readRange(ctx, new(meter), o, fr.Groups[gi].Offset, fr.Groups[gi].Length)
					if err != nil {
						t.Fatal(err)
					}
					var decoded [2][]entry
					for i, fm := range []*fileMeta{got, want} {
						pr := &pageReader{ctx: ctx, m: new(meter), obj: o, sp: spans{{fr.Groups[gi].Offset, b}}, chunks: fm.chunks}
						if decoded[i], err = decodeGroup(fm, gi, pr, kind, BucketFNV1aMix); err != nil {
							t.Fatalf("hint %d group %d: %v", hint, gi, err)
						}
					}
					if !reflect.DeepEqual(decoded[0], decoded[1]) || len(decoded[0]) != int(fr.Groups[gi].Rows) {
						t.Fatalf("hint %d group %d: %d and %d entries differ (want %d)", hint, gi, len(decoded[0]), len(decoded[1]), fr.Groups[gi].Rows)
					}
				}
			}
			// Every group of every fragment, decoded through walked
			// metadata, gives back the entries written.
			var all []entry
			for i := range frs {
				fo := object{st: st, key: folderOf("wm") + frs[i].Path, uri: frs[i].Path}
				fm, err := loadWalkedMeta(ctx, new(meter), fo, frs[i].Size, frs[i].TailBytes)
				if err != nil {
					t.Fatal(err)
				}
				for gi, g := range frs[i].Groups {
					b, err := readRange(ctx, new(meter), fo, g.Offset, g.Length)
					if err != nil {
						t.Fatal(err)
					}
					pr := &pageReader{ctx: ctx, m: new(meter), obj: fo, sp: spans{{g.Offset, b}}, chunks: fm.chunks}
					got, err := decodeGroup(fm, gi, pr, kind, BucketFNV1aMix)
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, got...)
				}
			}
			if len(all) != len(es) {
				t.Fatalf("%d entries decoded, %d written", len(all), len(es))
			}
			for i := range es {
				if compareEntries(&all[i], &es[i]) != 0 || all[i].N != es[i].N || !bytes.Equal(all[i].Cover, es[i].Cover) {
					t.Fatalf("entry %d: got %+v, want %+v", i, all[i], es[i])
				}
			}
			b, _ := store.ReadAll(ctx, st, o.key)
			footerLen := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
			// A footer that decodes but has no schema: as a data file's.
			var md format.FileMetaData
			if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[int64(len(b))-8-footerLen:len(b)-8], &md); err != nil {
				t.Fatal(err)
			}
			md.Schema = nil
			noSchema, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
			if err != nil {
				t.Fatal(err)
			}
			nb := append(bytes.Clone(b[:int64(len(b))-8-footerLen]), noSchema...)
			nb = binary.LittleEndian.AppendUint32(nb, uint32(len(noSchema)))
			nb = append(nb, "PAR1"...)
			if err := store.WriteAll(ctx, st, o.key, nb, nil); err != nil {
				t.Fatal(err)
			}
			_, err = loadWalkedMeta(ctx, new(meter), o, int64(len(nb)), 0)
			var fc *FileChangedError
			if !errors.As(err, &fc) || fc.Reason != corruptReason+"schema" {
				t.Fatalf("footer without a schema: %v, want a FileChangedError (%sschema)", err, corruptReason)
			}
			// The footer's first bytes overwritten: unreadable.
			bad := bytes.Clone(b)
			for i := int64(len(b)) - 8 - footerLen; i < int64(len(b))-8-footerLen/2; i++ {
				bad[i] = 0xff
			}
			if err := store.WriteAll(ctx, st, o.key, bad, nil); err != nil {
				t.Fatal(err)
			}
			_, err = loadWalkedMeta(ctx, new(meter), o, int64(len(bad)), fr.TailBytes)
			if !errors.As(err, &fc) || fc.Reason != "unreadable footer" {
				t.Fatalf("corrupt footer: %v, want a FileChangedError (unreadable footer)", err)
			}
		})
	}
}

// TestSeekableOnDemand: a data file's metadata is decoded once, without the
// re-encoded footer parquet-go seeks with (fileMeta.seekable): lookups the
// direct path serves never make it, and a chunk the direct path leaves to
// parquet-go (DELTA_BINARY_PACKED integers) makes it once, with the
// file's offset indexes, and reads the same rows as a full scan.
func TestSeekableOnDemand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	type plain struct {
		K int64  `parquet:"k"`
		V int64  `parquet:"v"`
		S string `parquet:"s,plain"`
	}
	type delta struct {
		K int64  `parquet:"k"`
		V int64  `parquet:"v,delta"`
		S string `parquet:"s,plain"`
	}
	var prow []plain
	var drow []delta
	for i := range 6000 {
		k, v, s := int64(i*7919%211), int64(i)*1_000_003, fmt.Sprintf("s%05d", i)
		prow = append(prow, plain{k, v, s})
		drow = append(drow, delta{k, v, s})
	}
	writeRows(t, ctx, data, "plain.parquet", prow, parquet.PageBufferSize(2048))
	writeRows(t, ctx, data, "delta.parquet", drow, parquet.PageBufferSize(2048))
	for _, tc := range []struct {
		uri    string
		sought bool
	}{{"plain.parquet", false}, {"delta.parquet", true}} {
		ri := indexOnK(t, data, []string{tc.uri}, Options{PageCacheBytes: -1})
		slow := ri.slowChunks.Load()
		for k := int64(0); k < 211; k += 13 {
			kb, _ := EncodeKey(k)
			want := fullScan(t, dir, []string{tc.uri}, "k", kb, kb)
			res, err := ri.Lookup(ctx, Query{Key: k})
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, fmt.Sprintf("%s key %d", tc.uri, k), res.Rows, want)
		}
		fm, _, err := ri.dataMeta(ctx, new(meter), &ri.Manifest().Files[0])
		if err != nil {
			t.Fatal(err)
		}
		if fm.seek == nil || fm.f.OffsetIndexes() != nil {
			t.Fatalf("%s: a data file's handle holds offset indexes, or cannot be sought", tc.uri)
		}
		made := fm.seek.f != nil
		if made != tc.sought || (ri.slowChunks.Load() > slow) != tc.sought {
			t.Fatalf("%s: seekable handle made %v, chunks decoded by parquet-go %d; want both %v", tc.uri, made, ri.slowChunks.Load()-slow, tc.sought)
		}
		if made && len(fm.seek.f.OffsetIndexes()) != len(fm.ois) {
			t.Fatalf("%s: the seekable handle holds %d offset indexes, want %d", tc.uri, len(fm.seek.f.OffsetIndexes()), len(fm.ois))
		}
	}
}
