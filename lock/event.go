package lock

import (
	"fmt"
	"strings"
	"time"
)

// EventKind says what an Event reports.
type EventKind int

const (
	// Waiting: Acquire found the lock held by a live holder and waits for
	// it. Reported when the wait starts and again whenever another holder
	// takes the lock meanwhile.
	Waiting EventKind = iota
	// TakenOver: Acquire deleted a lock whose holder is gone (stale,
	// abandoned or its process no longer exists) and tries to take it.
	TakenOver
)

// Event is what Config.OnEvent is told.
type Event struct {
	Kind  EventKind
	Index string // the index the lock belongs to
	Key   string // the lock's key in its store
	// Holder is the lock as last read: who holds it, since when
	// (AcquiredAt), and whether it heartbeats.
	Holder LockInfo
	// Now is the acquirer's clock when the event happened.
	Now time.Time
	// TakeOverAfter is how long the holder may stay silent before its lock
	// is taken over: abandonBeats heartbeats for a heartbeating lock,
	// Timeout for a lock of the Spark library.
	TakeOverAfter time.Duration
	// GiveUpAt is when Acquire fails if the holder keeps the lock (Waiting).
	GiveUpAt time.Time
	// Reason says why the holder was judged gone (TakenOver).
	Reason string
}

// String renders the event as one line for a person, e.g.
//
//	waiting for lock indexes/x/.update.lock of index 'x': held by owner 'h' (pid 4242 on host h, heartbeat every 2s) since 2026-01-01T00:00:00Z (3m5s ago); taken over if silent for 10s; giving up in 59m55s
func (e Event) String() string {
	var b strings.Builder
	switch e.Kind {
	case TakenOver:
		fmt.Fprintf(&b, "taking over lock %s of index '%s' from %s: %s", e.Key, e.Index, e.holder(), e.Reason)
	default:
		fmt.Fprintf(&b, "waiting for lock %s of index '%s': held by %s", e.Key, e.Index, e.holder())
		if !e.Holder.AcquiredAt.IsZero() {
			fmt.Fprintf(&b, " since %s (%s ago)", FormatInstant(e.Holder.AcquiredAt), roundSecond(e.Now.Sub(e.Holder.AcquiredAt)))
		}
		if e.Holder.Heartbeat > 0 {
			fmt.Fprintf(&b, "; taken over if silent for %s", e.TakeOverAfter)
		} else {
			fmt.Fprintf(&b, "; no heartbeat (a Spark library lock): taken over only if not refreshed for %s", e.TakeOverAfter)
		}
		fmt.Fprintf(&b, "; giving up in %s", roundSecond(max(0, e.GiveUpAt.Sub(e.Now))))
	}
	return b.String()
}

// holder describes the holder for messages.
func (e Event) holder() string {
	h := e.Holder
	s := fmt.Sprintf("owner '%s' (correlationId '%s'", h.Owner, h.CorrelationID)
	if h.PID > 0 {
		s += fmt.Sprintf(", pid %d on host %s", h.PID, h.Host)
	}
	if h.Heartbeat > 0 {
		s += fmt.Sprintf(", heartbeat every %s", h.Heartbeat)
	}
	return s + ")"
}

func roundSecond(d time.Duration) time.Duration { return d.Round(time.Second) }
