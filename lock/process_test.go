package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// Environment of a child process of TestCompetingProcesses.
const (
	envChildRoot = "ARIADNE_LOCK_TEST_ROOT"
	envChildID   = "ARIADNE_LOCK_TEST_ID"
)

const (
	processes  = 6
	iterations = 20
	counterKey = "indexes/i/counter"
)

// TestCompetingProcesses: 6 processes (this test binary re-executed) each
// acquire the lock, increment a counter object with a plain, unconditional
// read-modify-write, and release, 20 times, on one file:// store. Only the
// lock keeps the increments apart, so the counter ends at exactly 120 iff
// no two processes ever held the lock at once.
func TestCompetingProcesses(t *testing.T) {
	if os.Getenv(envChildRoot) != "" {
		t.Skip("running as a child")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	root := t.TempDir()
	var wg sync.WaitGroup
	outs := make([][]byte, processes)
	errs := make([]error, processes)
	for p := range processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestLockChildProcess$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), envChildRoot+"="+root, envChildID+"="+strconv.Itoa(p))
			outs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for p := range processes {
		if errs[p] != nil {
			t.Fatalf("child %d: %v\n%s", p, errs[p], outs[p])
		}
	}
	ctx := context.Background()
	s, err := store.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := store.ReadAll(ctx, s, counterKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), strconv.Itoa(processes*iterations); got != want {
		t.Fatalf("counter = %s, want %s (lost updates: two holders at once)", got, want)
	}
	if ok, _ := store.Exists(ctx, s, lockKey); ok {
		t.Error("lock file left behind")
	}
}

// TestLockChildProcess is the body of one child of TestCompetingProcesses;
// it does nothing unless run as one.
func TestLockChildProcess(t *testing.T) {
	root, id := os.Getenv(envChildRoot), os.Getenv(envChildID)
	if root == "" {
		t.Skip("only runs as a child of TestCompetingProcesses")
	}
	ctx := context.Background()
	s, err := store.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		RetryInterval: time.Second,
		MaxWait:       10 * time.Minute,
		Owner:         "child-" + id,
		// Backoff in milliseconds instead of seconds: same schedule, 1000×
		// faster (1 ms, 2 ms, … capped at 60 ms).
		Sleep: func(ctx context.Context, d time.Duration) error { return sleep(ctx, d/1000) },
	}
	l := New(s, lockKey, "i", cfg)
	for i := range iterations {
		cid := fmt.Sprintf("p%s-%d", id, i)
		if err := l.Acquire(ctx, cid); err != nil {
			t.Fatal(err)
		}
		n := 0
		data, err := store.ReadAll(ctx, s, counterKey)
		switch {
		case errors.Is(err, store.ErrNotExist):
		case err != nil:
			t.Fatal(err)
		default:
			if n, err = strconv.Atoi(string(data)); err != nil {
				t.Fatalf("counter %q: %v", data, err)
			}
		}
		if err := store.WriteAll(ctx, s, counterKey, []byte(strconv.Itoa(n+1)), nil); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, cid); err != nil {
			t.Fatal(err)
		}
	}
}
