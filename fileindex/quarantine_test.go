package fileindex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// TestTypeChangeQuarantines: after the stored schema changes an indexed
// column's type (create --allow-schema-mismatch), a new file whose values
// have the new type cannot enter the main table. The update quarantines it
// (listed with the reason naming the column, the types and the fix) and
// indexes the others; staging/ does not stay stuck; later updates do not
// fail on it; RetryQuarantined tries it again.
func TestTypeChangeQuarantines(t *testing.T) {
	ctx := context.Background()
	e := newUpdEnv(t)
	const longS = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`
	const stringS = `{"type":"struct","fields":[{"name":"id","type":"string","nullable":true,"metadata":{}}]}`
	write := func(name, js string, vals ...any) string {
		st, err := schema.Parse(js)
		must(t, err)
		var buf bytes.Buffer
		w := pqrow.NewWriter(&buf, st, pqrow.WriterOptions{})
		for _, v := range vals {
			must(t, w.Write(pqrow.Row{v}))
		}
		_, err = w.Close()
		must(t, err)
		p := filepath.Join(e.dir, name)
		must(t, os.WriteFile(p, buf.Bytes(), 0o644))
		return updFileURI(t, p)
	}
	a := write("a.parquet", longS, int64(1), int64(2))
	b := write("b.parquet", stringS, "x", "y")
	c := write("c.parquet", stringS, nil)

	ix := e.open("q", longS, "parquet", nil)
	must(t, ix.AddIndex(ctx, "id"))
	updAddFiles(t, ix, a)
	updMust(t, e.fi(ix))

	st, err := schema.Parse(stringS)
	must(t, err)
	ix, err = e.cat.Open(ctx, "q", index.OpenOptions{Schema: st, Format: "parquet", AllowSchemaMismatch: true})
	must(t, err)
	updAddFiles(t, ix, b, c)
	res := updMust(t, e.fi(ix))
	if len(res.Quarantined) != 1 || res.Quarantined[0].File != b {
		t.Fatalf("quarantined %+v, want %s", res.Quarantined, b)
	}
	for _, want := range []string{"index column id", "array<string>", "array<bigint>", "--allow-schema-mismatch", "--retry-quarantined"} {
		if !strings.Contains(res.Quarantined[0].Reason, want) {
			t.Errorf("reason %q does not say %q", res.Quarantined[0].Reason, want)
		}
	}
	if _, err := store.ReadAll(ctx, e.root, ix.Paths().Staging+"/_delta_log/00000000000000000000.json"); err == nil {
		t.Error("staging/ left behind")
	}
	main := updMainTable(t, ix)
	if _, ok := main[a]; !ok {
		t.Errorf("main table lost %s", a)
	}
	if _, ok := main[c]; !ok {
		t.Errorf("%s (only nulls in id) not indexed", c)
	}
	if _, ok := main[b]; ok {
		t.Errorf("quarantined %s is in the main table", b)
	}
	// Listed, not read again, and updates go on.
	q, err := e.fi(ix).Quarantined(ctx)
	if err != nil || len(q) != 1 || q[0].File != b {
		t.Fatalf("Quarantined() = %+v, %v", q, err)
	}
	res = updMust(t, e.fi(ix))
	if res.NewFiles != 0 || len(res.Quarantined) != 0 || res.RecoveredStaging {
		t.Fatalf("second update %+v", res)
	}
	// Retried: the cause remains, so it is quarantined again.
	res, err = e.fi(ix).Update(ctx, UpdateOptions{RetryQuarantined: true})
	must(t, err)
	if len(res.Quarantined) != 1 || res.Quarantined[0].File != b {
		t.Fatalf("retry: quarantined %+v", res.Quarantined)
	}
}
