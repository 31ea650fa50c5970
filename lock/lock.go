// Package lock owns Ariadne's lock files (spec §2.6, §4.9): the mutual
// exclusion between processes that update one index, coordinated only
// through storage. A lock is a small JSON object (LockInfo) at a key such as
// "indexes/<name>/.update.lock"; whoever created it holds it until they
// delete it or stop refreshing it for longer than the timeout, after which
// the next acquirer takes it over ("heals" it).
//
// The algorithm is the original's (backoff, whole seconds, three healing
// attempts), with the check-then-act races of the original (§9 item 29)
// closed by the store's atomic primitives, which hold on every backend
// including object storage:
//
//   - acquire is a put-if-absent (WriteOptions.IfNotExist): of several
//     racing acquirers exactly one creates the object;
//   - healing a stale or corrupt lock deletes exactly the version that was
//     read (DeleteOptions.IfMatch) and then puts-if-absent, so two healers
//     that read the same stale lock can never both win, and a healer never
//     deletes a lock that was refreshed or re-acquired after it looked;
//   - refresh is a compare-and-swap (WriteOptions.IfMatch) of the version
//     read, so it never resurrects a lock that was released, healed or
//     taken over meanwhile;
//   - release reads, checks the holder and deletes that version only.
//
// Our own holders also heartbeat (Config.HeartbeatInterval, WithHeartbeat)
// and mark their lock files so: heartbeatSeconds and the holder's host, pid
// and pid namespace, fields the Spark library's Gson skips. Such a lock is
// taken over at once when its holder is a process of this machine that no
// longer exists, and within seconds when its heartbeat goes silent (see
// Lock.gone); a lock without the mark keeps the Spark library's rule, stale
// only after Timeout, because the library refreshes its locks only during
// migrations and staging recovery.
//
// Each version is read together with its ETag (stat, read, stat again until
// the ETag is stable), because the store contract returns no ETag from a
// read. Lock files written by the Spark library interoperate: same key, same
// JSON, same staleness rule. (The original creates the file empty and then
// writes it, so a Go acquirer that looks in that instant sees an empty lock,
// which it treats as corrupt, as the original does; the window is the
// original's own race.)
package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/proc"
	"github.com/ariadne-go/ariadne/store"
)

// Lock is one lock file. It holds no state besides its configuration: who
// holds the lock is only ever decided by the stored object, so a Lock is
// safe for concurrent use and several Locks (in one or many processes) may
// name the same key.
type Lock struct {
	s     store.Store
	key   string
	index string
	cfg   Config
	self  processID // written into heartbeating locks
}

// New returns the lock stored at key in s, for index indexName (used in
// messages). cfg's zero fields take the §7 defaults.
func New(s store.Store, key, indexName string, cfg Config) *Lock {
	l := &Lock{s: s, key: key, index: indexName, cfg: cfg.normalized()}
	if l.cfg.HeartbeatInterval > 0 {
		l.self = currentProcess()
	}
	return l
}

// Key returns the lock's key in its store.
func (l *Lock) Key() string { return l.key }

// HeartbeatPeriod returns the refresh period of WithHeartbeat:
// max(1 s, Timeout/3) in whole seconds (§4.8), or HeartbeatInterval when
// that is set and shorter.
func (l *Lock) HeartbeatPeriod() time.Duration {
	p := time.Duration(max(1, wholeSeconds(l.cfg.Timeout)/3)) * time.Second
	if hb := l.cfg.HeartbeatInterval; hb > 0 {
		p = min(p, hb)
	}
	return p
}

// state is what a read of the lock found.
type state int

const (
	absent  state = iota // no lock object
	corrupt              // an object that is not a LockInfo
	held                 // a LockInfo
)

// current is one read of the lock: what it holds and the ETag of exactly
// that version.
type current struct {
	state state
	info  LockInfo
	etag  string
}

// readStableAttempts bounds the stat-read-stat loop; each retry means the
// lock was replaced while we read it (a refresh, at most every second or so).
const readStableAttempts = 5

