package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// runEngine is a test EntryEngine: it reads each file's key column with
// parquet-go's row reader (not the build's decoder), forms the runs over
// the whole file (row group boundaries ignored, as Spark's row index
// does), with each file's count record (rows read, non-null keys: RunJob),
// and returns them shuffled, in small batches.
// mangle, if set, alters the records (bad engines).
type runEngine struct {
	data   store.Store
	jobs   []RunJob
	mangle func(recs [][]any) [][]any
	fail   error // returned by Next after the first batch
}

func (e *runEngine) Name() string { return "test" }

func (e *runEngine) KeyRuns(ctx context.Context, job *RunJob) (RunRows, error) {
	e.jobs = append(e.jobs, *job)
	var recs [][]any
	for _, uri := range job.Files {
		b, err := store.ReadAll(ctx, e.data, uri)
		if err != nil {
			return nil, err
		}
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, err
		}
		kc := f.Root().Column(job.Key).Index()
		var prev any
		var first, n, pos, keys int64
		flush := func() {
			if n > 0 {
				recs = append(recs, []any{uri, prev, first, n, nil})
			}
			n = 0
		}
		for _, g := range f.RowGroups() {
			rr := g.Rows()
			buf := make([]parquet.Row, 100)
			for {
				k, err := rr.ReadRows(buf)
				for _, r := range buf[:k] {
					var v parquet.Value
					for _, x := range r {
						if x.Column() == kc {
							v = x
						}
					}
					if v.IsNull() {
						flush()
					} else {
						gv := engineValue(job.KeyType, v)
						if n == 0 || !reflect.DeepEqual(gv, prev) {
							flush()
							prev, first = gv, pos
						}
						n++
						keys++
					}
					pos++
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, err
				}
			}
			rr.Close()
		}
		flush()
		if pos > 0 {
			recs = append(recs, []any{uri, nil, int64(-1), keys, pos})
		}
	}
	rng := rand.New(rand.NewPCG(uint64(len(recs)), 3))
	rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	if e.mangle != nil {
		recs = e.mangle(recs)
	}
	return &sliceRuns{recs: recs, fail: e.fail}, nil
}

// engineValue renders a Parquet value as RunJob says for t.
func engineValue(t EngineKeyType, v parquet.Value) any {
	switch t {
	case EngineKeyBool:
		return v.Boolean()
	case EngineKeyFloat:
		return float64(v.Float())
	case EngineKeyDouble:
		return v.Double()
	case EngineKeyString:
		return string(v.ByteArray())
	case EngineKeyBinary:
		return bytes.Clone(v.ByteArray())
	case EngineKeyInt64, EngineKeyMillis, EngineKeyMicros:
		return v.Int64()
	}
	return int64(v.Int32())
}

type sliceRuns struct {
	recs [][]any
	fail error
	sent bool
}

func (s *sliceRuns) Next(context.Context) ([][]any, error) {
	if s.sent && s.fail != nil {
		return nil, s.fail
	}
	if len(s.recs) == 0 {
		return nil, io.EOF
	}
	s.sent = true
	n := min(7, len(s.recs))
	out := s.recs[:n]
	s.recs = s.recs[n:]
	return out, nil
}

func (s *sliceRuns) Close() error { return nil }

// nullKeys is a data file with nullable keys of several types.
type nullKeys struct {
	I   *int64   `parquet:"i,optional"`
	I32 *int32   `parquet:"i32,optional"`
	S   *string  `parquet:"s,optional"`
	B   []byte   `parquet:"b,optional"`
	D   *float64 `parquet:"d,optional"`
	F   *float32 `parquet:"f,optional"`
	T   *bool    `parquet:"t,optional"`
	Day *int32   `parquet:"day,date,optional"`
	TS  *int64   `parquet:"ts,timestamp(microsecond),optional"`
	MS  *int64   `parquet:"ms,timestamp(millisecond),optional"`
	I8  *int8    `parquet:"i8,optional"`
	U   *uint32  `parquet:"u,optional"`
}

