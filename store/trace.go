package store

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"
)

// Trace records when the requests of the stores traced into it (NewTraced)
// started and ended, to count a caller's sequential rounds of requests:
// behind an object store's latency, the rounds (not the requests) make a
// cold lookup's time. It is meant for tests and benchmarks and is safe for
// concurrent use.
type Trace struct {
	mu    sync.Mutex
	t0    time.Time
	spans []Span
}

// Span is one traced request.
type Span struct {
	Store          string // the name given to NewTraced
	Op             Op
	Key            string // for a list, its prefix
	Offset, Length int64  // of a read
	Start, End     time.Duration
}

// NewTrace returns an empty trace whose times count from now.
func NewTrace() *Trace { return &Trace{t0: time.Now()} }

// Reset forgets the spans recorded; times count from now.
func (t *Trace) Reset() {
	t.mu.Lock()
	t.t0, t.spans = time.Now(), nil
	t.mu.Unlock()
}

func (t *Trace) add(sp Span, start time.Time) {
	t.mu.Lock()
	sp.Start, sp.End = start.Sub(t.t0), time.Since(t.t0)
	t.spans = append(t.spans, sp)
	t.mu.Unlock()
}

// Spans returns the recorded requests in the order they started, each with
// its round: 1 + the most rounds of a request that ended before it started.
func (t *Trace) Spans() (spans []Span, rounds []int) {
	t.mu.Lock()
	spans = slices.Clone(t.spans)
	t.mu.Unlock()
	slices.SortStableFunc(spans, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	rounds = make([]int, len(spans))
	for i, sp := range spans {
		rounds[i] = 1
		for j := range i {
			if spans[j].End <= sp.Start {
				rounds[i] = max(rounds[i], rounds[j]+1)
			}
		}
	}
	return spans, rounds
}

// Rounds returns the longest chain of recorded requests each started after
// the one before it ended. With a latency well above the caller's CPU time
// between requests (Faulty), it is the number of round trips the caller
// waited for one after another.
func (t *Trace) Rounds() int {
	_, rounds := t.Spans()
	return slices.Max(append(rounds, 0))
}

// String lists the requests, one a line, with their rounds and times.
func (t *Trace) String() string {
	spans, rounds := t.Spans()
	var b strings.Builder
	for i, sp := range spans {
		fmt.Fprintf(&b, "round %2d  %8.2f–%8.2f ms  %s %s %s", rounds[i], ms(sp.Start), ms(sp.End), sp.Store, sp.Op, sp.Key)
		if sp.Op == OpRead {
			fmt.Fprintf(&b, " @%d+%d", sp.Offset, sp.Length)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// NewTraced returns s with its reads (Stat, NewRangeReader, List) recorded
// in t under name. A read's span ends when its reader is opened, a list's
// when its first object (or its end) arrives (a paginated listing's later
// pages are not counted as rounds). The wrapper does not pass RangesReader
// through: a file store traced reads a file's ranges one request each, as
// an object store does.
func NewTraced(s Store, name string, t *Trace) Store {
	return &traced{Store: s, name: name, t: t}
}

type traced struct {
	Store
	name string
	t    *Trace
}

func (s *traced) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	start := time.Now()
	defer s.t.add(Span{Store: s.name, Op: OpStat, Key: key}, start)
	return s.Store.Stat(ctx, key)
}

func (s *traced) NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	start := time.Now()
	defer s.t.add(Span{Store: s.name, Op: OpRead, Key: key, Offset: offset, Length: length}, start)
	return s.Store.NewRangeReader(ctx, key, offset, length)
}

func (s *traced) List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		start := time.Now()
		recorded := false
		record := func() {
			if !recorded {
				recorded = true
				s.t.add(Span{Store: s.name, Op: OpList, Key: opts.Prefix}, start)
			}
		}
		defer record()
		for info, err := range s.Store.List(ctx, opts) {
			record()
			if !yield(info, err) {
				return
			}
		}
	}
}
