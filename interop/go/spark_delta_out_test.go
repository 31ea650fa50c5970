package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/cli"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// readDeltaOut reads the Delta table at dir with our delta package: its
// version, its schema's names and types, and its rows rendered canonically
// (sorted).
func readDeltaOut(t *testing.T, ctx context.Context, dir string) (int64, string, []string) {
	t.Helper()
	st, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tbl, err := delta.Open(ctx, st)
	if err != nil {
		t.Fatalf("delta.Open %s: %v", dir, err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatalf("snapshot of %s: %v", dir, err)
	}
	lines, err := scanLines(ctx, snap)
	if err != nil {
		t.Fatalf("scan of %s: %v", dir, err)
	}
	return snap.Version(), typesOf(snap.Schema()), sortedLines(lines)
}

func sortedLines(l []string) []string {
	out := append([]string(nil), l...)
	slices.Sort(out)
	return out
}

// testSparkDeltaOutput: join output written by Spark's Delta writer
// (JoinOptions.OutputFormat delta) is a Delta table whose rows and schema
// (names and types) are the DuckDB path's, read by our delta package and
// by delta-rs; what an existing path gets (error by default, append and
// overwrite as new versions, the format inferred from the table, Parquet
// refused over it); the CLI's --spark-out-format/--spark-out-mode; and a
// Spark Connect server killed mid-write leaves no table version behind,
// after which an overwrite completes.
func testSparkDeltaOutput(t *testing.T, ctx context.Context, e *Env, srv *ConnectServer, eng *sparkengine.Engine, root, dir string, pq *fileindex.FileIndex) {
	want, err := runJoin(ctx, pq, "tag", fileindex.Left, fileindex.JoinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := typesOf(want.schema)
	write := func(path, format, mode string) (fileindex.JoinStats, error) {
		t.Helper()
		res, err := runJoin(ctx, pq, "tag", fileindex.Left, fileindex.JoinOptions{Engine: eng, Output: "file://" + path, OutputFormat: format, OutputMode: mode})
		if err == nil && len(res.lines) != 0 {
			t.Errorf("output %s: %d rows streamed back, want none", path, len(res.lines))
		}
		if err == nil && typesOf(res.schema) != wantTypes {
			t.Errorf("output %s: result schema %s, want %s", path, typesOf(res.schema), wantTypes)
		}
		return res.stats, err
	}
	check := func(path string, wantVersion int64, copies int) {
		t.Helper()
		v, types, lines := readDeltaOut(t, ctx, path)
		var wl []string
		for range copies {
			wl = append(wl, want.lines...)
		}
		wl = sortedLines(wl)
		if v != wantVersion || types != wantTypes {
			t.Errorf("%s: version %d, schema %s; want %d, %s", path, v, types, wantVersion, wantTypes)
		}
		if d := diffLines(wl, lines); d != "" {
			t.Errorf("%s (version %d): rows differ from DuckDB's ×%d:\n%s", path, v, copies, d)
		}
	}

	// A new table, read back by our delta package and by delta-rs.
	out := filepath.Join(dir, "delta-out")
	stats, err := write(out, fileindex.OutputDelta, "")
	if err != nil {
		t.Fatalf("delta output: %v", err)
	}
	if stats.OutputFormat != fileindex.OutputDelta {
		t.Errorf("stats %+v, want output_format delta", stats)
	}
	check(out, 0, 1)
	rs, err := e.CheckTables(ctx, dir, string(DeltaRS), []CheckRequest{{Table: out}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0].DeltaRS; r == nil || r.Error != nil || r.Version == nil || *r.Version != 0 {
		t.Errorf("delta-rs: %+v", r)
	} else if d := diffLines(want.lines, sortedLines(r.Rows)); d != "" {
		t.Errorf("delta-rs reads other rows than DuckDB's:\n%s", d)
	}

	// An existing path: refused by default (here, before Spark runs),
	// whatever the format; the table is untouched.
	for _, format := range []string{"", fileindex.OutputDelta, fileindex.OutputParquet} {
		if _, err := write(out, format, ""); !errors.Is(err, aerr.ErrInvalidArgument) || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("format %q into an existing table: %v, want invalid argument (already exists)", format, err)
		}
	}
	// Parquet over a Delta table is refused in every mode.
	for _, mode := range []string{fileindex.OutputOverwrite, fileindex.OutputAppend} {
		if _, err := write(out, fileindex.OutputParquet, mode); !errors.Is(err, aerr.ErrInvalidArgument) || !strings.Contains(err.Error(), "is a Delta table") {
			t.Errorf("parquet %s over a Delta table: %v, want invalid argument", mode, err)
		}
	}
	check(out, 0, 1)
	// Append and overwrite, the format inferred from the table.
	if stats, err := write(out, "", fileindex.OutputAppend); err != nil || stats.OutputFormat != fileindex.OutputDelta {
		t.Fatalf("append: %+v, %v", stats, err)
	}
	check(out, 1, 2)
	if _, err := write(out, "", fileindex.OutputOverwrite); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	check(out, 2, 1)

	// The command line.
	keysFile := filepath.Join(dir, "delta-keys.csv")
	if err := os.WriteFile(keysFile, []byte("tag,note\nt1,k0\nt4,k1\nzz,k2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cliOut := filepath.Join(dir, "cli-delta-out")
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, []string{"--store", "file://" + root, "join", "pq_all", "--keys", keysFile, "--on", "tag", "--how", "left", "--json",
		"--engine", "spark", "--spark", srv.Remote(), "--spark-out", cliOut, "--spark-out-format", "delta"}, cli.Env{Stdout: &stdout, Stderr: &stderr})
	if code != 0 {
		t.Fatalf("cli: exit %d: %s", code, stderr.String())
	}
	var summary struct {
		Event, Output, OutputFormat, OutputMode, Engine string
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("cli: stderr line %q is not JSON: %v", line, err)
		}
		if ev["event"] == "summary" {
			summary.Event, _ = ev["event"].(string)
			summary.Output, _ = ev["output"].(string)
			summary.OutputFormat, _ = ev["output_format"].(string)
			summary.OutputMode, _ = ev["output_mode"].(string)
			summary.Engine, _ = ev["engine"].(string)
		}
	}
	if summary.Event != "summary" || summary.OutputFormat != "delta" || summary.OutputMode != "error" || summary.Engine != "spark" ||
		!strings.HasSuffix(summary.Output, "cli-delta-out") || stdout.Len() != 0 {
		t.Errorf("cli: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
	check(cliOut, 0, 1)
	t.Logf("cli: %s", strings.TrimSpace(stderr.String()))

	// A Spark Connect server killed (SIGKILL) while Spark writes the
	// table: the join fails with a connection error and no table version
	// exists, whatever data files the write had put there; a retry by
	// default is refused (the path holds files), with mode overwrite it
	// completes.
	dir2 := t.TempDir()
	srv2, err := e.StartConnectServer(ctx, ConnectOptions{LogFile: filepath.Join(dir2, "connect-server.log"), StartTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Stop()
	eng2, err := sparkengine.New(ctx, srv2.Remote(), sparkengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close()
	killed := filepath.Join(dir, "killed-out")
	done := make(chan error, 1)
	go func() {
		_, err := runJoin(ctx, pq, "tag", fileindex.Left, fileindex.JoinOptions{Engine: eng2, Output: "file://" + killed, OutputFormat: fileindex.OutputDelta})
		done <- err
	}()
	// The write is the join's third request (after the keys and the read).
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		log, _ := os.ReadFile(srv2.LogFile)
		if strings.Count(string(log), "ExecuteGrpcResponseSender: Starting for opId") >= 3 {
			break
		}
	}
	// Let the write's tasks start putting data files down (the first job
	// of a fresh server spends seconds planning): a kill between the data
	// files and the commit is the case the commit protocol is for.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if parts, _ := filepath.Glob(filepath.Join(killed, "*.parquet")); len(parts) > 0 {
			break
		}
	}
	srv2.kill(9)
	err = <-done
	var se *sparkengine.Error
	if !errors.As(err, &se) || se.Kind != sparkengine.KindConnection || se.Op != "write output" {
		t.Fatalf("join while the server was killed: %v, want a *sparkengine.Error of kind connection in write output", err)
	}
	parts, _ := filepath.Glob(filepath.Join(killed, "*.parquet"))
	commits, _ := filepath.Glob(filepath.Join(killed, "_delta_log", "*.json"))
	t.Logf("killed mid-write: %d data file(s) written, %d commit(s): %v", len(parts), len(commits), err)
	if len(commits) != 0 {
		// The kill landed after the commit: the table must then be whole.
		check(killed, 0, 1)
	} else {
		st, err := store.Open(ctx, "file://"+killed)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := delta.Open(ctx, st)
		if err == nil {
			_, err = tbl.Snapshot(ctx)
		}
		st.Close()
		if err == nil {
			t.Errorf("after the kill with no commit, our delta package reads a table at %s", killed)
		}
		if len(parts) == 0 {
			t.Logf("the kill landed before any data file was written: the commit protocol was not exercised past the data files")
		}
	}
	if len(parts) > 0 || len(commits) > 0 {
		if _, err := write(killed, fileindex.OutputDelta, ""); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("retry into the killed write's path without a mode: %v, want invalid argument", err)
		}
	}
	if _, err := write(killed, fileindex.OutputDelta, fileindex.OutputOverwrite); err != nil {
		t.Fatalf("retry with overwrite: %v", err)
	}
	v, _, _ := readDeltaOut(t, ctx, killed)
	check(killed, v, 1)
}
