package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/s3test"
	"github.com/ariadne-go/ariadne/store"
)

// Environment of a holder process of the kill tests.
const (
	envHolderURL       = "ARIADNE_LOCK_HOLDER_URL"
	envHolderElsewhere = "ARIADNE_LOCK_HOLDER_ELSEWHERE"
)

// TestLockHolderProcess is the body of a holder process: it takes the lock
// with the default heartbeat, says "HELD" on stdout and keeps the lock
// (heartbeating) until it is killed. It does nothing unless run as one.
// With envHolderElsewhere set it records another pid namespace, as a
// process on another machine would, so only the heartbeat rule applies.
func TestLockHolderProcess(t *testing.T) {
	url := os.Getenv(envHolderURL)
	if url == "" {
		t.Skip("only runs as a holder process of the kill tests")
	}
	ctx := context.Background()
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	l := New(s, lockKey, "i", Config{HeartbeatInterval: DefaultHeartbeatInterval, Owner: "holder"})
	if os.Getenv(envHolderElsewhere) != "" {
		l.self.namespace = "another-machine/pid:[1]"
	}
	if err := l.Acquire(ctx, "holder"); err != nil {
		t.Fatal(err)
	}
	err = WithHeartbeat(ctx, l, "holder", func(ctx context.Context, check func() error) error {
		fmt.Println("HELD")
		<-ctx.Done() // until killed, or the lock is lost
		return check()
	})
	t.Fatalf("holder stopped: %v", err)
}

// startHolder starts a holder process on url and returns once it holds the
// lock.
func startHolder(t *testing.T, url string, elsewhere bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHolderURL+"="+url)
	if elsewhere {
		cmd.Env = append(cmd.Env, envHolderElsewhere+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	held := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "HELD" {
				held <- true
				return
			}
		}
		held <- false
	}()
	select {
	case ok := <-held:
		if !ok {
			t.Fatal("holder process exited without taking the lock")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("holder process did not take the lock within 30 s")
	}
	return cmd
}

// killHolder kills the holder with SIGKILL (no chance to release) and reaps
// it.
func killHolder(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// killStores returns the URLs the kill tests run on: a local folder and the
// S3 test server (reachable from child processes over loopback).
func killStores(t *testing.T) map[string]string {
	return map[string]string{
		"file": "file://" + t.TempDir(),
		"s3":   s3test.Start(t).URL("k", ""),
	}
}

// TestKilledHolderProcess: a process holding a heartbeating lock is killed
// with SIGKILL; the next acquirer, with the default timings (30 min
// timeout, 60 s retry interval, 1 h max wait), gets the lock within 15 s:
// at once when the holder ran on this machine (its process is gone), and
// once its heartbeat has been silent for 5 intervals when it ran elsewhere.
func TestKilledHolderProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes and waits for a heartbeat to go silent")
	}
	ctx := context.Background()
	for name, url := range killStores(t) {
		for _, elsewhere := range []bool{false, true} {
			if !elsewhere && currentProcess().namespace == "" {
				continue // no dead-process rule on this platform
			}
			holder := startHolder(t, url, elsewhere)
			killHolder(t, holder)
			s, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			var ev events
			l := New(s, lockKey, "i", Config{HeartbeatInterval: DefaultHeartbeatInterval, OnEvent: ev.add})
			start := time.Now()
			if err := l.Acquire(ctx, "next"); err != nil {
				t.Fatalf("%s elsewhere=%v: %v", name, elsewhere, err)
			}
			took := time.Since(start)
			t.Logf("%s elsewhere=%v: acquired after %v (%s)", name, elsewhere, took.Round(time.Millisecond), ev.last().Reason)
			want, reason := 15*time.Second, "abandoned"
			if !elsewhere {
				want, reason = 3*time.Second, "no longer exists"
			}
			if took > want {
				t.Errorf("%s elsewhere=%v: acquired after %v, want at most %v", name, elsewhere, took, want)
			}
			if !strings.Contains(ev.last().Reason, reason) {
				t.Errorf("%s elsewhere=%v: reason %q, want %q", name, elsewhere, ev.last().Reason, reason)
			}
			if err := l.Release(ctx, "next"); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}
	}
}

// TestLiveHolderProcessKeepsLock: a live heartbeating holder in another
// process (seen as on another machine, so only its heartbeat speaks for it)
// is never taken over: an acquirer with the default timings that waits 12 s,
// more than the 10 s after which a silent lock is abandoned, fails.
func TestLiveHolderProcessKeepsLock(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process and waits 12 s")
	}
	ctx := context.Background()
	url := "file://" + t.TempDir()
	holder := startHolder(t, url, true)
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ev events
	l := New(s, lockKey, "i", Config{HeartbeatInterval: DefaultHeartbeatInterval, MaxWait: 12 * time.Second, OnEvent: ev.add})
	err = l.Acquire(ctx, "next")
	if !errors.Is(err, aerr.ErrIndexLock) {
		t.Fatalf("err = %v, want ErrIndexLock (the holder is alive)", err)
	}
	if info, err := l.Read(ctx); err != nil || info.CorrelationID != "holder" {
		t.Fatalf("lock now %+v, %v; want still held by the holder", info, err)
	}
	if k := ev.kinds(); len(k) != 1 || k[0] != Waiting {
		t.Errorf("events %v, want one Waiting", k)
	} else {
		t.Logf("waiting message: %s", ev.list[0])
	}
	if holder.ProcessState != nil {
		t.Fatal("holder exited")
	}
}
