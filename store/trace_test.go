package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

func TestTraceRounds(t *testing.T) {
	ctx := context.Background()
	mem, err := store.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for _, k := range []string{"a", "b", "c"} {
		if err := store.WriteAll(ctx, mem, k, []byte("0123456789"), nil); err != nil {
			t.Fatal(err)
		}
	}
	tr := store.NewTrace()
	// Latency far above the time between one request's end and the
	// next's start, so that concurrent requests overlap.
	st := store.NewTraced(store.NewFaulty(mem, store.Faults{Latency: 30 * time.Millisecond}), "mem", tr)
	read := func(key string) {
		if _, err := store.ReadAll(ctx, st, key); err != nil {
			t.Error(err)
		}
	}
	for range st.List(ctx, store.ListOptions{}) { // round 1
	}
	var wg sync.WaitGroup
	wg.Go(func() { read("a") }) // round 2
	wg.Go(func() { read("b") }) // round 2
	wg.Wait()
	read("c") // round 3
	if got := tr.Rounds(); got != 3 {
		t.Fatalf("rounds = %d, want 3:\n%s", got, tr)
	}
	spans, rounds := tr.Spans()
	if len(spans) != 4 || spans[0].Op != store.OpList || rounds[3] != 3 || spans[3].Key != "c" {
		t.Fatalf("spans %+v, rounds %v", spans, rounds)
	}
	if s := tr.String(); !strings.Contains(s, "mem read c @0+-1") {
		t.Fatalf("listing:\n%s", s)
	}
	tr.Reset()
	if tr.Rounds() != 0 {
		t.Fatal("Reset kept spans")
	}
}