// read returns the lock's current version. Store errors other than "does not
// exist" are returned.
func (l *Lock) read(ctx context.Context) (current, error) {
	for range readStableAttempts {
		before, err := l.s.Stat(ctx, l.key)
		if errors.Is(err, store.ErrNotExist) {
			return current{state: absent}, nil
		} else if err != nil {
			return current{}, err
		}
		data, err := store.ReadAll(ctx, l.s, l.key)
		if errors.Is(err, store.ErrNotExist) {
			continue // deleted after the stat: look again
		} else if err != nil {
			return current{}, err
		}
		after, err := l.s.Stat(ctx, l.key)
		if errors.Is(err, store.ErrNotExist) {
			continue
		} else if err != nil {
			return current{}, err
		}
		if after.ETag != before.ETag {
			continue
		}
		info, err := ParseLockInfo(data)
		if err != nil {
			return current{state: corrupt, etag: before.ETag}, nil
		}
		return current{state: held, info: info, etag: before.ETag}, nil
	}
	return current{}, fmt.Errorf("lock: %s kept changing while being read", l.key)
}

// Read returns the current content of the lock. A missing lock fails with
// an error matching store.ErrNotExist, a corrupt one with ErrCorrupt.
func (l *Lock) Read(ctx context.Context) (LockInfo, error) {
	cur, err := l.read(ctx)
	switch {
	case err != nil:
		return LockInfo{}, err
	case cur.state == absent:
		return LockInfo{}, fmt.Errorf("lock: %s: %w", l.key, store.ErrNotExist)
	case cur.state == corrupt:
		return LockInfo{}, fmt.Errorf("lock: %s: %w", l.key, ErrCorrupt)
	}
	return cur.info, nil
}

// now returns the clock's time in UTC, truncated to microseconds as
// Instant.now() is on the JVMs the original runs on.
func (l *Lock) now() time.Time { return l.cfg.Clock().UTC().Truncate(time.Microsecond) }

// stale reports whether info was last refreshed more than Timeout ago, in
// whole seconds; an absent or unparsable lastRefreshedAt is stale (§2.6).
func (l *Lock) stale(info LockInfo) bool {
	if info.LastRefreshedAt.IsZero() {
		return true
	}
	return wholeSeconds(l.now().Sub(info.LastRefreshedAt)) > wholeSeconds(l.cfg.Timeout)
}

// watch follows the lock across the reads of one Acquire, on the
// acquirer's own clock: which version it last saw and since when that
// version has not changed.
type watch struct {
	etag  string
	info  LockInfo
	since time.Time // zero: nothing seen yet
}

// see records a read of a held lock at now. It reports whether the holder
// (correlation id) differs from the one seen before.
func (w *watch) see(cur current, now time.Time) (newHolder bool) {
	newHolder = w.since.IsZero() || cur.info.CorrelationID != w.info.CorrelationID
	if newHolder || cur.etag != w.etag || !cur.info.LastRefreshedAt.Equal(w.info.LastRefreshedAt) {
		w.etag, w.info, w.since = cur.etag, cur.info, now
	}
	return newHolder
}

// takeOverAfter is how long info's holder may stay silent before its lock
// is taken over.
func (l *Lock) takeOverAfter(info LockInfo) time.Duration {
	if info.Heartbeat > 0 {
		return min(abandonBeats*info.Heartbeat, l.cfg.Timeout)
	}
	return l.cfg.Timeout
}

// gone decides whether the held lock w last saw has lost its holder, and
// why:
//
//   - any lock: stale, not refreshed for more than Timeout (§2.6);
//   - a heartbeating lock of a process this one can see (same host, same
//     pid namespace, same boot) whose process no longer exists;
//   - a heartbeating lock that this acquirer has seen unchanged for at
//     least watchBeats intervals and that has been silent for more than
//     abandonBeats intervals, by its lastRefreshedAt or by how long it was
//     watched unchanged, whichever is longer. Watching keeps a holder
//     whose clock lags (its lastRefreshedAt looks old but keeps changing)
//     from ever being taken over; lastRefreshedAt spares a new acquirer the
//     full wait for a lock abandoned long ago.
//
// Locks without a heartbeat (the Spark library's) follow the first rule
// only: it refreshes them only during migrations and staging recovery.
func (l *Lock) gone(w *watch) (reason string, ok bool) {
	info, now := w.info, l.now()
	if l.stale(info) {
		return fmt.Sprintf("not refreshed for more than lockTimeout (%s)", l.cfg.Timeout), true
	}
	hb := info.Heartbeat
	if hb <= 0 {
		return "", false
	}
	if l.self.sees(info) && info.PID != l.self.pid && proc.Gone(info.PID) {
		return fmt.Sprintf("its process %d on host %s no longer exists", info.PID, info.Host), true
	}
	watched := now.Sub(w.since)
	silent := max(watched, now.Sub(info.LastRefreshedAt))
	if watched >= watchBeats*hb && silent > abandonBeats*hb {
		return fmt.Sprintf("abandoned: its heartbeat (every %s) has been silent for %s", hb, roundSecond(silent)), true
	}
	return "", false
}

