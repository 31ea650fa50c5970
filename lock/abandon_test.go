package lock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// events records what Config.OnEvent is told.
type events struct {
	mu   sync.Mutex
	list []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

func (e *events) kinds() []EventKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []EventKind
	for _, ev := range e.list {
		out = append(out, ev.Kind)
	}
	return out
}

func (e *events) last() Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.list) == 0 {
		return Event{}
	}
	return e.list[len(e.list)-1]
}

// writeLock stores info as the lock file, as another process would.
func writeLock(t *testing.T, s store.Store, info LockInfo) {
	t.Helper()
	if err := store.WriteAll(context.Background(), s, lockKey, info.Marshal(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestLockInfoHeartbeatFields(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := LockInfo{CorrelationID: "c", AcquiredAt: at, LastRefreshedAt: at, Owner: "o",
		Heartbeat: 2 * time.Second, Host: "h<1>", PID: 4242, PIDNamespace: "boot/pid:[1]"}
	const want = `{"correlationId":"c","acquiredAt":"2026-01-01T00:00:00Z","lastRefreshedAt":"2026-01-01T00:00:00Z","owner":"o",` +
		`"heartbeatSeconds":2,"host":"h\u003c1\u003e","pid":4242,"pidNamespace":"boot/pid:[1]"}`
	if got := string(info.Marshal()); got != want {
		t.Fatalf("Marshal = %s\nwant %s", got, want)
	}
	back, err := ParseLockInfo([]byte(want))
	if err != nil || back.Heartbeat != info.Heartbeat || back.Host != info.Host || back.PID != info.PID ||
		back.PIDNamespace != info.PIDNamespace || back.CorrelationID != "c" {
		t.Fatalf("ParseLockInfo = %+v, %v", back, err)
	}
	// Wrong types and hostile values read as a plain (Spark) lock, never
	// as corrupt: the Spark library accepts such files too.
	for _, extra := range []string{
		`"heartbeatSeconds":"2","pid":"1","host":7`,
		`"heartbeatSeconds":-2,"pid":-1`,
		`"heartbeatSeconds":1e300,"pid":99999999999`,
		`"heartbeatSeconds":2.5,"pid":null,"pidNamespace":{}`,
	} {
		got, err := ParseLockInfo([]byte(`{"correlationId":"c","owner":"o",` + extra + `}`))
		if err != nil || got.Heartbeat != 0 || got.PID != 0 || got.CorrelationID != "c" {
			t.Errorf("%s: %+v, %v", extra, got, err)
		}
	}
}

// TestHeartbeatingLocksAreMarked: only a Lock configured with a heartbeat
// interval writes the marker; without one the file is the Spark library's
// four fields, byte for byte in form.
func TestHeartbeatingLocksAreMarked(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	ft := newFakeTime()
	if err := New(s, lockKey, "i", ft.config()).Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	data, _ := store.ReadAll(ctx, s, lockKey)
	if strings.Contains(string(data), "heartbeat") || strings.Contains(string(data), "pid") {
		t.Errorf("unmarked lock: %s", data)
	}
	s2, _ := store.Open(ctx, "mem://")
	cfg := ft.config()
	cfg.HeartbeatInterval = DefaultHeartbeatInterval
	l := New(s2, lockKey, "i", cfg)
	if err := l.Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	info, err := l.Read(ctx)
	if err != nil || info.Heartbeat != 2*time.Second || info.PID != os.Getpid() || info.Host == "" {
		t.Fatalf("marked lock: %+v, %v", info, err)
	}
	// Refreshes keep the marker.
	if err := l.Refresh(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if info, _ := l.Read(ctx); info.Heartbeat != 2*time.Second || info.PID != os.Getpid() {
		t.Errorf("after refresh: %+v", info)
	}
	// A timeout shorter than 3 intervals shortens the heartbeat with it.
	cfg.Timeout = 3 * time.Second
	if p := New(s2, lockKey, "i", cfg).HeartbeatPeriod(); p != time.Second {
		t.Errorf("period %v, want 1s", p)
	}
}

// TestAbandonedLockTakenOver: a heartbeating lock whose holder stopped
// refreshing is taken over within seconds under the default timings (30 min
// timeout, 60 s retry interval), never before it has been silent for more
// than 5 heartbeats, and with the waiting and the takeover reported.
func TestAbandonedLockTakenOver(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		ft := newFakeTime()
		t0 := ft.Now()
		writeLock(t, s, LockInfo{CorrelationID: "dead", AcquiredAt: t0.Add(-time.Minute), LastRefreshedAt: t0,
			Owner: "o", Heartbeat: 2 * time.Second, Host: "elsewhere", PID: 1, PIDNamespace: "other-boot/pid:[1]"})
		var ev events
		cfg := ft.config()
		cfg.HeartbeatInterval, cfg.OnEvent = DefaultHeartbeatInterval, ev.add
		if err := New(s, lockKey, "i", cfg).Acquire(ctx, "b"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		waited := ft.Now().Sub(t0)
		if waited <= 10*time.Second || waited > 12*time.Second {
			t.Errorf("%s: taken over after %v, want just over 10 s (5 heartbeats)", name, waited)
		}
		if got := readInfo(t, s).CorrelationID; got != "b" {
			t.Errorf("%s: holder %q", name, got)
		}
		if k := ev.kinds(); len(k) != 2 || k[0] != Waiting || k[1] != TakenOver {
			t.Errorf("%s: events %v", name, k)
		}
		if r := ev.last().Reason; !strings.Contains(r, "abandoned") {
			t.Errorf("%s: reason %q", name, r)
		}
	}
}

// TestLongAbandonedLock: a heartbeating lock silent for an hour (but not
// past the timeout) is taken over once the acquirer itself has seen it
// unchanged for 2 heartbeats.
func TestLongAbandonedLock(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	ft := newFakeTime()
	t0 := ft.Now()
	writeLock(t, s, LockInfo{CorrelationID: "dead", AcquiredAt: t0.Add(-2 * time.Hour), LastRefreshedAt: t0.Add(-time.Hour),
		Owner: "o", Heartbeat: 2 * time.Second})
	cfg := ft.config()
	cfg.Timeout = 3 * time.Hour
	if err := New(s, lockKey, "i", cfg).Acquire(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if waited := ft.Now().Sub(t0); waited < 4*time.Second || waited > 5*time.Second {
		t.Errorf("taken over after %v, want 4-5 s", waited)
	}
}

// TestLiveHeartbeatNeverTakenOver: a holder that refreshes every 2 s keeps
// its lock for as long as the waiter waits, even when its clock runs 5
// minutes behind (its lastRefreshedAt always looks 5 minutes old).
func TestLiveHeartbeatNeverTakenOver(t *testing.T) {
	ctx := context.Background()
	for _, skew := range []time.Duration{0, -5 * time.Minute} {
		s, _ := store.Open(ctx, "file://"+t.TempDir())
		ft := newFakeTime()
		hcfg := ft.config()
		hcfg.HeartbeatInterval = DefaultHeartbeatInterval
		hcfg.Clock = func() time.Time { return ft.Now().Add(skew) }
		holder := New(s, lockKey, "i", hcfg)
		if err := holder.Acquire(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		cfg := ft.config()
		cfg.HeartbeatInterval, cfg.MaxWait = DefaultHeartbeatInterval, 5*time.Minute
		var ticks int
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			// The holder refreshes every 2 s of the time that passes.
			for ; d > 0; d -= 500 * time.Millisecond {
				ft.Advance(min(d, 500*time.Millisecond))
				if ticks++; ticks%4 == 0 {
					if err := holder.RefreshOrThrow(ctx, "a"); err != nil {
						return err
					}
				}
			}
			return nil
		}
		err := New(s, lockKey, "i", cfg).Acquire(ctx, "b")
		if !errors.Is(err, aerr.ErrIndexLock) || !strings.Contains(err.Error(), "Currently held by correlationId='a'") {
			t.Fatalf("skew %v: err = %v, want the holder to keep the lock", skew, err)
		}
		if got := readInfo(t, s).CorrelationID; got != "a" {
			t.Fatalf("skew %v: holder %q", skew, got)
		}
	}
}

// TestSparkLockKeepsTimeout: a lock without the heartbeat marker (as the
// Spark library writes it) is taken over only after lockTimeout, with the
// library's backoff, whatever the acquirer's own heartbeat.
func TestSparkLockKeepsTimeout(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	ft := newFakeTime()
	t0 := ft.Now()
	writeLock(t, s, LockInfo{CorrelationID: "spark", AcquiredAt: t0, LastRefreshedAt: t0, Owner: "local-1700000000000"})
	var ev events
	cfg := ft.config()
	cfg.HeartbeatInterval, cfg.OnEvent = DefaultHeartbeatInterval, ev.add
	if err := New(s, lockKey, "i", cfg).Acquire(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if waited := ft.Now().Sub(t0); waited <= DefaultTimeout || waited > DefaultTimeout+time.Minute {
		t.Errorf("taken over after %v, want just over lockTimeout (%v)", waited, DefaultTimeout)
	}
	for _, d := range ft.sleeps {
		if d != time.Minute {
			t.Fatalf("sleeps %v, want the 60 s backoff", ft.sleeps)
		}
	}
	if k := ev.kinds(); len(k) != 2 || k[0] != Waiting {
		t.Errorf("events %v", k)
	} else if msg := ev.list[0].String(); !strings.Contains(msg, "Spark library lock") || !strings.Contains(msg, "30m0s") ||
		!strings.Contains(msg, "giving up in 1h0m0s") || !strings.Contains(msg, "owner 'local-1700000000000'") {
		t.Errorf("waiting message: %s", msg)
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestDeadProcessTakenOverAtOnce: a fresh heartbeating lock whose holder is
// a process of this machine that no longer exists is taken over without
// waiting; the same lock from another machine (another pid namespace) or
// from a live process is waited for.
func TestDeadProcessTakenOverAtOnce(t *testing.T) {
	self := currentProcess()
	if self.namespace == "" {
		t.Skip("no pid namespace identity on this platform")
	}
	ctx := context.Background()
	dead := deadPID(t)
	for _, tc := range []struct {
		name      string
		pid       int
		namespace string
		atOnce    bool
	}{
		{"dead here", dead, self.namespace, true},
		{"dead elsewhere", dead, "other-boot/pid:[1]", false},
		{"alive here", os.Getppid(), self.namespace, false},
	} {
		s, _ := store.Open(ctx, "mem://")
		ft := newFakeTime()
		writeLock(t, s, LockInfo{CorrelationID: "x", AcquiredAt: ft.Now(), LastRefreshedAt: ft.Now(), Owner: "o",
			Heartbeat: 2 * time.Second, Host: self.host, PID: tc.pid, PIDNamespace: tc.namespace})
		var ev events
		cfg := ft.config()
		cfg.HeartbeatInterval, cfg.OnEvent = DefaultHeartbeatInterval, ev.add
		if err := New(s, lockKey, "i", cfg).Acquire(ctx, "b"); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := len(ft.sleeps) == 0; got != tc.atOnce {
			t.Errorf("%s: sleeps %v, want at once = %v", tc.name, ft.sleeps, tc.atOnce)
		}
		if tc.atOnce && !strings.Contains(ev.last().Reason, "no longer exists") {
			t.Errorf("%s: reason %q", tc.name, ev.last().Reason)
		}
	}
}

// TestHeartbeatToleratesStoreErrors: with a short heartbeat a failed
// refresh (a store error, not a lost lock) is retried while the lock cannot
// yet look abandoned; a lost lock still fails at once.
func TestHeartbeatToleratesStoreErrors(t *testing.T) {
	s, _ := store.Open(context.Background(), "mem://")
	l := New(s, lockKey, "i", Config{HeartbeatInterval: DefaultHeartbeatInterval})
	storeErr := errors.New("connection reset")
	lost := aerr.New(aerr.ErrIndexLock, "lost")
	for _, tc := range []struct {
		err   error
		since time.Duration
		want  bool
	}{
		{storeErr, 2 * time.Second, true},
		{storeErr, 5 * time.Second, true},
		{storeErr, 6 * time.Second, false},
		{lost, time.Second, false},
	} {
		if got := l.tolerable(tc.err, tc.since); got != tc.want {
			t.Errorf("%v after %v: %v, want %v", tc.err, tc.since, got, tc.want)
		}
	}
	if New(s, lockKey, "i", Config{}).tolerable(storeErr, time.Second) {
		t.Error("without a heartbeat interval the first failure must count")
	}
}

// TestReleaseNoticedPromptly: a waiter on a live heartbeating holder looks
// at least every 2 heartbeats, so it takes the lock within 4 s of its
// release under the default 60 s retry interval (a Spark lock's waiter
// would sleep 60 s).
func TestReleaseNoticedPromptly(t *testing.T) {
	ctx := context.Background()
	s, _ := store.Open(ctx, "mem://")
	ft := newFakeTime()
	hcfg := ft.config()
	hcfg.HeartbeatInterval = DefaultHeartbeatInterval
	holder := New(s, lockKey, "i", hcfg)
	if err := holder.Acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	t0 := ft.Now()
	releaseAt := t0.Add(31 * time.Second)
	cfg := ft.config()
	cfg.HeartbeatInterval = DefaultHeartbeatInterval
	var ticks int
	released := false
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		if d > 4*time.Second {
			t.Errorf("sleep %v, want at most 4 s", d)
		}
		for ; d > 0; d -= 500 * time.Millisecond {
			ft.Advance(min(d, 500*time.Millisecond))
			if !released && !ft.Now().Before(releaseAt) {
				released = true
				if err := holder.Release(ctx, "a"); err != nil {
					return err
				}
			}
			if ticks++; ticks%4 == 0 && !released {
				if err := holder.RefreshOrThrow(ctx, "a"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := New(s, lockKey, "i", cfg).Acquire(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if late := ft.Now().Sub(releaseAt); late > 4*time.Second {
		t.Errorf("acquired %v after the release, want within 4 s", late)
	}
}
