package lock

import (
	"context"
	"log/slog"
	"os"
	"time"
)

// Defaults of the lock configuration keys (§7).
const (
	// DefaultTimeout is spark.ariadne.lockTimeout: a lock not refreshed for
	// longer than this is stale and may be taken over.
	DefaultTimeout = 1800 * time.Second
	// DefaultRetryInterval is spark.ariadne.lockRetryInterval: the base of
	// the exponential backoff between acquisition attempts.
	DefaultRetryInterval = 60 * time.Second
	// DefaultMaxWait is spark.ariadne.lockMaxWait: how long Acquire waits for
	// a fresh lock before giving up.
	DefaultMaxWait = 3600 * time.Second
	// DefaultHeartbeatInterval is the heartbeat the index package asks
	// for (Config.HeartbeatInterval): short enough that a killed holder is
	// taken over within seconds (abandonBeats intervals), long enough that
	// the refreshes cost little (4 requests every 2 s).
	DefaultHeartbeatInterval = 2 * time.Second
)

// Fixed parameters of the acquisition algorithm (§2.6, §3.10).
const (
	// MaxBackoff caps one sleep between acquisition attempts.
	MaxBackoff = 60 * time.Second
	// maxBackoffExponent caps the doubling: retry × 2^6 = 64 × retry, which
	// already exceeds MaxBackoff for any retry interval of at least 1 s, so
	// the cap only keeps the shift from overflowing.
	maxBackoffExponent = 6
	// healAttempts is how many times Acquire deletes a stale or corrupt
	// lock and tries again before giving up: a lock that is corrupt
	// again after 3 heals is being rewritten by something broken.
	healAttempts = 3
	// handOverAttempts bounds how many times in a row Acquire finds the lock
	// taken on create and gone on read (released by a holder in between).
	// Each such round means another writer held and released the lock, so
	// the system progresses; 1,000 rounds is seconds of continuous hand-overs
	// on object storage, far beyond any fair contention.
	handOverAttempts = 1000
	// abandonBeats: a heartbeating lock (LockInfo.Heartbeat) not refreshed
	// for more than abandonBeats of its holder's intervals is abandoned:
	// its holder missed 4 refreshes in a row, which a live process does
	// only when stalled far beyond any store hiccup.
	abandonBeats = 5
	// watchBeats: a waiter declares a heartbeating lock abandoned only
	// after it has itself seen the lock unchanged for watchBeats intervals
	// on its own clock, so a holder whose clock runs behind (its
	// lastRefreshedAt looks old) but that refreshes is never taken over.
	watchBeats = 2
	// casAttempts bounds the read-check-swap loops of Release and Refresh.
	// A swap loses only when the lock changed between our read and our
	// write; for the holder that happens only when its own heartbeat
	// refreshed at that instant, so a second attempt normally succeeds and 5
	// leaves a wide margin.
	casAttempts = 5
)

// Config holds a lock's settings. The zero Config is the §7 defaults.
// Durations are used in whole seconds, as in the original (§9 item 34):
// sub-second parts are dropped.
type Config struct {
	// Timeout is the staleness threshold: a lock whose lastRefreshedAt is
	// more than Timeout in the past (in whole seconds, strictly greater)
	// is stale. Less than 1 s means DefaultTimeout (the original falls back
	// for any value ≤ 0). The heartbeat refreshes every max(1 s, Timeout/3).
	Timeout time.Duration
	// RetryInterval is the base sleep between attempts while the lock is
	// held: sleep n (from 0) lasts min(RetryInterval × 2^min(n, 6), 60 s).
	// Less than 1 s means DefaultRetryInterval.
	RetryInterval time.Duration
	// MaxWait is how long Acquire waits for a held lock, measured from the
	// last attempt to create it, in whole seconds. Zero means DefaultMaxWait;
	// a negative value (or one below 1 s) is accepted and makes Acquire fail
	// at the first check, as a non-positive lockMaxWait does in the original.
	MaxWait time.Duration
	// Owner is written into lock files to name this process. Empty means the
	// host name (the original uses the engine's application id, falling
	// back to the host name).
	Owner string
	// Clock returns the current time; nil means time.Now. A test hook.
	Clock func() time.Time
	// Sleep waits for d or until ctx is done, returning ctx's error in the
	// latter case; nil means a timer. A test hook (tests may scale d down).
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives the events the original logs (a release or refresh by
	// a non-holder, stale-lock healing); nil discards them.
	Logger *slog.Logger
	// HeartbeatInterval, when positive, marks the locks this Lock creates
	// as heartbeating: they record the interval (min(HeartbeatInterval,
	// HeartbeatPeriod), whole seconds, at least 1 s) and this process's
	// identity, and other acquirers take them over once they are silent for
	// more than 5 intervals, or at once when their holder is a process on
	// the same machine that no longer exists. Set it only when every holder
	// runs WithHeartbeat, which then refreshes at that interval. Zero keeps
	// the Spark library's rule (lock files indistinguishable from its own):
	// stale after Timeout only.
	HeartbeatInterval time.Duration
	// OnEvent, when set, is told when Acquire starts waiting for a live
	// holder (and when the holder changes while it waits) and when it takes
	// over a lock whose holder is gone, so a command can say so to its
	// user. It is called from Acquire's goroutine and must not block long.
	OnEvent func(Event)
}

// normalized returns c with every default applied.
func (c Config) normalized() Config {
	if c.Timeout < time.Second {
		c.Timeout = DefaultTimeout
	}
	if c.RetryInterval < time.Second {
		c.RetryInterval = DefaultRetryInterval
	}
	if c.MaxWait == 0 {
		c.MaxWait = DefaultMaxWait
	}
	c.Timeout = c.Timeout.Truncate(time.Second)
	c.RetryInterval = c.RetryInterval.Truncate(time.Second)
	c.MaxWait = c.MaxWait.Truncate(time.Second)
	if c.HeartbeatInterval > 0 {
		c.HeartbeatInterval = max(time.Second, c.HeartbeatInterval.Truncate(time.Second))
	}
	if c.Owner == "" {
		if h, err := os.Hostname(); err == nil && h != "" {
			c.Owner = h
		} else {
			c.Owner = "unknown-host"
		}
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wholeSeconds returns d in whole seconds, rounded toward negative infinity
// (Java's Duration.getSeconds).
func wholeSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second < 0 {
		s--
	}
	return s
}

// backoff returns the sleep before re-checking after the attempt-th wait
// (from 0): min(retry × 2^min(attempt, 6), MaxBackoff).
func (c Config) backoff(attempt int) time.Duration {
	d := c.RetryInterval << min(attempt, maxBackoffExponent)
	return min(d, MaxBackoff)
}
