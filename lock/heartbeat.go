package lock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
)

// tolerable reports whether a heartbeat whose last successful refresh was
// since ago may retry after failing with err. With a short heartbeat
// (Config.HeartbeatInterval) a failed request is no reason to abandon the
// work: a store error (not a lost lock) is retried while the lock cannot
// yet look abandoned to a waiter, i.e. for up to abandonBeats-2 intervals
// (a waiter needs more than abandonBeats; one interval is left for the
// retry itself). Without it, the first failure stops the heartbeat, as in
// the original.
func (l *Lock) tolerable(err error, since time.Duration) bool {
	if l.cfg.HeartbeatInterval <= 0 || errors.Is(err, aerr.ErrIndexLock) {
		return false
	}
	return since < (abandonBeats-2)*l.HeartbeatPeriod()
}

// WithHeartbeat runs body while keeping l, held by correlationID, fresh: the
// migration heartbeat of §4.8.
//
// It refreshes strictly (RefreshOrThrow) once before body starts and then
// every l.HeartbeatPeriod() (max(1 s, Timeout/3), or the shorter
// HeartbeatInterval) in a background goroutine. The first failure (with a
// HeartbeatInterval: the first lost lock, or store errors lasting
// abandonBeats-2 intervals) is recorded and stops the heartbeat; body sees it
// through check, which it calls at its checkpoints (between steps) and
// which then returns an aerr.ErrStorageMigration error "Storage migration
// lock heartbeat failed for index '…'" wrapping the cause (e.g. an
// aerr.ErrIndexLock error when another process took the lock over). A
// failure also cancels body's ctx, so long store operations stop early.
//
// When body returns, the heartbeat is stopped and waited for (its in-flight
// refresh is cancelled). WithHeartbeat returns body's error; if body
// returned nil (or an error caused by the cancellation) but the heartbeat
// failed, it returns the heartbeat failure, the original's final
// checkpoint. If the first refresh fails, body is not run.
//
// The lock is neither acquired nor released here: the caller does both.
func WithHeartbeat(ctx context.Context, l *Lock, correlationID string, body func(ctx context.Context, check func() error) error) error {
	failed := func(cause error) error {
		return aerr.Wrap(aerr.ErrStorageMigration, cause, "Storage migration lock heartbeat failed for index '%s'", l.index)
	}
	if err := l.RefreshOrThrow(ctx, correlationID); err != nil {
		return failed(err)
	}

	bodyCtx, cancelBody := context.WithCancelCause(ctx)
	defer cancelBody(nil)
	hbCtx, stopHeartbeat := context.WithCancel(ctx)

	var (
		mu      sync.Mutex
		failure error
	)
	check := func() error {
		mu.Lock()
		defer mu.Unlock()
		return failure
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		period := l.HeartbeatPeriod()
		lastOK := l.cfg.Clock()
		for {
			if l.cfg.Sleep(hbCtx, period) != nil {
				return // stopped
			}
			err := l.RefreshOrThrow(hbCtx, correlationID)
			if err == nil {
				lastOK = l.cfg.Clock()
				continue
			}
			if hbCtx.Err() != nil {
				return // stopped during the refresh: not a failure
			}
			if l.tolerable(err, l.cfg.Clock().Sub(lastOK)) {
				l.cfg.Logger.Warn("lock heartbeat failed, retrying", "index", l.index, "key", l.key, "err", err)
				continue
			}
			f := failed(err)
			mu.Lock()
			failure = f
			mu.Unlock()
			cancelBody(f)
			return
		}
	}()

	err := body(bodyCtx, check)
	stopHeartbeat()
	<-done
	if f := check(); f != nil && (err == nil || errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		return f
	}
	return err
}
