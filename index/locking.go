package index

import (
	"context"
	"time"

	"github.com/ariadne-go/ariadne/lock"
)

// lockConfig derives the lock settings from the catalog's configuration.
// Every holder here runs withLock's heartbeat, so the locks are marked as
// heartbeating (lock.DefaultHeartbeatInterval): a killed holder's lock is
// taken over within seconds, not after lockTimeout. Locks of the Spark
// library carry no such mark and keep lockTimeout.
func (ix *Index) lockConfig() lock.Config {
	c := ix.cat.opts.Config
	// A non-positive lockMaxWait fails at the first check (§7); the lock
	// package reads a zero MaxWait as "default", so pass a negative one.
	maxWait := c.LockMaxWait
	if maxWait <= 0 {
		maxWait = -time.Second
	}
	return lock.Config{
		Timeout:           c.LockTimeout,
		RetryInterval:     c.LockRetryInterval,
		MaxWait:           maxWait,
		Owner:             ix.cat.opts.Owner,
		HeartbeatInterval: lock.DefaultHeartbeatInterval,
		OnEvent:           ix.cat.opts.OnLockEvent,
	}
}

// withLock runs body while holding the lock file at key under a fresh
// correlation id, with a heartbeat that keeps the lock fresh and cancels
// body's context if ownership is lost. The lock is always released; a
// release failure is reported only when body succeeded.
func (ix *Index) withLock(ctx context.Context, key string, body func(ctx context.Context) error) error {
	lk := lock.New(ix.cat.root, key, ix.name, ix.lockConfig())
	id := newCorrelationID()
	if err := lk.Acquire(ctx, id); err != nil {
		return err
	}
	err := lock.WithHeartbeat(ctx, lk, id, func(ctx context.Context, check func() error) error {
		if err := body(ctx); err != nil {
			return err
		}
		return check()
	})
	// Release with a context that is not cancelled, so an interrupted
	// operation still frees its lock.
	if rerr := lk.Release(context.WithoutCancel(ctx), id); rerr != nil && err == nil {
		err = rerr
	}
	return err
}
