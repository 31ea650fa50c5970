package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// fixturesDir holds one folder per release (interop/fixtures/<release>/:
// root/ and answers.json, made by interop/scripts/ariadne_fixtures.py) and
// data/, the data files the releases indexed. ARIADNE_RELEASE_FIXTURES
// points the test at another folder of the same shape (e.g. fixtures just
// regenerated with ariadne_fixtures.py --out, before they are committed).
var fixturesDir = func() string {
	if d := os.Getenv("ARIADNE_RELEASE_FIXTURES"); d != "" {
		return d
	}
	return filepath.Join(repoDir(), "interop", "fixtures")
}()

// referenceRelease is the release whose answers are the right ones where an
// older release answered wrongly (the newest release with source).
const referenceRelease = "0.1.8-beta"

// releaseAnswers is answers.json.
type releaseAnswers struct {
	Release    string   `json:"release"`
	Jar        string   `json:"jar"`
	JarSHA256  string   `json:"jar_sha256"`
	DataPrefix string   `json:"data_prefix"`
	Built      []string `json:"built"`
	Skipped    []struct {
		Index, Reason string
	} `json:"skipped"`
	Markers map[string]struct {
		MetadataVersion      *int `json:"metadata_version"`
		StorageFormatVersion *int `json:"storage_format_version"`
	} `json:"markers"`
	Locate []locateAnswer `json:"locate"`
	Join   []joinAnswer   `json:"join"`
}

type locateAnswer struct {
	Index string                       `json:"index"`
	Query map[string][]json.RawMessage `json:"query"`
	Files []string                     `json:"files"`
	Error *string                      `json:"error"`
}

// key identifies a locate case across releases: index and query as JSON
// with sorted keys.
func (a locateAnswer) key() string {
	cols := make([]string, 0, len(a.Query))
	for c := range a.Query {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	var b strings.Builder
	b.WriteString(a.Index + " ")
	for _, c := range cols {
		var vs []string
		for _, v := range a.Query[c] {
			vs = append(vs, string(v))
		}
		fmt.Fprintf(&b, "%s=[%s] ", c, strings.Join(vs, ","))
	}
	return strings.TrimSpace(b.String())
}

type joinAnswer struct {
	Index       string              `json:"index"`
	On          []string            `json:"on"`
	Type        string              `json:"type"`
	IndexOnLeft bool                `json:"index_on_left"`
	QuerySchema string              `json:"query_schema"`
	QueryRows   [][]json.RawMessage `json:"query_rows"`
	Columns     []string            `json:"columns"`
	Rows        []string            `json:"rows"`
	Error       *string             `json:"error"`
}

func (a joinAnswer) key() string {
	side := "df.join(index)"
	if a.IndexOnLeft {
		side = "index.join(df)"
	}
	rows, _ := json.Marshal(a.QueryRows)
	return fmt.Sprintf("%s %s on %v %s %s", a.Index, side, a.On, a.Type, rows)
}

// knownDifference is a case where a release's recorded answer is wrong and
// ours is the reference release's (docs/compatibility.md "Older releases'
// answers", docs/interop.md "Differences").
type knownDifference struct {
	// before: the difference holds for releases older than this one.
	before string
	// index and match select the cases: the case key (locateAnswer.key,
	// joinAnswer.key) must contain match.
	index, match string
	// why, for the test log.
	why string
}

var knownDifferences = []knownDifference{
	{before: "0.1.0-beta", index: "regular", match: "Id=[1] Version=[3]",
		why: "multi-column locate before 0.1.0-beta unions the columns' files (OR); from 0.1.0-beta and here: intersection (AND)"},
	{before: "0.1.0-beta", index: "regular", match: "Id=[2] Version=[3]",
		why: "multi-column locate before 0.1.0-beta unions the columns' files (OR)"},
	{before: "0.1.0-beta", index: "large", match: "Id=[1] Version=[3]",
		why: "multi-column locate before 0.1.0-beta unions the columns' files (OR)"},
	{before: "0.1.1-beta", index: "computed", match: "index.join(df) on [Id]",
		why: "a join on no indexed column: through 0.1.0-beta the library joins with no file located (an empty result); 0.1.1-beta on, and we, refuse it (\"None of the join columns [Id] have indexes\")"},
	{before: "0.1.1-beta", index: "exploded", match: "user_id=",
		why: "locate by an exploded alias before 0.1.1-beta fails with UNRESOLVED_COLUMN (values stored under the array column's name); we migrate the column to the alias and answer"},
}

// differenceFor returns the known difference that covers a case of release.
func differenceFor(release, index, key string) *knownDifference {
	for i, d := range knownDifferences {
		if d.index == index && strings.Contains(key, d.match) && versionLess(release, d.before) {
			return &knownDifferences[i]
		}
	}
	return nil
}

// versionLess orders release versions: 0.0.1-alpha-37 < 0.0.1-alpha-44 <
// 0.1.0-beta < 0.1.10-beta (as version_key in ariadne_fixtures.py).
func versionLess(a, b string) bool { return slices.Compare(versionKey(a), versionKey(b)) < 0 }

func versionKey(v string) []int {
	base, tag, _ := strings.Cut(v, "-")
	var out []int
	for _, p := range strings.Split(base, ".") {
		var n int
		fmt.Sscanf(p, "%d", &n)
		out = append(out, n)
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, tag)
	var n int
	fmt.Sscanf(digits, "%d", &n)
	if strings.HasPrefix(tag, "alpha") {
		return append(out, 0, n)
	}
	return append(out, 1, 0)
}

func loadAnswers(t *testing.T, release string) *releaseAnswers {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixturesDir, release, "answers.json"))
	if err != nil {
		t.Fatalf("fixture of %s: %v (regenerate: docs/interop.md \"Release fixtures\")", release, err)
	}
	var a releaseAnswers
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s answers.json: %v", release, err)
	}
	if a.Release != release {
		t.Fatalf("%s answers.json is of release %q", release, a.Release)
	}
	return &a
}

