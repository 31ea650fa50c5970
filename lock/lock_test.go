package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

const lockKey = "indexes/i/.update.lock"

// fakeTime is a clock whose sleeps advance it instantly and are recorded.
type fakeTime struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeTime() *fakeTime {
	return &fakeTime{now: time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)}
}

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fakeTime) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	return nil
}

func (f *fakeTime) config() Config {
	return Config{Clock: f.Now, Sleep: f.Sleep, Owner: "test-owner"}
}

// backends opens every store the lock must work on.
func backends(t *testing.T) map[string]store.Store {
	t.Helper()
	out := map[string]store.Store{}
	for name, url := range map[string]string{"mem": "mem://", "file": "file://" + t.TempDir()} {
		s, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

func exists(t *testing.T, s store.Store, key string) bool {
	t.Helper()
	ok, err := store.Exists(context.Background(), s, key)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func readInfo(t *testing.T, s store.Store) LockInfo {
	t.Helper()
	data, err := store.ReadAll(context.Background(), s, lockKey)
	if err != nil {
		t.Fatal(err)
	}
	info, err := ParseLockInfo(data)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestSpec86 runs the cases of §8.6 on every backend.
func TestSpec86(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name+"/acquire and release lock", func(t *testing.T) {
			ft := newFakeTime()
			l := New(s, lockKey, "i", ft.config())
			if err := l.Acquire(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			if !exists(t, s, lockKey) {
				t.Fatal("no lock file after acquire")
			}
			data, _ := store.ReadAll(ctx, s, lockKey)
			const want = `{"correlationId":"a","acquiredAt":"2024-01-15T10:00:00Z","lastRefreshedAt":"2024-01-15T10:00:00Z","owner":"test-owner"}`
			if string(data) != want {
				t.Errorf("lock file %s\nwant %s", data, want)
			}
			if err := l.Release(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			if exists(t, s, lockKey) {
				t.Fatal("lock file remains after release")
			}
		})
		t.Run(name+"/acquire is idempotent for same id after release", func(t *testing.T) {
			l := New(s, lockKey, "i", newFakeTime().config())
			for _, step := range []func() error{
				func() error { return l.Acquire(ctx, "a") },
				func() error { return l.Release(ctx, "a") },
				func() error { return l.Acquire(ctx, "a") },
				func() error { return l.Release(ctx, "a") },
			} {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
		})
		t.Run(name+"/release with wrong id does not remove lock", func(t *testing.T) {
			l := New(s, lockKey, "i", newFakeTime().config())
			if err := l.Acquire(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			if err := l.Release(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			if !exists(t, s, lockKey) || readInfo(t, s).CorrelationID != "a" {
				t.Fatal("release by b removed a's lock")
			}
			if err := l.Release(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			if exists(t, s, lockKey) {
				t.Fatal("lock remains")
			}
		})
		t.Run(name+"/refresh updates lastRefreshedAt", func(t *testing.T) {
			ft := newFakeTime()
			l := New(s, lockKey, "i", ft.config())
			if err := l.Acquire(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			before := readInfo(t, s)
			ft.Advance(100 * time.Millisecond)
			if err := l.Refresh(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			after := readInfo(t, s)
			if !after.AcquiredAt.Equal(before.AcquiredAt) || !after.LastRefreshedAt.Equal(before.LastRefreshedAt.Add(100*time.Millisecond)) {
				t.Errorf("before %+v after %+v", before, after)
			}
			data, _ := store.ReadAll(ctx, s, lockKey)
			if !strings.Contains(string(data), `"lastRefreshedAt":"2024-01-15T10:00:00.100Z"`) {
				t.Errorf("lock file %s", data)
			}
			l.Release(ctx, "a")
		})
		t.Run(name+"/refresh with wrong id does not update lock", func(t *testing.T) {
			ft := newFakeTime()
			l := New(s, lockKey, "i", ft.config())
			if err := l.Acquire(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			before, _ := store.ReadAll(ctx, s, lockKey)
			ft.Advance(5 * time.Second)
			if err := l.Refresh(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			if after, _ := store.ReadAll(ctx, s, lockKey); string(after) != string(before) {
				t.Errorf("refresh by b changed the lock: %s", after)
			}
			if err := l.RefreshOrThrow(ctx, "b"); !errors.Is(err, aerr.ErrIndexLock) {
				t.Errorf("strict refresh by b: %v", err)
			}
			l.Release(ctx, "a")
			if err := l.RefreshOrThrow(ctx, "a"); !errors.Is(err, aerr.ErrIndexLock) {
				t.Errorf("strict refresh of a missing lock: %v", err)
			}
			if err := l.Refresh(ctx, "a"); err != nil || exists(t, s, lockKey) {
				t.Errorf("refresh of a missing lock: %v (must not resurrect it)", err)
			}
		})
		t.Run(name+"/stale lock is auto-healed", func(t *testing.T) {
			old := time.Now().Add(-time.Hour)
			stale := LockInfo{CorrelationID: "a", AcquiredAt: old, LastRefreshedAt: old, Owner: "gone"}
			if err := store.WriteAll(ctx, s, lockKey, stale.Marshal(), nil); err != nil {
				t.Fatal(err)
			}
			l := New(s, lockKey, "i", Config{Timeout: 1800 * time.Second, MaxWait: -1})
			if err := l.Acquire(ctx, "b"); err != nil {
				t.Fatal(err)
			}
			if got := readInfo(t, s).CorrelationID; got != "b" {
				t.Fatalf("holder %q, want b", got)
			}
			l.Release(ctx, "b")
		})
		t.Run(name+"/contention throws IndexLockException after max wait", func(t *testing.T) {
			ft := newFakeTime()
			cfg := ft.config()
			cfg.MaxWait, cfg.RetryInterval = time.Second, time.Second
			a, b := New(s, lockKey, "i", cfg), New(s, lockKey, "i", cfg)
			if err := a.Acquire(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			err := b.Acquire(ctx, "b")
			if !errors.Is(err, aerr.ErrIndexLock) {
				t.Fatalf("err = %v", err)
			}
			if want := "Could not acquire lock for index 'i'. Currently held by correlationId='a', owner='test-owner'"; err.Error() != want {
				t.Errorf("message %q\nwant %q", err, want)
			}
			if got := readInfo(t, s).CorrelationID; got != "a" {
				t.Errorf("holder %q", got)
			}
			a.Release(ctx, "a")
		})
		t.Run(name+"/non-contention create error is propagated", func(t *testing.T) {
			injected := errors.New("injected lock create failure")
			fs := &faultyStore{Store: s, createErr: injected}
			err := New(fs, lockKey, "i", newFakeTime().config()).Acquire(ctx, "a")
			if !errors.Is(err, injected) || errors.Is(err, aerr.ErrIndexLock) {
				t.Fatalf("err = %v, want the injected error unchanged", err)
			}
		})
	}
}

// TestContentionRealTime repeats the max-wait case with the real clock and
// sleep (maxWait 1 s, retry 1 s), as the original's test does.
func TestContentionRealTime(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	cfg := Config{MaxWait: time.Second, RetryInterval: time.Second, Owner: "o"}
	a, b := New(s, lockKey, "i", cfg), New(s, lockKey, "i", cfg)
	if err := a.Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(ctx, "b"); !errors.Is(err, aerr.ErrIndexLock) {
		t.Fatalf("err = %v", err)
	}
}

func TestBlankIDs(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	l := New(s, lockKey, "i", Config{})
	for name, f := range map[string]func(string) error{
		"acquire":        func(id string) error { return l.Acquire(ctx, id) },
		"release":        func(id string) error { return l.Release(ctx, id) },
		"refresh":        func(id string) error { return l.Refresh(ctx, id) },
		"refreshOrThrow": func(id string) error { return l.RefreshOrThrow(ctx, id) },
	} {
		for _, id := range []string{"", "  ", "\t\n"} {
			if err := f(id); !errors.Is(err, aerr.ErrInvalidArgument) {
				t.Errorf("%s(%q) = %v, want ErrInvalidArgument", name, id, err)
			}
		}
	}
	if exists(t, s, lockKey) {
		t.Error("a blank id created a lock")
	}
}

// TestBackoff checks the sleep schedule while a fresh lock is held:
// min(retry × 2^min(n,6), 60 s), until maxWait has elapsed.
func TestBackoff(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		retry, maxWait time.Duration
		want           []time.Duration
	}{
		{time.Second, 200 * time.Second, secs(1, 2, 4, 8, 16, 32, 60, 60, 60)},
		{1500 * time.Millisecond, 10 * time.Second, secs(1, 2, 4, 8)}, // whole seconds: 1.5 s → 1 s
		{5 * time.Second, 100 * time.Second, secs(5, 10, 20, 40, 60)},
		{DefaultRetryInterval, 150 * time.Second, secs(60, 60, 60)},
		{time.Second, -time.Second, nil}, // non-positive maxWait: fails at the first check
	} {
		s, _ := store.Open(ctx, "mem://")
		ft := newFakeTime()
		cfg := ft.config()
		// The holder keeps refreshing: a huge timeout stands in for that.
		cfg.Timeout, cfg.RetryInterval, cfg.MaxWait = 1e6*time.Second, tc.retry, tc.maxWait
		if err := New(s, lockKey, "i", cfg).Acquire(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		err := New(s, lockKey, "i", cfg).Acquire(ctx, "b")
		if !errors.Is(err, aerr.ErrIndexLock) {
			t.Fatalf("err = %v", err)
		}
		if fmt.Sprint(ft.sleeps) != fmt.Sprint(tc.want) {
			t.Errorf("retry %v maxWait %v: sleeps %v, want %v", tc.retry, tc.maxWait, ft.sleeps, tc.want)
		}
	}
}

func secs(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Second
	}
	return out
}

// TestWaitThenAcquire: a waiter gets the lock once the holder releases it,
// and once it turns stale while being waited for.
func TestWaitThenAcquire(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"release", "stale"} {
		s, _ := store.Open(ctx, "mem://")
		ft := newFakeTime()
		cfg := ft.config()
		cfg.RetryInterval, cfg.Timeout = time.Second, 10*time.Second
		holder := New(s, lockKey, "i", cfg)
		if err := holder.Acquire(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		sleeps := 0
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			sleeps++
			if sleeps == 3 && how == "release" {
				holder.Release(ctx, "a")
			}
			return ft.Sleep(ctx, d)
		}
		if err := New(s, lockKey, "i", cfg).Acquire(ctx, "b"); err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if got := readInfo(t, s).CorrelationID; got != "b" {
			t.Errorf("%s: holder %q", how, got)
		}
		want := 3 // released during the 3rd sleep
		if how == "stale" {
			want = 4 // 1+2+4 = 7 s, then 15 s > 10 s timeout
		}
		if sleeps != want {
			t.Errorf("%s: %d sleeps, want %d", how, sleeps, want)
		}
	}
}

func TestCorruptLocks(t *testing.T) {
	ctx := context.Background()
	for _, content := range []string{"", " ", "{", "null", "[]", `"x"`} {
		s, _ := store.Open(ctx, "mem://")
		if err := store.WriteAll(ctx, s, lockKey, []byte(content), nil); err != nil {
			t.Fatal(err)
		}
		l := New(s, lockKey, "i", Config{MaxWait: -1})
		if err := l.Acquire(ctx, "a"); err != nil {
			t.Errorf("corrupt %q: %v", content, err)
			continue
		}
		if got := readInfo(t, s).CorrelationID; got != "a" {
			t.Errorf("corrupt %q: holder %q", content, got)
		}
	}
	// A lock without a parsable lastRefreshedAt is stale; with a fresh one it is not.
	for _, tc := range []struct {
		content string
		heal    bool
	}{
		{`{"correlationId":"x","owner":"o"}`, true},
		{`{"correlationId":"x","lastRefreshedAt":"yesterday"}`, true},
		{`{"correlationId":"x","lastRefreshedAt":"` + FormatInstant(time.Now()) + `"}`, false},
		{`{"correlationId":"x","lastRefreshedAt":"` + time.Now().In(time.FixedZone("", 3600)).Format(time.RFC3339) + `"}`, false},
	} {
		s, _ := store.Open(ctx, "mem://")
		store.WriteAll(ctx, s, lockKey, []byte(tc.content), nil)
		err := New(s, lockKey, "i", Config{MaxWait: -1}).Acquire(ctx, "a")
		if healed := err == nil; healed != tc.heal {
			t.Errorf("%s: err = %v, want healed=%v", tc.content, err, tc.heal)
		}
	}
}

// TestPersistentCorruptLock: a lock that is corrupt again after every heal
// fails after 3 attempts.
func TestPersistentCorruptLock(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	fs := &faultyStore{Store: s, recreate: []byte("garbage")}
	store.WriteAll(ctx, s, lockKey, []byte("garbage"), nil)
	err := New(fs, lockKey, "i", Config{MaxWait: -1}).Acquire(ctx, "a")
	if !errors.Is(err, aerr.ErrIndexLock) || !strings.Contains(err.Error(), "after 3 attempts (possible persistent corrupt lock file at "+lockKey+")") {
		t.Fatalf("err = %v", err)
	}
	if fs.deletes != 3 {
		t.Errorf("%d heals, want 3", fs.deletes)
	}
}

func TestAcquireInterrupted(t *testing.T) {
	s, _ := store.Open(context.Background(), "mem://")
	if err := New(s, lockKey, "i", Config{}).Acquire(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := Config{RetryInterval: time.Second, Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return sleep(ctx, d)
	}}
	err := New(s, lockKey, "i", cfg).Acquire(ctx, "b")
	if !errors.Is(err, aerr.ErrIndexLock) || !errors.Is(err, context.Canceled) ||
		!strings.HasPrefix(err.Error(), "Lock acquisition interrupted") {
		t.Fatalf("err = %v", err)
	}
}

// TestStaleHealingRace: several acquirers read the same stale lock and all
// try to heal it at once (a barrier holds every delete until all have
// read, and the late ones until the first has re-created the lock). Exactly
// one acquires; the others find a fresh lock and give up. With the
// original's unconditional delete, the late healers would delete the
// winner's new lock and several would "acquire".
func TestStaleHealingRace(t *testing.T) {
	const competitors = 6
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			old := time.Now().Add(-time.Hour)
			stale := LockInfo{CorrelationID: "dead", AcquiredAt: old, LastRefreshedAt: old, Owner: "gone"}
			if err := store.WriteAll(ctx, s, lockKey, stale.Marshal(), nil); err != nil {
				t.Fatal(err)
			}
			bs := newBarrierStore(s, competitors)
			var wg sync.WaitGroup
			errs := make([]error, competitors)
			for i := range competitors {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = New(bs, lockKey, "i", Config{MaxWait: -1}).Acquire(ctx, fmt.Sprint("c", i))
				}()
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("competitors %d and %d both acquired", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, aerr.ErrIndexLock):
					t.Fatalf("competitor %d: %v", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("nobody acquired")
			}
			if got := readInfo(t, s).CorrelationID; got != fmt.Sprint("c", winner) {
				t.Errorf("lock holds %q, winner was c%d", got, winner)
			}
		})
	}
}

// faultyStore injects failures: createErr fails every put-if-absent;
// recreate makes every delete succeed but leaves that content behind (a lock
// that is corrupt again after every heal).
type faultyStore struct {
	store.Store
	createErr error
	recreate  []byte
	mu        sync.Mutex
	deletes   int
}

func (f *faultyStore) NewWriter(ctx context.Context, key string, opts *store.WriteOptions) (store.Writer, error) {
	if f.createErr != nil && opts != nil && opts.IfNotExist {
		return nil, f.createErr
	}
	return f.Store.NewWriter(ctx, key, opts)
}

func (f *faultyStore) Delete(ctx context.Context, key string, opts *store.DeleteOptions) error {
	err := f.Store.Delete(ctx, key, opts)
	if err == nil && f.recreate != nil {
		f.mu.Lock()
		f.deletes++
		f.mu.Unlock()
		return store.WriteAll(ctx, f.Store, key, f.recreate, nil)
	}
	return err
}

// barrierStore forces the interleaving that breaks a naive healer: it holds
// the first n deletes until all n have been issued, then lets one through
// and holds the others until a put-if-absent has succeeded after it, so the
// late healers act on a lock that was already healed and re-created.
type barrierStore struct {
	store.Store
	n        int
	mu       sync.Mutex
	arrived  int
	all      chan struct{} // closed when n deletes have arrived
	created  chan struct{} // closed by the first successful put-if-absent
	once     sync.Once
	released bool
}

func newBarrierStore(s store.Store, n int) *barrierStore {
	return &barrierStore{Store: s, n: n, all: make(chan struct{}), created: make(chan struct{})}
}

// barrierWait bounds every wait, so that an implementation issuing fewer
// deletes fails the test's assertions instead of hanging it.
const barrierWait = 10 * time.Second

func (b *barrierStore) Delete(ctx context.Context, key string, opts *store.DeleteOptions) error {
	b.mu.Lock()
	held := b.arrived < b.n
	if held {
		b.arrived++
		if b.arrived == b.n {
			close(b.all)
		}
	}
	b.mu.Unlock()
	if held {
		wait(b.all)
		b.mu.Lock()
		first := !b.released
		b.released = true
		b.mu.Unlock()
		if !first {
			wait(b.created)
		}
	}
	return b.Store.Delete(ctx, key, opts)
}

func (b *barrierStore) NewWriter(ctx context.Context, key string, opts *store.WriteOptions) (store.Writer, error) {
	w, err := b.Store.NewWriter(ctx, key, opts)
	if err != nil || opts == nil || !opts.IfNotExist {
		return w, err
	}
	return &signalWriter{Writer: w, b: b}, nil
}

type signalWriter struct {
	store.Writer
	b *barrierStore
}

func (w *signalWriter) Close() error {
	err := w.Writer.Close()
	if err == nil {
		w.b.once.Do(func() { close(w.b.created) })
	}
	return err
}

func wait(c chan struct{}) {
	select {
	case <-c:
	case <-time.After(barrierWait):
	}
}

// TestRequestCounts pins the store requests of the uncontended operations,
// the lock's whole cost on object storage.
func TestRequestCounts(t *testing.T) {
	ctx := context.Background()
	mem, _ := store.Open(ctx, "mem://")
	s := store.NewCounting(mem)
	l := New(s, lockKey, "i", Config{})
	type counts struct{ stat, read, write, del int64 }
	for _, tc := range []struct {
		name string
		op   func() error
		want counts
	}{
		{"acquire", func() error { return l.Acquire(ctx, "a") }, counts{write: 1}},
		{"refresh", func() error { return l.Refresh(ctx, "a") }, counts{stat: 2, read: 1, write: 1}},
		{"refreshOrThrow", func() error { return l.RefreshOrThrow(ctx, "a") }, counts{stat: 2, read: 1, write: 1}},
		{"release", func() error { return l.Release(ctx, "a") }, counts{stat: 2, read: 1, del: 1}},
		{"release when free", func() error { return l.Release(ctx, "a") }, counts{stat: 1}},
	} {
		s.Reset()
		if err := tc.op(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		st := s.Snapshot()
		if got := (counts{st.Stat.Requests, st.Read.Requests, st.Write.Requests, st.Delete.Requests}); got != tc.want || st.List.Requests != 0 {
			t.Errorf("%s: requests %+v (list %d), want %+v", tc.name, got, st.List.Requests, tc.want)
		}
	}
}

// handOverStore makes the first n put-if-absent creates of the lock fail as
// if another writer held it, while the lock is absent when read: each round
// is a holder that released the lock between our create and our read.
type handOverStore struct {
	store.Store
	mu sync.Mutex
	n  int
}

func (h *handOverStore) NewWriter(ctx context.Context, key string, opts *store.WriteOptions) (store.Writer, error) {
	h.mu.Lock()
	busy := h.n > 0 && opts != nil && opts.IfNotExist
	if busy {
		h.n--
	}
	h.mu.Unlock()
	if busy {
		return nil, store.ErrPrecondition
	}
	return h.Store.NewWriter(ctx, key, opts)
}

// TestHandOversAreNotHeals: a lock that keeps changing hands between our
// create and our read is contention, not corruption. The original counts
// each round as a heal and fails after 3 ("possible persistent corrupt lock
// file"); we acquire, and only an unbounded stream of hand-overs fails.
func TestHandOversAreNotHeals(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	hs := &handOverStore{Store: s, n: 5}
	if err := New(hs, lockKey, "i", Config{MaxWait: -1}).Acquire(ctx, "a"); err != nil {
		t.Fatalf("5 hand-overs: %v", err)
	}
	if ok, _ := store.Exists(ctx, s, lockKey); !ok {
		t.Fatal("lock not created")
	}
	s2, _ := store.Open(ctx, "mem://")
	err := New(&handOverStore{Store: s2, n: 1 << 30}, lockKey, "i", Config{MaxWait: -1}).Acquire(ctx, "a")
	if !errors.Is(err, aerr.ErrIndexLock) || !strings.Contains(err.Error(), "changed hands") {
		t.Fatalf("endless hand-overs: err = %v", err)
	}
}