// writeNullKeys writes files of runs of equal keys (some across row
// group boundaries) with nulls between and inside them.
func writeNullKeys(t *testing.T, ctx context.Context, data store.Store) []string {
	var uris []string
	for fi := range 3 {
		rows := make([]nullKeys, 1000+fi*137)
		for i := range rows {
			r := &rows[i]
			if (i*7+fi)%11 == 0 {
				continue // all keys null
			}
			k := int64((i / (3 + fi)) % 40) // runs of 3–5 rows, keys recur
			if i%13 == 5 {
				continue
			}
			r.I = &k
			k32 := int32(k - 20)
			r.I32 = &k32
			s := fmt.Sprintf("u%02d", k%17)
			r.S = &s
			r.B = []byte{byte(k % 9), 0}
			d := float64(k%5) - 2
			if k%5 == 2 && i%2 == 0 {
				d = -d // 0.0 and -0.0 in one run
			}
			r.D = &d
			f := float32(k%7) / 2
			r.F = &f
			tb := k%3 == 0
			r.T = &tb
			day := int32(19000 + k)
			r.Day = &day
			ts := 1_700_000_000_000_000 + k*1_000_003
			r.TS = &ts
			ms := -1_000_000 + k*1001
			r.MS = &ms
			i8 := int8(k - 20)
			r.I8 = &i8
			u := uint32(k)
			r.U = &u
		}
		name := fmt.Sprintf("nk/n%d.parquet", fi)
		writeRows(t, ctx, data, name, rows, parquet.MaxRowsPerRowGroup(int64(97+fi*50)), parquet.PageBufferSize(256))
		uris = append(uris, name)
	}
	return uris
}

// sameBuild fails unless two builds wrote the same data-file table and the
// same fragments, byte for byte, with the same key directories.
func sameBuild(t *testing.T, aIdx store.Store, a *Manifest, bIdx store.Store, b *Manifest) {
	t.Helper()
	ctx := context.Background()
	if !reflect.DeepEqual(a.Files, b.Files) || !reflect.DeepEqual(a.Skipped, b.Skipped) || a.KeyClass != b.KeyClass || a.NextFileID != b.NextFileID {
		t.Fatalf("data-file tables differ:\n%+v\n%+v", a.Files, b.Files)
	}
	if len(a.Fragments) != len(b.Fragments) || len(a.Fragments) == 0 {
		t.Fatalf("%d fragments against %d", len(a.Fragments), len(b.Fragments))
	}
	for i := range a.Fragments {
		x, y := a.Fragments[i], b.Fragments[i]
		if x.Entries != y.Entries || x.Size != y.Size || !reflect.DeepEqual(x.Groups, y.Groups) {
			t.Fatalf("fragment %d differs: %d entries, %d bytes against %d, %d (or its key directory)", i, x.Entries, x.Size, y.Entries, y.Size)
		}
		xb, err := store.ReadAll(ctx, aIdx, folderOf(a.Name)+x.Path)
		if err != nil {
			t.Fatal(err)
		}
		yb, err := store.ReadAll(ctx, bIdx, folderOf(b.Name)+y.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(xb, yb) {
			t.Fatalf("fragment %d: bytes differ", i)
		}
	}
}

// TestEngineBuildMatchesLocal builds hash and sorted row indexes on
// generated lakes (int64 and string keys, several row groups per file)
// and on files with null keys of every supported type, once locally and
// once from a test engine's runs (whole-file row positions, shuffled,
// cut at row group boundaries by the build), under the default budget and
// under one that spills: the data-file tables and fragments must be the
// same bytes. An Update through the engine adds files as a local Update
// does.
func TestEngineBuildMatchesLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake, lakeURIs, _ := testLake(t, dir, false)
	nk := writeNullKeys(t, ctx, lake)
	type tc struct {
		key  string
		uris []string
	}
	cases := []tc{{"user_id", lakeURIs}, {"track_uri", lakeURIs}}
	for _, k := range []string{"i", "i32", "s", "b", "d", "f", "t", "day", "ts", "ms", "i8"} {
		cases = append(cases, tc{k, nk})
	}
	for _, c := range cases {
		for _, kind := range []Kind{KindHash, KindSorted} {
			t.Run(c.key+"/"+string(kind), func(t *testing.T) {
				def := Definition{Name: "r", Key: c.key, Kind: kind}
				build := func(folder string, opts ...BuildOption) (store.Store, *Manifest) {
					idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "ix", c.key, string(kind), folder))
					if err != nil {
						t.Fatal(err)
					}
					half := len(c.uris) / 2
					if _, _, err := Create(ctx, idx, def, StoreResolver{lake}, c.uris[:half], opts...); err != nil {
						t.Fatal(err)
					}
					man, _, err := Update(ctx, idx, def.Name, StoreResolver{lake}, c.uris, opts...)
					if err != nil {
						t.Fatal(err)
					}
					return idx, man
				}
				localIdx, local := build("local")
				eng := &runEngine{data: lake}
				engIdx, onEng := build("engine", WithEngine(eng, 2))
				if len(eng.jobs) < 2 || eng.jobs[0].Key != c.key {
					t.Fatalf("engine jobs %+v", eng.jobs)
				}
				t.Logf("key type %s, %d requests", eng.jobs[0].KeyType, len(eng.jobs))
				sameBuild(t, localIdx, local, engIdx, onEng)
				_, spilled := build("spilled", WithEngine(&runEngine{data: lake}, 0), WithMemory(64<<10))
				if spilled.Entries() != local.Entries() {
					t.Fatalf("spilled build: %d entries, local %d", spilled.Entries(), local.Entries())
				}
			})
		}
	}
}

