package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

func TestHeartbeatPeriod(t *testing.T) {
	s, _ := store.Open(context.Background(), "mem://")
	for _, tc := range []struct{ timeout, want time.Duration }{
		{2 * time.Second, time.Second}, // 2/3 = 0 → 1
		{3 * time.Second, time.Second},
		{7 * time.Second, 2 * time.Second}, // integer division
		{0, 600 * time.Second},             // default 1800 s
		{90500 * time.Millisecond, 30 * time.Second},
	} {
		if got := New(s, lockKey, "i", Config{Timeout: tc.timeout}).HeartbeatPeriod(); got != tc.want {
			t.Errorf("timeout %v: period %v, want %v", tc.timeout, got, tc.want)
		}
	}
}

// TestHeartbeatKeepsLockFresh (§8.27 "migration heartbeat prevents a
// long-running migration lock from becoming stale"): with a 2 s timeout, a
// body that runs 3.5 s keeps its lock; another acquirer still finds it
// fresh at the end.
func TestHeartbeatKeepsLockFresh(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Timeout: 2 * time.Second, RetryInterval: time.Second, MaxWait: time.Second, Owner: "migrator"}
	l := New(s, lockKey, "i", cfg)
	if err := l.Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	err = WithHeartbeat(ctx, l, "a", func(ctx context.Context, check func() error) error {
		for range 7 { // 7 × 500 ms = 3.5 s, checkpoints in between
			time.Sleep(500 * time.Millisecond)
			if err := check(); err != nil {
				return err
			}
		}
		other := New(s, lockKey, "i", cfg)
		if err := other.Acquire(ctx, "b"); !errors.Is(err, aerr.ErrIndexLock) {
			t.Errorf("other acquirer: err = %v, want ErrIndexLock (lock must still be fresh)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := l.Read(ctx)
	if err != nil || info.CorrelationID != "a" {
		t.Fatalf("after heartbeat: %+v, %v", info, err)
	}
	if !info.LastRefreshedAt.After(info.AcquiredAt) {
		t.Errorf("never refreshed: %+v", info)
	}
}

// TestHeartbeatDetectsReplacedOwnership (§8.27 "migration heartbeat fails
// when lock ownership is replaced"): the lock is released and re-acquired by
// another id inside the body; the heartbeat's next refresh fails, the body's
// checkpoint sees it and the block ends with a StorageMigration error.
func TestHeartbeatDetectsReplacedOwnership(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Timeout: 2 * time.Second, MaxWait: -1}
			l := New(s, lockKey, "i", cfg)
			if err := l.Acquire(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			var sawCancel bool
			err := WithHeartbeat(ctx, l, "a", func(ctx context.Context, check func() error) error {
				if err := l.Release(ctx, "a"); err != nil {
					return err
				}
				if err := New(s, lockKey, "i", cfg).Acquire(ctx, "b"); err != nil {
					return err
				}
				// Checkpoints until the heartbeat (period 1 s) notices; bounded
				// so a broken heartbeat fails instead of hanging.
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					if err := check(); err != nil {
						sawCancel = ctx.Err() != nil
						return err
					}
					time.Sleep(50 * time.Millisecond)
				}
				return nil
			})
			if !errors.Is(err, aerr.ErrStorageMigration) || !errors.Is(err, aerr.ErrIndexLock) ||
				!strings.HasPrefix(err.Error(), "Storage migration lock heartbeat failed for index 'i'") {
				t.Fatalf("err = %v", err)
			}
			if !sawCancel {
				t.Error("body context not cancelled on heartbeat failure")
			}
			if info, _ := l.Read(ctx); info.CorrelationID != "b" {
				t.Errorf("heartbeat disturbed b's lock: %+v", info)
			}
		})
	}
}

// TestHeartbeatFinalCheckpoint: a failure the body never checked is
// reported when the body returns nil; a body error wins otherwise; a lock
// not held fails before the body runs.
func TestHeartbeatFinalCheckpoint(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	// Sleeps return at once, so the heartbeat refreshes continuously.
	cfg := Config{Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}
	l := New(s, lockKey, "i", cfg)

	ran := false
	err := WithHeartbeat(ctx, l, "a", func(context.Context, func() error) error { ran = true; return nil })
	if ran || !errors.Is(err, aerr.ErrStorageMigration) {
		t.Fatalf("lock not held: ran=%v err=%v", ran, err)
	}

	if err := l.Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	err = WithHeartbeat(ctx, l, "a", func(ctx context.Context, check func() error) error {
		s.Delete(ctx, lockKey, nil) // lost without the body noticing
		<-ctx.Done()                // cancelled by the heartbeat failure
		return nil
	})
	if !errors.Is(err, aerr.ErrStorageMigration) {
		t.Fatalf("unchecked failure: err = %v", err)
	}

	if err := l.Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	bodyErr := errors.New("body failed")
	if err := WithHeartbeat(ctx, l, "a", func(context.Context, func() error) error { return bodyErr }); err != bodyErr {
		t.Fatalf("body error: got %v", err)
	}
	if err := WithHeartbeat(ctx, l, "a", func(context.Context, func() error) error { return nil }); err != nil {
		t.Fatalf("healthy heartbeat: %v", err)
	}
}
