package ariadne_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/store"
)

// TestErrorKindStorage: a storage request that fails on its way has kind
// "storage" (the --json kind), an answer about the object keeps its own.
func TestErrorKindStorage(t *testing.T) {
	ctx := context.Background()
	mem, err := store.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, mem, "a", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	f := store.NewFaulty(mem, store.Faults{Errors: []store.FaultRule{{Op: store.OpRead, Err: syscall.ECONNRESET}}})
	_, err = store.ReadAll(ctx, f, "a")
	if k := ariadne.ErrorKind(err); k != "storage" {
		t.Errorf("kind %q of %v, want storage", k, err)
	}
	_, err = store.ReadAll(ctx, mem, "missing")
	if k := ariadne.ErrorKind(err); k != "not found" || errors.Is(err, store.ErrStorage) {
		t.Errorf("kind %q of %v, want not found", k, err)
	}
}
