package index

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/lock"
	"github.com/ariadne-go/ariadne/store"
)

// holdEnv makes the test binary a process that holds one of an index's
// locks until killed: "update" or "filelist".
const holdEnv = "ARIADNE_INDEX_TEST_HOLD"

// holdMain opens the index "held" under ARIADNE_INDEX_TEST_ROOT with the
// default options, takes the lock named by holdEnv as the commands do
// (WithUpdateLock for update, compact, delete-files and vacuum; the
// FileList lock for add-files), says "HELD" and blocks.
func holdMain() error {
	ctx := context.Background()
	root, err := store.Open(ctx, os.Getenv("ARIADNE_INDEX_TEST_ROOT"))
	if err != nil {
		return err
	}
	ix, err := NewCatalog(root, Options{}).Get(ctx, "held")
	if err != nil {
		return err
	}
	body := func(ctx context.Context) error {
		fmt.Println("HELD")
		<-ctx.Done()
		return ctx.Err()
	}
	if os.Getenv(holdEnv) == "update" {
		return ix.WithUpdateLock(ctx, body)
	}
	return ix.withLock(ctx, ix.paths.FileListLock, body)
}

// lockEvents records the catalog's lock events.
type lockEvents struct {
	mu   sync.Mutex
	list []lock.Event
}

func (e *lockEvents) add(ev lock.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

func (e *lockEvents) all() []lock.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]lock.Event(nil), e.list...)
}

// defaultCatalog opens a catalog with the default configuration (30 min
// lock timeout, 60 s retry interval, 1 h max wait) on dir.
func defaultCatalog(t *testing.T, dir string, ev *lockEvents) *Catalog {
	t.Helper()
	root, err := store.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return NewCatalog(root, Options{OnLockEvent: ev.add})
}

// TestKilledLockHolder: a process killed with SIGKILL while it holds the
// update lock (update, compact, delete-files, vacuum) or the FileList lock
// (add-files) does not block the next run: with the default settings it
// proceeds within 15 s (at once here: the holder's process is gone).
func TestKilledLockHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := context.Background()
	for _, which := range []string{"update", "filelist"} {
		dir := t.TempDir()
		var ev lockEvents
		cat := defaultCatalog(t, dir, &ev)
		ix, err := cat.Open(ctx, "held", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), holdEnv+"="+which, "ARIADNE_INDEX_TEST_ROOT=file://"+dir)
		cmd.Stderr = os.Stderr
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "HELD" {
			cmd.Process.Kill()
			t.Fatalf("%s: holder did not take the lock: %q", which, sc.Text())
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		start := time.Now()
		if which == "update" {
			err = ix.WithUpdateLock(ctx, func(context.Context) error { return nil })
		} else {
			_, err = ix.AddFiles(ctx, "file:///data/a.csv")
		}
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: next run: %v", which, err)
		}
		if took > 15*time.Second {
			t.Errorf("%s: next run proceeded after %v, want within 15 s", which, took)
		}
		evs := ev.all()
		if len(evs) == 0 || evs[len(evs)-1].Kind != lock.TakenOver {
			t.Fatalf("%s: events %v, want a takeover", which, evs)
		}
		t.Logf("%s: proceeded after %v; %s", which, took.Round(time.Millisecond), evs[len(evs)-1])
	}
}

// TestAbandonedLockOfAnotherMachine: a heartbeating lock left by a process
// on another machine (its pid means nothing here) is taken over by the
// next run with the default settings once its heartbeat has been silent
// for 5 intervals, within 15 s.
func TestAbandonedLockOfAnotherMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 10 s")
	}
	ctx := context.Background()
	dir := t.TempDir()
	var ev lockEvents
	cat := defaultCatalog(t, dir, &ev)
	ix, err := cat.Open(ctx, "i", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	info := lock.LockInfo{CorrelationID: "gone", AcquiredAt: now, LastRefreshedAt: now, Owner: "other",
		Heartbeat: lock.DefaultHeartbeatInterval, Host: "other", PID: 1, PIDNamespace: "other-boot/pid:[1]"}
	if err := store.WriteAll(ctx, cat.Root(), ix.Paths().UpdateLock, info.Marshal(), nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := ix.WithUpdateLock(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 9*time.Second || took > 15*time.Second {
		t.Errorf("proceeded after %v, want 10-15 s", took)
	}
}

// TestSparkLockIsWaitedFor: a lock the Spark library wrote (no heartbeat
// mark) is not taken over early: the wait is announced with lockTimeout as
// the rule, and with lockMaxWait = 0 (≤ 0, §7) the run fails at the first
// check, leaving the lock alone.
func TestSparkLockIsWaitedFor(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var ev lockEvents
	cfg := config.Defaults()
	cfg.LockMaxWait = 0
	cat := NewCatalog(root, Options{Config: cfg, OnLockEvent: ev.add})
	ix, err := cat.Open(ctx, "i", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(-time.Minute)
	spark := lock.LockInfo{CorrelationID: "spark-job", AcquiredAt: now, LastRefreshedAt: now, Owner: "local-1700000000000"}
	if err := store.WriteAll(ctx, root, ix.Paths().FileListLock, spark.Marshal(), nil); err != nil {
		t.Fatal(err)
	}
	_, err = ix.AddFiles(ctx, "file:///data/a.csv")
	if !errors.Is(err, aerr.ErrIndexLock) || !strings.Contains(err.Error(), "spark-job") {
		t.Fatalf("err = %v, want ErrIndexLock naming the Spark holder", err)
	}
	evs := ev.all()
	if len(evs) != 1 || evs[0].Kind != lock.Waiting || evs[0].TakeOverAfter != 30*time.Minute {
		t.Fatalf("events %+v", evs)
	}
	if msg := evs[0].String(); !strings.Contains(msg, "Spark library lock") || !strings.Contains(msg, "spark-job") {
		t.Errorf("message %q", msg)
	}
	data, _ := store.ReadAll(ctx, root, ix.Paths().FileListLock)
	if string(data) != string(spark.Marshal()) {
		t.Errorf("Spark lock changed: %s", data)
	}
}

// TestOwnLocksAreMarked: the locks the index takes carry the heartbeat
// mark and this process's identity.
func TestOwnLocksAreMarked(t *testing.T) {
	ctx := context.Background()
	cat, _ := testCatalog(t)
	ix, err := cat.Open(ctx, "i", OpenOptions{Schema: mustSchema(t, t1s), Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	err = ix.WithUpdateLock(ctx, func(ctx context.Context) error {
		data, err := store.ReadAll(ctx, cat.Root(), ix.Paths().UpdateLock)
		if err != nil {
			return err
		}
		info, err := lock.ParseLockInfo(data)
		if err != nil {
			return err
		}
		if info.Heartbeat != lock.DefaultHeartbeatInterval || info.PID != os.Getpid() {
			t.Errorf("lock %s: want heartbeat %v and pid %d", data, lock.DefaultHeartbeatInterval, os.Getpid())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
