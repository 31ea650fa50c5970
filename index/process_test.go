package index

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/store"
)

// childEnv marks a re-executed test binary acting as one competing process.
const childEnv = "ARIADNE_INDEX_TEST_CHILD"

// TestMain lets the test binary act as a child process of
// TestCompetingProcesses.
func TestMain(m *testing.M) {
	if os.Getenv(holdEnv) != "" {
		err := holdMain()
		fmt.Fprintln(os.Stderr, "holder:", err)
		os.Exit(1)
	}
	if os.Getenv(childEnv) != "" {
		if err := childMain(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childMain creates (or reconnects to) the joint index and tracks its own
// files one call at a time, as an independent process would.
func childMain() error {
	ctx := context.Background()
	root, err := store.Open(ctx, os.Getenv("ARIADNE_INDEX_TEST_ROOT"))
	if err != nil {
		return err
	}
	cfg := config.Defaults()
	cfg.LockRetryInterval = time.Second
	cfg.LockMaxWait = 5 * time.Minute
	cat := NewCatalog(root, Options{Config: cfg, Owner: "child-" + os.Getenv(childEnv)})
	st, err := parseSchema(t1s)
	if err != nil {
		return err
	}
	ix, err := cat.Open(ctx, "joint", OpenOptions{Schema: st, Format: "csv"})
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(os.Getenv("ARIADNE_INDEX_TEST_FILES"))
	for i := range n {
		if _, err := ix.AddFiles(ctx, fmt.Sprintf("file:///data/p%s-%d.csv", os.Getenv(childEnv), i)); err != nil {
			return err
		}
	}
	return nil
}

// TestCompetingProcesses: several OS processes create the same index and
// add files concurrently through one local store; every file must be
// tracked exactly once and no lock may remain.
func TestCompetingProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	cat, dir := testCatalog(t)
	const procs, files = 4, 3
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(p), "ARIADNE_INDEX_TEST_ROOT=file://"+dir,
			"ARIADNE_INDEX_TEST_FILES="+strconv.Itoa(files))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child failed: %v", err)
		}
	}
	ix, err := cat.Get(context.Background(), "joint")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ix.Files(context.Background())
	if err != nil || len(got) != procs*files {
		t.Fatalf("want %d tracked files, got %d (%v)", procs*files, len(got), err)
	}
	if _, err := os.Stat(dir + "/indexes/joint/.filelist.lock"); !os.IsNotExist(err) {
		t.Fatal("lock left behind")
	}
}