// copyTree copies the folder src to dst (dst must not exist).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		w, err := os.Create(out)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, in); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
}

// fixtureCounts counts the cases of one release: locates and joins
// checked, documented differences among them, and queries both the release
// and we refuse.
type fixtureCounts struct{ locate, join, differences, refusals int }

// TestReleaseFixtures opens the store roots that each release of the Spark
// library built (interop/fixtures/<release>/root, committed; no Spark
// needed), migrates them where needed (releases before 0.1.5-beta write no
// version markers: the layout is detected) and checks that our locate and
// join give each release's recorded answers. Where a release answered
// wrongly (knownDifferences), the recorded answer must still differ from
// ours, and ours must be the reference release's answer.
func TestReleaseFixtures(t *testing.T) {
	releases, err := Releases()
	if err != nil {
		t.Fatal(err)
	}
	if len(releases) == 0 || releases[len(releases)-1] != referenceRelease {
		t.Fatalf("releases.txt %v: the newest must be the reference release %s", releases, referenceRelease)
	}
	ref := loadAnswers(t, referenceRelease)
	refLocate := map[string]locateAnswer{}
	for _, a := range ref.Locate {
		refLocate[a.key()] = a
	}
	refJoin := map[string]joinAnswer{}
	for _, a := range ref.Join {
		refJoin[a.key()] = a
	}
	counts := map[string]*fixtureCounts{}
	for _, rel := range releases {
		c := &fixtureCounts{}
		counts[rel] = c
		t.Run(rel, func(t *testing.T) {
			checkReleaseFixture(t, rel, refLocate, refJoin, c)
		})
	}
	var total fixtureCounts
	for _, rel := range releases {
		c := counts[rel]
		t.Logf("%-15s %2d locate + %2d join cases; %d documented differences; %d refused by both", rel, c.locate, c.join, c.differences, c.refusals)
		total.locate += c.locate
		total.join += c.join
		total.differences += c.differences
		total.refusals += c.refusals
	}
	t.Logf("all releases:   %d locate + %d join cases; %d documented differences; %d refused by both", total.locate, total.join, total.differences, total.refusals)
}