// TestEngineBuildRefusesBadRuns: records that name a foreign file, lie
// outside the file, carry a key of the wrong type or a failing stream
// fail the build with nothing written; definitions with covers or
// aggregates and key types no engine builds are refused.
func TestEngineBuildRefusesBadRuns(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake, _, _ := testLake(t, dir, true)
	nk := writeNullKeys(t, ctx, lake)
	// run and count find a file's first run record and its count record.
	isCount := func(r []any) bool { return r[2] == int64(-1) }
	find := func(r [][]any, count bool) int {
		for i := range r {
			if isCount(r[i]) == count {
				return i
			}
		}
		return -1
	}
	cases := []struct {
		name, want string
		mangle     func([][]any) [][]any
		fail       error
	}{
		{"run lost", "runs were lost or made up", func(r [][]any) [][]any { i := find(r, false); return append(r[:i], r[i+1:]...) }, nil},
		{"run made up", "runs were lost or made up", func(r [][]any) [][]any {
			i := find(r, false)
			return append(r, []any{r[i][0], r[i][1], r[i][2], r[i][3], nil})
		}, nil},
		{"count lost", "no count record", func(r [][]any) [][]any { i := find(r, true); return append(r[:i], r[i+1:]...) }, nil},
		{"rows unread", "the engine's scan read", func(r [][]any) [][]any { i := find(r, true); r[i][4] = r[i][4].(int64) - 1; return r }, nil},
		{"four columns", "want 5", func(r [][]any) [][]any { i := find(r, false); r[i] = r[i][:4]; return r }, nil},
		{"two counts", "two count records", func(r [][]any) [][]any { i := find(r, true); return append(r, r[i]) }, nil},
		{"count of a foreign file", "not a file of the batch", func(r [][]any) [][]any { i := find(r, true); r[i][0] = "other.parquet"; return r }, nil},
		{"foreign file", "not a file of the batch", func(r [][]any) [][]any { r[find(r, false)][0] = "other.parquet"; return r }, nil},
		{"past the end", "not within", func(r [][]any) [][]any { r[find(r, false)][2] = int64(1 << 40); return r }, nil},
		{"empty run", "not within", func(r [][]any) [][]any { r[find(r, false)][3] = int64(0); return r }, nil},
		{"wrong type", "is not a int64 key", func(r [][]any) [][]any { r[find(r, false)][1] = "x"; return r }, nil},
		{"short record", "3 columns, want 5", func(r [][]any) [][]any { i := find(r, false); r[i] = r[i][:3]; return r }, nil},
		{"stream fails", "connection lost", nil, errors.New("connection lost")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "bad", strings.ReplaceAll(c.name, " ", "_")))
			tmp := t.TempDir()
			_, _, err := Create(ctx, idx, Definition{Name: "r", Key: "i"}, StoreResolver{lake}, nk,
				WithEngine(&runEngine{data: lake, mangle: c.mangle, fail: c.fail}, 0), WithTempDir(tmp))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if v, _ := latestVersion(ctx, idx, "r", new(meter)); v != 0 {
				t.Fatalf("version %d committed", v)
			}
			var left []string
			for o, err := range idx.List(ctx, store.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				left = append(left, o.Key)
			}
			if len(left) > 0 {
				t.Fatalf("written: %v", left)
			}
		})
	}
	idx, _ := store.Open(ctx, "mem://")
	_, _, err := Create(ctx, idx, Definition{Name: "c", Key: "i", Cover: []string{"s"}}, StoreResolver{lake}, nk, WithEngine(&runEngine{data: lake}, 0))
	if !errors.Is(err, ErrBadQuery) || !strings.Contains(err.Error(), "cover columns and aggregates") {
		t.Fatalf("cover on engine: %v", err)
	}
	for _, typ := range []parquet.Type{parquet.Int96Type, parquet.Uint(32).Type(), parquet.Decimal(2, 9, parquet.Int32Type).Type(), parquet.Timestamp(parquet.Nanosecond).Type()} {
		if kt, why := engineKeyType(typ); kt != engineKeyUnknown || !strings.Contains(why, "not built on an engine") {
			t.Errorf("%v: %q, %q", typ, kt, why)
		}
	}
}

