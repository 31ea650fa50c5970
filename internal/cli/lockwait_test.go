package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/lock"
	"github.com/ariadne-go/ariadne/store"
)

// TestLockWaitIsAnnounced: a command that finds an index's lock held says
// so on stderr, naming the holder, since when it holds it, the rule by
// which it would be taken over and how long the command waits.
func TestLockWaitIsAnnounced(t *testing.T) {
	dir := t.TempDir()
	schemaFile := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schemaFile, []byte(`{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}}]}`), 0o644)
	runOK(t, dir, "create", "x", "--format", "csv", "--schema", schemaFile)
	data := filepath.Join(t.TempDir(), "a.csv")
	os.WriteFile(data, []byte("Id\n1\n"), 0o644)

	ctx := context.Background()
	root, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	at := time.Now().Add(-3 * time.Minute).UTC().Truncate(time.Second)
	spark := lock.LockInfo{CorrelationID: "spark-job", AcquiredAt: at, LastRefreshedAt: at, Owner: "local-1700000000000"}
	if err := store.WriteAll(ctx, root, "indexes/x/.filelist.lock", spark.Marshal(), nil); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, dir, "--set", "lockMaxWait=-1", "add-files", "x", data)
	t.Log(errs)
	if code == 0 {
		t.Fatal("add-files succeeded past a held lock")
	}
	for _, want := range []string{"waiting for lock indexes/x/.filelist.lock of index 'x'", "owner 'local-1700000000000'",
		"correlationId 'spark-job'", "since " + lock.FormatInstant(at), "taken over only if not refreshed for 30m0s", "giving up in 0s",
		"Currently held by correlationId='spark-job'"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}
