package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/index"
)

// goSyntax matches what fmt prints for Go values that have no text form of
// their own: maps, structs (with field names), pointers to structs, slices
// ([a b]), nil values and fmt's own error verbs.
var goSyntax = regexp.MustCompile(`map\[|&\{|\{[A-Z][A-Za-z0-9]*:|%!|<nil>|\{\}|\[\]\S|0x[0-9a-f]{8,}|\[\w+( \w+)+\]`)

// TestTextOutputHasNoGoSyntax runs every command that answers on a small
// lake, without --json, and fails when its text (stdout and stderr) shows
// raw Go syntax such as map[...] or {Field:...}: text output is for
// people.
func TestTextOutputHasNoGoSyntax(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	type row struct {
		UserID int64   `parquet:"user_id"`
		Track  string  `parquet:"track"`
		Kind   string  `parquet:"kind"`
		Ms     int64   `parquet:"ms"`
		Score  float64 `parquet:"score"`
	}
	for f := range 3 {
		var rows []row
		for i := range 200 {
			rows = append(rows, row{UserID: int64((i*7 + f) % 50), Track: fmt.Sprintf("t%03d", (i+f)%40), Kind: []string{"song", "ad"}[i%2],
				Ms: int64(i * 1000), Score: float64(i) / 4})
		}
		if err := parquet.WriteFile(filepath.Join(data, fmt.Sprintf("part-%d.parquet", f)), rows); err != nil {
			t.Fatal(err)
		}
	}
	keys := filepath.Join(t.TempDir(), "keys.csv")
	os.WriteFile(keys, []byte("user_id\n1\n2\n"), 0o644)
	p0 := filepath.Join(data, "part-0.parquet")
	checked := 0
	text := func(args ...string) {
		t.Helper()
		code, out, errs := run(t, dir, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		for _, s := range []struct{ name, text string }{{"stdout", out}, {"stderr", errs}} {
			for _, line := range strings.Split(s.text, "\n") {
				if m := goSyntax.FindString(line); m != "" {
					t.Errorf("%v: %s shows Go syntax %q:\n%s", args, s.name, m, line)
				}
			}
		}
		checked++
	}
	text("create", "plays", "--format", "parquet", "--infer-from", p0)
	text("add-index", "plays", "--regular", "user_id", "--bloom", "track", "--range", "ms")
	text("add-files", "plays", data)
	// Without a row index, warm says there is nothing to warm.
	if code, out, _ := run(t, dir, "warm", "plays"); code != 0 || !strings.Contains(out, "plays has no row index: nothing to warm") {
		t.Fatalf("warm without a row index: exit %d, %q", code, out)
	}
	text("files", "plays")
	text("update", "plays")
	text("list")
	text("describe", "plays")
	text("stats", "plays")
	text("find-indexes", p0)
	text("locate", "plays", "--key", "user_id=1,2", "--explain")
	text("locate", "plays", "--keys", keys, "--per-key", "--explain")
	text("join", "plays", "--keys", keys, "--on", "user_id", "--explain")
	text("add-row-index", "plays", "--key", "user_id", "--cover", "ms", "--aggregate", "count", "--aggregate", "sum:ms",
		"--aggregate", "min:score", "--aggregate", "count-by:kind")
	text("add-row-index", "plays", "--key", "ms", "--kind", "sorted", "--name", "ms_sorted")
	text("describe", "plays")
	text("describe")
	text("lookup", "plays", "--key", "user_id=1", "--limit", "2", "--explain")
	text("lookup", "plays", "--key", "user_id=1", "--columns", "user_id,ms")
	text("lookup", "plays", "--key", "ms=1000..3000")
	text("lookup", "plays", "--key", "user_id=1", "--sql", "select null as nothing, count(*) as n from rows")
	text("warm", "plays")
	text("update", "plays")
	text("compact", "plays")
	text("vacuum", "plays", "--retain", "0s")
	text("prepare", data, "--out", filepath.Join(t.TempDir(), "prep"), "--key", "user_id", "--buckets", "2")
	paths, _ := index.PathsFor("plays")
	text("delta", "ls", "file://"+filepath.ToSlash(dir)+"/"+paths.Main)
	dv, _ := filepath.Abs("../../testdata/delta-rs/table-with-dv-small") // with reader and writer features
	text("delta", "ls", dv)
	text("delete-files", "plays", "file://"+filepath.ToSlash(p0))
	text("drop-row-index", "plays", "ms_sorted")
	text("remove", "plays")
	if checked < 29 {
		t.Fatalf("%d commands checked", checked)
	}
	// The pattern catches what it is meant to.
	for _, bad := range []string{"map[a:1]", "{Version:3 Files:2}", "&{1 2}", "%!d(string=x)", "[]x", "[a b]"} {
		if !goSyntax.MatchString(bad) {
			t.Errorf("the check misses %q", bad)
		}
	}
}