// TestEngineWhereSupported: UpdateAll with WithEngineWhereSupported (what
// `update --engine spark` does) builds the row indexes the engine can on
// it, and those with a cover column, aggregates or an unsupported key type
// (unsigned) locally; every row index equals the local UpdateAll's.
func TestEngineWhereSupported(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake, _, _ := testLake(t, dir, true)
	nk := writeNullKeys(t, ctx, lake)
	defs := []Definition{
		{Name: "plain", Key: "i", Kind: KindHash},
		{Name: "sorted", Key: "s", Kind: KindSorted},
		{Name: "covered", Key: "i", Cover: []string{"s"}},
		{Name: "agg", Key: "s", Aggregates: []Aggregate{{Op: "count"}}},
		{Name: "unsigned", Key: "u"},
	}
	run := func(folder string, opts ...BuildOption) store.Store {
		idx, err := store.Open(ctx, "file://"+filepath.Join(dir, folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			if _, _, err := Create(ctx, idx, d, StoreResolver{lake}, nk[:1]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := UpdateAll(ctx, idx, StoreResolver{lake}, nk, opts...); err != nil {
			t.Fatal(err)
		}
		return idx
	}
	local := run("local")
	eng := &runEngine{data: lake}
	onEng := run("engine", WithEngineWhereSupported(eng, 0))
	var keys []string
	for _, j := range eng.jobs {
		keys = append(keys, j.Key)
	}
	if !reflect.DeepEqual(keys, []string{"i", "s"}) {
		t.Fatalf("engine built %v, want the plain and sorted row indexes only", keys)
	}
	for _, d := range defs {
		a, err := loadManifest(ctx, local, d.Name, new(meter))
		if err != nil {
			t.Fatal(err)
		}
		b, err := loadManifest(ctx, onEng, d.Name, new(meter))
		if err != nil {
			t.Fatal(err)
		}
		sameBuild(t, local, a, onEng, b)
	}
}