func checkReleaseFixture(t *testing.T, rel string, refLocate map[string]locateAnswer, refJoin map[string]joinAnswer, counts *fixtureCounts) {
	ctx := testContext(t, 5*time.Minute)
	a := loadAnswers(t, rel)
	if len(a.Built) == 0 {
		t.Fatalf("%s built no index: %+v", rel, a.Skipped)
	}
	dir := t.TempDir()
	if err := copyTree(filepath.Join(fixturesDir, rel, "root"), dir); err != nil {
		t.Fatal(err)
	}
	root := openStore(t, ctx, dir)
	data := openStore(t, ctx, filepath.Join(fixturesDir, "data"))
	res := store.NewResolver(store.ResolverOptions{})
	t.Cleanup(func() { res.Close() })
	if err := res.Register(strings.TrimSuffix(a.DataPrefix, "/"), data); err != nil {
		t.Fatal(err)
	}
	cat := index.NewCatalog(root, index.Options{Resolver: res})

	versioned := !versionLess(rel, "0.1.5-beta")
	fis := map[string]*fileindex.FileIndex{}
	for _, name := range a.Built {
		ix, err := cat.Get(ctx, name)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		m := ix.Metadata()
		// What the release wrote: markers from 0.1.5-beta on, none before.
		rec := a.Markers[name]
		if versioned != (m.MetadataVersion != nil && m.StorageFormatVersion != nil) ||
			!sameInt(rec.MetadataVersion, m.MetadataVersion) || !sameInt(rec.StorageFormatVersion, m.StorageFormatVersion) {
			t.Errorf("%s: markers %v/%v as read, recorded %v/%v", name, ptr(m.MetadataVersion), ptr(m.StorageFormatVersion), ptr(rec.MetadataVersion), ptr(rec.StorageFormatVersion))
		}
		if metadata.NeedsMigration(m) == versioned {
			t.Errorf("%s: NeedsMigration = %v for a %s root", name, !versioned, rel)
		}
		if err := ix.EnsureStorageReady(ctx); err != nil {
			t.Fatalf("%s: migration: %v", name, err)
		}
		m = ix.Metadata()
		if ptr(m.MetadataVersion) != "10" || ptr(m.StorageFormatVersion) != "3" {
			t.Errorf("%s: markers after the preflight %v/%v, want 10/3", name, ptr(m.MetadataVersion), ptr(m.StorageFormatVersion))
		}
		checkMigratedLayout(t, ctx, root, ix)
		fis[name] = fileindex.New(ix, fileindex.Options{})
	}

	for _, want := range a.Locate {
		counts.locate++
		key := want.key()
		q, err := locateQuery(want.Query)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		files, err := fis[want.Index].Locate(ctx, q)
		if err != nil {
			if want.Error != nil && differenceFor(rel, want.Index, key) == nil {
				counts.refusals++ // both refuse the query
				t.Logf("locate %s: refused by the release (%s) and by us (%v)", key, *want.Error, err)
			} else {
				t.Errorf("locate %s: %v (the release: %s)", key, err, describe(want.Files, want.Error))
			}
			continue
		}
		got := basenames(files, a.DataPrefix)
		d := differenceFor(rel, want.Index, key)
		if d == nil {
			if want.Error != nil {
				t.Errorf("locate %s: the release failed (%s), we answered %v; no documented difference", key, *want.Error, got)
			} else if !slices.Equal(got, nonNilStrings(want.Files)) {
				t.Errorf("locate %s: we answer %v, the release %v", key, got, want.Files)
			}
			continue
		}
		counts.differences++
		r, ok := refLocate[key]
		switch {
		case !ok || r.Error != nil:
			t.Errorf("locate %s: no answer of %s to compare with", key, referenceRelease)
		case !slices.Equal(got, nonNilStrings(r.Files)):
			t.Errorf("locate %s: we answer %v, %s answers %v", key, got, referenceRelease, r.Files)
		case want.Error == nil && slices.Equal(got, nonNilStrings(want.Files)):
			t.Errorf("locate %s: documented difference (%s) not seen: the release answers %v as we do", key, d.why, want.Files)
		default:
			t.Logf("locate %s: release %s, ours %v (%s)", key, describe(want.Files, want.Error), got, d.why)
		}
	}

	for _, want := range a.Join {
		counts.join++
		key := want.key()
		got, cols, err := runFixtureJoin(ctx, fis[want.Index], want)
		d := differenceFor(rel, want.Index, key)
		if d == nil {
			switch {
			case err != nil && want.Error != nil:
				counts.refusals++ // both refuse the join
				t.Logf("join %s: refused by the release (%s) and by us (%v)", key, *want.Error, err)
			case err != nil:
				t.Errorf("join %s: %v (the release: %d rows)", key, err, len(want.Rows))
			case want.Error != nil:
				t.Errorf("join %s: the release failed (%s), we gave %d rows; no documented difference", key, *want.Error, len(got))
			default:
				if !slices.Equal(cols, want.Columns) {
					t.Errorf("join %s: columns %v, the release's %v", key, cols, want.Columns)
				}
				if diff := diffLines(want.Rows, got); diff != "" {
					t.Errorf("join %s: %s", key, diff)
				}
			}
			continue
		}
		// A documented difference: ours must be the reference release's
		// answer (rows, or a refusal) and the release's must differ.
		counts.differences++
		r, ok := refJoin[key]
		switch {
		case !ok:
			t.Errorf("join %s: no answer of %s to compare with", key, referenceRelease)
		case (err != nil) != (r.Error != nil):
			t.Errorf("join %s: ours %v / %d rows, %s: %s", key, err, len(got), referenceRelease, describe(r.Rows, r.Error))
		case err == nil && diffLines(r.Rows, got) != "":
			t.Errorf("join %s: against %s: %s", key, referenceRelease, diffLines(r.Rows, got))
		case (want.Error != nil) == (err != nil) && (err != nil || diffLines(want.Rows, got) == ""):
			t.Errorf("join %s: documented difference (%s) not seen: the release answers as we do", key, d.why)
		default:
			t.Logf("join %s: release %s, ours %s (%s)", key, describe(want.Rows, want.Error), describeErr(len(got), err), d.why)
		}
	}
}