// nextLook bounds the sleep before the next read of a heartbeating lock:
// until gone could first decide it is abandoned (plus a margin), so a dead
// holder is taken over promptly whatever the backoff, and at most
// watchBeats heartbeats. Zero means no bound (no heartbeat: the backoff
// alone decides, as in the original).
func (l *Lock) nextLook(w *watch) time.Duration {
	hb := w.info.Heartbeat
	if hb <= 0 {
		return 0
	}
	at := w.since.Add(watchBeats * hb)
	if byAge := w.info.LastRefreshedAt.Add(abandonBeats * hb); byAge.Before(w.since.Add(abandonBeats * hb)) {
		at = later(at, byAge)
	} else {
		at = later(at, w.since.Add(abandonBeats*hb))
	}
	// Look at least every watchBeats heartbeats, so a live holder's release
	// is noticed within seconds too, at a cost of 3 requests per look.
	return min(max(time.Second/2, at.Sub(l.now())+time.Second/2), watchBeats*hb)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// emit tells Config.OnEvent.
func (l *Lock) emit(kind EventKind, holder LockInfo, giveUpAt time.Time, reason string) {
	if l.cfg.OnEvent == nil {
		return
	}
	l.cfg.OnEvent(Event{Kind: kind, Index: l.index, Key: l.key, Holder: holder, Now: l.now(),
		TakeOverAfter: l.takeOverAfter(holder), GiveUpAt: giveUpAt, Reason: reason})
}

// takeOver logs and reports the deletion of the lock w saw, then deletes
// exactly that version.
func (l *Lock) takeOver(ctx context.Context, w *watch, reason string) error {
	l.cfg.Logger.Warn("deleting stale lock", "index", l.index, "key", l.key,
		"holder", w.info.CorrelationID, "owner", w.info.Owner,
		"lastRefreshedAt", FormatInstant(w.info.LastRefreshedAt), "reason", reason)
	l.emit(TakenOver, w.info, time.Time{}, reason)
	return l.deleteVersion(ctx, w.etag)
}

// create puts a fresh lock for id if there is none. It reports false when a
// lock exists; any other store error is returned unchanged (§8.6).
func (l *Lock) create(ctx context.Context, id string) (bool, error) {
	now := l.now()
	info := LockInfo{CorrelationID: id, AcquiredAt: now, LastRefreshedAt: now, Owner: l.cfg.Owner}
	if l.cfg.HeartbeatInterval > 0 {
		info.Heartbeat = l.HeartbeatPeriod()
		info.Host, info.PID, info.PIDNamespace = l.self.host, l.self.pid, l.self.namespace
	}
	err := store.WriteAll(ctx, l.s, l.key, info.Marshal(), &store.WriteOptions{IfNotExist: true, ContentType: "application/json"})
	if errors.Is(err, store.ErrPrecondition) {
		return false, nil
	}
	return err == nil, err
}

// deleteVersion deletes the lock if it is still at version etag. Losing
// (the lock changed or vanished since it was read) is no error: the caller
// simply looks again.
func (l *Lock) deleteVersion(ctx context.Context, etag string) error {
	err := l.s.Delete(ctx, l.key, &store.DeleteOptions{IfMatch: etag})
	if err == nil || errors.Is(err, store.ErrPrecondition) || errors.Is(err, store.ErrNotExist) {
		return nil
	}
	return err
}

func checkID(op, id string) error {
	if strings.TrimSpace(id) == "" {
		return aerr.Invalid("%s: correlationId must not be blank", op)
	}
	return nil
}

// Acquire takes the lock for correlationID, waiting while another holder
// keeps it fresh (§2.6):
//
//  1. Put-if-absent a fresh lock; success means acquired.
//  2. If a lock exists: a stale or corrupt one is deleted (that exact
//     version only) and step 1 is retried, at most 3 times in all, then
//     Acquire fails with aerr.ErrIndexLock ("Failed to acquire lock … after
//     3 attempts …"). One that vanished between our create and our read
//     (its holder released it) is no heal: create is retried at once, up
//     to handOverAttempts times in a row (the original counted it as a
//     heal; docs/compatibility.md).
//  3. A fresh lock is waited for: sleep with exponential backoff (see
//     Config), re-read; a stale lock is healed and re-created, a vanished or
//     corrupt one re-created (put-if-absent), a fresh one waited for again.
//     When MaxWait has elapsed since the last attempt of step 1, Acquire
//     fails with aerr.ErrIndexLock naming the holder ("Could not acquire
//     lock for index …").
//
// Cancelling ctx while waiting fails with aerr.ErrIndexLock ("Lock
// acquisition interrupted …") wrapping ctx's error. A blank correlationID
// fails with aerr.ErrInvalidArgument. Store errors other than "already
// exists" from the create are returned unchanged, never as ErrIndexLock.
//
// Acquire is not reentrant: a second Acquire with the same id waits like any
// other acquirer.
func (l *Lock) Acquire(ctx context.Context, correlationID string) error {
	if err := checkID("acquire", correlationID); err != nil {
		return err
	}
	heals, handOvers := 0, 0
	var w watch
	for heals < healAttempts {
		start := l.now()
		ok, err := l.create(ctx, correlationID)
		if err != nil || ok {
			return err
		}
		cur, err := l.read(ctx)
		if err != nil {
			return err
		}
		switch cur.state {
		case absent:
			// Released between our create and our read: the normal
			// hand-over between contending writers, not a broken lock.
			// The original counts it as a heal, so under contention a
			// healthy acquirer could fail with "possible persistent corrupt
			// lock file"; we retry at once, boundedly.
			if handOvers++; handOvers >= handOverAttempts {
				return aerr.New(aerr.ErrIndexLock,
					"Failed to acquire lock for index '%s': it changed hands %d times in a row (%s)", l.index, handOvers, l.key)
			}
			if err := ctx.Err(); err != nil {
				return aerr.Wrap(aerr.ErrIndexLock, err, "Lock acquisition interrupted for index '%s'", l.index)
			}
			continue
		case corrupt:
			l.cfg.Logger.Warn("deleting corrupt lock", "index", l.index, "key", l.key)
			if err := l.deleteVersion(ctx, cur.etag); err != nil {
				return err
			}
		default:
			w.see(cur, l.now())
			reason, isGone := l.gone(&w)
			if !isGone {
				return l.wait(ctx, correlationID, start, &w)
			}
			if err := l.takeOver(ctx, &w, reason); err != nil {
				return err
			}
		}
		heals++
	}
	return aerr.New(aerr.ErrIndexLock,
		"Failed to acquire lock for index '%s' after %d attempts (possible persistent corrupt lock file at %s)",
		l.index, healAttempts, l.key)
}

// wait is the retry loop of Acquire: the lock is held by w.info, alive. A
// heartbeating holder is looked at again by the time it could be judged
// abandoned (nextLook) if that comes before the backoff's next look.
func (l *Lock) wait(ctx context.Context, id string, start time.Time, w *watch) error {
	maxWait := wholeSeconds(l.cfg.MaxWait)
	giveUpAt := start.Add(time.Duration(maxWait) * time.Second)
	l.emit(Waiting, w.info, giveUpAt, "")
	for attempt := 0; ; attempt++ {
		if wholeSeconds(l.now().Sub(start)) >= maxWait {
			return aerr.IndexLockHeld(l.index, w.info.CorrelationID, w.info.Owner)
		}
		d := l.cfg.backoff(attempt)
		if bound := l.nextLook(w); bound > 0 {
			d = min(d, bound)
		}
		if err := l.cfg.Sleep(ctx, d); err != nil {
			return aerr.Wrap(aerr.ErrIndexLock, err, "Lock acquisition interrupted for index '%s'", l.index)
		}
		cur, err := l.read(ctx)
		if err != nil {
			return err
		}
		if cur.state == held {
			if w.see(cur, l.now()) {
				l.emit(Waiting, w.info, giveUpAt, "")
			}
			reason, isGone := l.gone(w)
			if !isGone {
				continue
			}
			if err := l.takeOver(ctx, w, reason); err != nil {
				return err
			}
		}
		// Absent, corrupt (as in the original, only re-created if it
		// disappears: it may be a lock being written by the original) or
		// just taken over.
		ok, err := l.create(ctx, id)
		if err != nil || ok {
			return err
		}
		if again, err := l.read(ctx); err == nil && again.state == held {
			if w.see(again, l.now()) {
				l.emit(Waiting, w.info, giveUpAt, "")
			}
		}
	}
}

// Release deletes the lock if correlationID holds it (§2.6). If the lock is
// missing, corrupt or held by another id, Release logs and does nothing. The
// delete is conditional on the version read, so a lock taken over in the
// meantime is never deleted. A blank id fails with aerr.ErrInvalidArgument;
// store errors are returned.
func (l *Lock) Release(ctx context.Context, correlationID string) error {
	if err := checkID("release", correlationID); err != nil {
		return err
	}
	for range casAttempts {
		cur, err := l.read(ctx)
		if err != nil {
			return err
		}
		if cur.state != held || cur.info.CorrelationID != correlationID {
			l.cfg.Logger.Warn("release by a non-holder ignored", "index", l.index, "key", l.key,
				"id", correlationID, "holder", cur.info.CorrelationID)
			return nil
		}
		err = l.s.Delete(ctx, l.key, &store.DeleteOptions{IfMatch: cur.etag})
		switch {
		case err == nil, errors.Is(err, store.ErrNotExist):
			return nil
		case errors.Is(err, store.ErrPrecondition):
			continue // refreshed or replaced since we read it: look again
		default:
			return err
		}
	}
	return aerr.New(aerr.ErrIndexLock, "Could not release lock for index '%s': lock file %s kept changing", l.index, l.key)
}

// Refresh sets lastRefreshedAt to now if correlationID holds the lock,
// keeping acquiredAt and owner (§2.6). If the lock is missing, corrupt or
// held by another id, Refresh logs and does nothing (use RefreshOrThrow to
// detect lost ownership). The rewrite is a compare-and-swap of the version
// read, so a lock released or taken over meanwhile is never resurrected. A
// blank id fails with aerr.ErrInvalidArgument; store errors are returned.
func (l *Lock) Refresh(ctx context.Context, correlationID string) error {
	if err := checkID("refresh", correlationID); err != nil {
		return err
	}
	return l.refresh(ctx, correlationID, false)
}

// RefreshOrThrow is the strict refresh used by heartbeats: like Refresh,
// but a missing, corrupt or foreign lock fails with aerr.ErrIndexLock.
func (l *Lock) RefreshOrThrow(ctx context.Context, correlationID string) error {
	if err := checkID("refresh", correlationID); err != nil {
		return err
	}
	return l.refresh(ctx, correlationID, true)
}

func (l *Lock) refresh(ctx context.Context, id string, strict bool) error {
	for range casAttempts {
		cur, err := l.read(ctx)
		if err != nil {
			return err
		}
		var lost error
		switch {
		case cur.state == absent:
			lost = aerr.New(aerr.ErrIndexLock, "Lock for index '%s' is no longer held by correlationId='%s': lock file %s is missing",
				l.index, id, l.key)
		case cur.state == corrupt:
			lost = aerr.New(aerr.ErrIndexLock, "Lock for index '%s' is no longer held by correlationId='%s': lock file %s is corrupt",
				l.index, id, l.key)
		case cur.info.CorrelationID != id:
			lost = aerr.New(aerr.ErrIndexLock, "Lock for index '%s' is no longer held by correlationId='%s'. Currently held by correlationId='%s', owner='%s'",
				l.index, id, cur.info.CorrelationID, cur.info.Owner)
		}
		if lost != nil {
			if strict {
				return lost
			}
			l.cfg.Logger.Warn("refresh by a non-holder ignored", "index", l.index, "key", l.key, "reason", lost)
			return nil
		}
		info := cur.info
		info.LastRefreshedAt = l.now()
		err = store.WriteAll(ctx, l.s, l.key, info.Marshal(), &store.WriteOptions{IfMatch: cur.etag, ContentType: "application/json"})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, store.ErrPrecondition):
			continue
		default:
			return err
		}
	}
	return aerr.New(aerr.ErrIndexLock, "Could not refresh lock for index '%s': lock file %s kept changing", l.index, l.key)
}
