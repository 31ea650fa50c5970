package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestUnshapedNote: a text lookup that reads many pages whole for want of
// their shapes (uncompressed PLAIN strings in small pages, a key with a
// row in each) says on stderr, once its rows are out, how to save the
// shapes, with a command that can be pasted; after that command a fresh
// process's lookup reads parts of the pages, says nothing, and returns
// the same rows. --json and --explain carry the count in the plan instead.
func TestUnshapedNote(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	type row struct {
		K int64  `parquet:"k"`
		S string `parquet:"s,plain"`
	}
	rows := make([]row, 20000)
	for i := range rows {
		rows[i] = row{K: int64(i % 250), S: fmt.Sprintf("value-%06d-%s", i, strings.Repeat("x", i%17))}
	}
	file := filepath.Join(data, "part-0.parquet")
	if err := parquet.WriteFile(file, rows, parquet.PageBufferSize(4<<10)); err != nil {
		t.Fatal(err)
	}
	const table = "it's plays" // a name the shell must see quoted
	runOK(t, dir, "create", table, "--format", "parquet", "--infer-from", file)
	runOK(t, dir, "add-files", table, file)
	runOK(t, dir, "add-row-index", table, "--key", "k")

	wantCmd := `ariadne warm 'it'\''s plays' --save-shapes`
	code, before, errs := run(t, dir, "lookup", table, "--key", "k=7")
	if code != 0 {
		t.Fatalf("lookup: exit %d: %s", code, errs)
	}
	if n := strings.Count(before, "\n"); n != 1+len(rows)/250 {
		t.Fatalf("lookup: %d lines, want a header and %d rows", n, len(rows)/250)
	}
	if !strings.Contains(errs, "for want of their shapes") || !strings.Contains(errs, "`"+wantCmd+"`") {
		t.Fatalf("lookup of 80 rows in 80 pages read whole: stderr %q, want a note naming %s", errs, wantCmd)
	}
	// The machine-readable forms carry the count, not the note.
	code, out, errs := run(t, dir, "--json", "lookup", table, "--key", "k=7", "--explain")
	if code != 0 || errs != "" || !strings.Contains(out, `"unshaped_pages":`) {
		t.Fatalf("lookup --json: exit %d, stderr %q", code, errs)
	}
	out = runOK(t, dir, "lookup", table, "--key", "k=7", "--explain")
	if !strings.Contains(out, "for want of the pages' shapes; save shape files with `"+wantCmd+"`") {
		t.Fatalf("lookup --explain names no command to save the shapes:\n%s", out)
	}

	runOK(t, dir, "warm", table, "--save-shapes")
	code, after, errs := run(t, dir, "lookup", table, "--key", "k=7")
	if code != 0 || errs != "" {
		t.Fatalf("lookup after saving the shapes: exit %d, stderr %q", code, errs)
	}
	if after != before {
		t.Fatalf("lookup after saving the shapes: other rows\n%s\nwant\n%s", after, before)
	}
}

// TestSaveShapesCommand: the command a note suggests is one a POSIX shell
// reads back as the table's name, whatever the name.
func TestSaveShapesCommand(t *testing.T) {
	for _, c := range []struct{ table, want string }{
		{"plays", "ariadne warm plays --save-shapes"},
		{"db.plays_2024-06", "ariadne warm db.plays_2024-06 --save-shapes"},
		{"my plays", "ariadne warm 'my plays' --save-shapes"},
		{"it's", `ariadne warm 'it'\''s' --save-shapes`},
		{"$HOME", "ariadne warm '$HOME' --save-shapes"},
		{"-x", "ariadne warm --save-shapes -- -x"},
		{"été", "ariadne warm 'été' --save-shapes"},
	} {
		if got := saveShapesCommand(c.table); got != c.want {
			t.Errorf("table %q: %s, want %s", c.table, got, c.want)
		}
	}
}
