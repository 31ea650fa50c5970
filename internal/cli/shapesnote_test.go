package cli

import (
	"fmt"
	"os/exec"
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
	code, out, errs = run(t, dir, "lookup", table, "--key", "k=7", "--explain")
	if code != 0 || errs != "" || !strings.Contains(out, "for want of the pages' shapes; save shape files with `"+wantCmd+"`") {
		t.Fatalf("lookup --explain: exit %d, stderr %q; want the command in the plan, not a note:\n%s", code, errs, out)
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

// TestSaveShapesCommand: the command a note suggests names the same store
// and configuration as the command that printed it, and is one a POSIX
// shell reads back word for word, whatever the table's name.
func TestSaveShapesCommand(t *testing.T) {
	for _, c := range []struct {
		g           globals
		table, want string
	}{
		{globals{}, "plays", "ariadne warm plays --save-shapes"},
		{globals{}, "db.plays_2024-06", "ariadne warm db.plays_2024-06 --save-shapes"},
		{globals{}, "my plays", "ariadne warm 'my plays' --save-shapes"},
		{globals{}, "it's", `ariadne warm 'it'\''s' --save-shapes`},
		{globals{}, "$HOME", "ariadne warm '$HOME' --save-shapes"},
		{globals{}, "=ls", "ariadne warm '=ls' --save-shapes"},
		{globals{}, "-x", "ariadne warm --save-shapes -- -x"},
		{globals{}, "été", "ariadne warm 'été' --save-shapes"},
		{globals{storeURL: "s3://lake/a b?region=eu", configFile: "/etc/ariadne.json", set: []string{"rowIndexShapeBytes=-1"}}, "plays",
			"ariadne --store 's3://lake/a b?region=eu' --config /etc/ariadne.json --set rowIndexShapeBytes=-1 warm plays --save-shapes"},
		// No credentials in a message: the URL's user info and keys that
		// do not bear on the row index are left out.
		{globals{storeURL: "s3://AKIA:secret@lake/p", set: []string{"sparkRemote=sc://h:15002/;token=t0k", "rowIndexCacheBytes=1"}}, "plays",
			"ariadne --store s3://lake/p --set rowIndexCacheBytes=1 warm plays --save-shapes"},
	} {
		if got := c.g.saveShapesCommand(c.table); got != c.want {
			t.Errorf("table %q: %s, want %s", c.table, got, c.want)
		}
	}
	// Read back by the shell: each word as it was.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, word := range []string{"plays", "it's", "a'b'c", "$HOME", "`id`", "a b\tc\nd", "*", "~x", "#x", "!x", "=ls", "été", "''", "%+@:,=/"} {
		out, err := exec.Command(sh, "-c", "printf '%s' "+shellWord(word)).Output()
		if err != nil || string(out) != word {
			t.Errorf("%q as %s: the shell read %q (%v)", word, shellWord(word), out, err)
		}
	}
}