func describeErr(rows int, err error) string {
	if err != nil {
		return "refused: " + err.Error()
	}
	return fmt.Sprintf("%d rows", rows)
}

// checkMigratedLayout checks the storage layout after the preflight (storage
// format 3): the main table has file_size, exploded values under their
// alias, and every large-index table is named by its storage column.
func checkMigratedLayout(t *testing.T, ctx context.Context, root store.Store, ix *index.Index) {
	t.Helper()
	m := ix.Metadata()
	p := ix.Paths()
	tbl, err := delta.Open(ctx, store.Sub(root, p.Main+"/"))
	if err != nil {
		t.Errorf("%s main table: %v", ix.Name(), err)
		return
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Errorf("%s main table: %v", ix.Name(), err)
		return
	}
	st := snap.Schema()
	if _, ok := st.Field("file_size"); !ok {
		t.Errorf("%s: main table without file_size after migration: %v", ix.Name(), st.Names())
	}
	for _, e := range m.ExplodedFieldIndexes {
		if _, ok := st.Field(e.AsColumn); !ok {
			t.Errorf("%s: main table without the exploded alias %s: %v", ix.Name(), e.AsColumn, st.Names())
		}
		if _, ok := st.Field(e.ArrayColumn); ok {
			t.Errorf("%s: main table still has the legacy column %s", ix.Name(), e.ArrayColumn)
		}
	}
}

// locateQuery turns answers.json values into literals as the generator
// passed them to the JVM: integers as Integer, numbers with a point as
// Double, strings as String.
func locateQuery(q map[string][]json.RawMessage) (fileindex.Query, error) {
	out := fileindex.Query{}
	for c, vs := range q {
		for _, raw := range vs {
			v, err := literal(raw, nil)
			if err != nil {
				return nil, err
			}
			out[c] = append(out[c], v)
		}
	}
	return out, nil
}

// literal decodes one JSON value: typed by t when given, else by its text.
func literal(raw json.RawMessage, t schema.Type) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return v, nil
	}
	name := ""
	if p, ok := t.(*schema.Primitive); ok {
		name = p.Name
	}
	switch {
	case name == "double" || (name == "" && strings.ContainsAny(n.String(), ".eE")):
		return n.Float64()
	case name == "long":
		return n.Int64()
	default:
		i, err := n.Int64()
		return int32(i), err
	}
}

// ddlSchema parses the generator's query schemas ("Id int, Version int").
func ddlSchema(ddl string) (*schema.Struct, error) {
	st := &schema.Struct{}
	for _, part := range strings.Split(ddl, ",") {
		f := strings.Fields(part)
		if len(f) != 2 {
			return nil, fmt.Errorf("query schema %q", ddl)
		}
		name := map[string]string{"int": "integer", "double": "double", "string": "string", "long": "long"}[f[1]]
		if name == "" {
			return nil, fmt.Errorf("query schema %q: type %s", ddl, f[1])
		}
		st.Fields = append(st.Fields, schema.Field{Name: f[0], Type: &schema.Primitive{Name: name}, Nullable: true})
	}
	return st, nil
}

func runFixtureJoin(ctx context.Context, fi *fileindex.FileIndex, a joinAnswer) ([]string, []string, error) {
	st, err := ddlSchema(a.QuerySchema)
	if err != nil {
		return nil, nil, err
	}
	var rows [][]any
	for _, r := range a.QueryRows {
		if len(r) != len(st.Fields) {
			return nil, nil, fmt.Errorf("query row %v for schema %s", r, a.QuerySchema)
		}
		row := make([]any, len(r))
		for i, raw := range r {
			if row[i], err = literal(raw, st.Fields[i].Type); err != nil {
				return nil, nil, err
			}
		}
		rows = append(rows, row)
	}
	how, err := fileindex.ParseJoinType(a.Type)
	if err != nil {
		return nil, nil, err
	}
	res, err := fi.Join(ctx, fileindex.RowsSource(st, rows), a.On, how, fileindex.JoinOptions{IndexOnLeft: a.IndexOnLeft})
	if err != nil {
		return nil, nil, err
	}
	defer res.Close()
	var out [][]any
	for {
		b, err := res.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, b...)
	}
	lines, err := RenderRows(res.Schema(), out)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(lines)
	return nonNilStrings(lines), res.Schema().Names(), nil
}

func basenames(files []string, prefix string) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, strings.TrimPrefix(f, prefix))
	}
	slices.Sort(out)
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sameInt(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func ptr(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

func describe(files []string, e *string) string {
	if e != nil {
		return "failed: " + *e
	}
	return fmt.Sprint(nonNilStrings(files))
}
