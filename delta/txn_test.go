package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// TestConcurrentAppends: 8 goroutines append at once through one Table; all
// commits land at contiguous versions and no row is lost.
func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	tb := newTable(t, s)
	const writers, appends, per = 8, 5, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*appends)
	versions := make(chan int64, writers*appends)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := range appends {
				base := int64((w*appends + a) * per)
				v, err := tb.Append(ctx, Rows(rowsOf(base, base+per, "")), WriteOptions{})
				if err != nil {
					errs <- err
					return
				}
				versions <- v
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(versions)
	for err := range errs {
		t.Fatal(err)
	}
	var vs []int64
	for v := range versions {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	for i, v := range vs {
		if v != int64(i+1) {
			t.Fatalf("versions %v are not 1..%d", vs, writers*appends)
		}
	}
	ver, got := tableRows(t, s)
	if ver != writers*appends || !slices.Equal(got, render(rowsOf(0, writers*appends*per, ""))) {
		t.Fatalf("version %d, %d rows", ver, len(got))
	}
}

// TestConcurrentUpserts: two upserts from the same snapshot. Rewriting the
// same file, the second fails with ErrConflict; rewriting disjoint files
// (the winner's new file provably lacks the loser's keys), the second is
// rebased and commits.
func TestConcurrentUpserts(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*Table, store.Store, *Snapshot) {
		s := memStore(t)
		tb := newTable(t, s)
		tb.Append(ctx, Rows(rowsOf(0, 100, "")), WriteOptions{})
		tb.Append(ctx, Rows(rowsOf(100, 200, "")), WriteOptions{})
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tb, s, snap
	}
	t.Run("same file", func(t *testing.T) {
		tb, s, snap := setup(t)
		if _, err := tb.upsertAt(ctx, snap, []string{"id"}, Rows([][]any{row(5, "first", "")}), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := tb.upsertAt(ctx, snap, []string{"id"}, Rows([][]any{row(6, "second", "")}), WriteOptions{})
		var ce *ConflictError
		if !errors.Is(err, ErrConflict) || !errors.As(err, &ce) || ce.Version != 3 {
			t.Fatalf("second upsert: %v, want a ConflictError at version 3", err)
		}
		want := rowsOf(0, 200, "")
		want[5] = row(5, "first", "")
		if ver, got := tableRows(t, s); ver != 3 || !slices.Equal(got, render(want)) {
			t.Errorf("version %d; rows differ", ver)
		}
	})
	t.Run("disjoint files", func(t *testing.T) {
		tb, s, snap := setup(t)
		if _, err := tb.upsertAt(ctx, snap, []string{"id"}, Rows([][]any{row(5, "first", "")}), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		res, err := tb.upsertAt(ctx, snap, []string{"id"}, Rows([][]any{row(150, "second", "")}), WriteOptions{})
		if err != nil || res.Version != 4 {
			t.Fatalf("second upsert: %+v, %v; want a rebased commit at 4", res, err)
		}
		want := rowsOf(0, 200, "")
		want[5] = row(5, "first", "")
		want[150] = row(150, "second", "")
		if ver, got := tableRows(t, s); ver != 4 || !slices.Equal(got, render(want)) {
			t.Errorf("version %d; rows differ", ver)
		}
	})
	t.Run("insert of a key a concurrent append may hold", func(t *testing.T) {
		tb, _, snap := setup(t)
		// A concurrent append of ids 300..399; our upsert inserts 350.
		if _, err := tb.Append(ctx, Rows(rowsOf(300, 400, "")), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := tb.upsertAt(ctx, snap, []string{"id"}, Rows([][]any{row(350, "x", "")}), WriteOptions{})
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("upsert over a concurrent append of its key range: %v, want ErrConflict", err)
		}
	})
	t.Run("delete vs append", func(t *testing.T) {
		tb, _, snap := setup(t)
		if _, err := tb.appendAt(ctx, snap, Rows(rowsOf(300, 310, "")), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := tb.deleteAt(ctx, snap, func(r []any) bool { return r[0].(int64) == 1 }, DeleteOptions{})
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("predicate delete over a concurrent append: %v, want ErrConflict", err)
		}
		// With a key filter the append (ids 300..309) provably holds no
		// key 1: the delete is rebased.
		snap2, _ := tb.Snapshot(ctx)
		tb.appendAt(ctx, snap2, Rows(rowsOf(400, 410, "")), WriteOptions{})
		res, err := tb.deleteAt(ctx, snap2, func(r []any) bool { return r[0].(int64) == 1 }, DeleteOptions{Filter: &KeyFilter{Column: "id", Keys: []any{int64(1)}}})
		if err != nil || !res.Committed {
			t.Fatalf("filtered delete: %+v %v", res, err)
		}
	})
	t.Run("metadata change", func(t *testing.T) {
		tb, _, snap := setup(t)
		wider := parseSchema(t, testSchema[:len(testSchema)-2]+`,{"name":"extra","type":"integer","nullable":true,"metadata":{}}]}`)
		if _, err := tb.appendAt(ctx, snap, Rows(nil), WriteOptions{Schema: wider, MergeSchema: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.appendAt(ctx, snap, Rows(rowsOf(500, 501, "")), WriteOptions{}); !errors.Is(err, ErrConflict) {
			t.Fatalf("append over a concurrent schema change: %v, want ErrConflict", err)
		}
	})
}

// Multi-process appends: the test binary re-executes itself as children
// (selected by environment variables) that append to one file:// table.
const (
	envChildDir = "ARIADNE_DELTA_TEST_CHILD_DIR"
	envChildID  = "ARIADNE_DELTA_TEST_CHILD_ID"
)

const childAppends, childRows = 5, 20

func TestMultiProcessChild(t *testing.T) {
	dir := os.Getenv(envChildDir)
	if dir == "" {
		t.Skip("only runs as a child of TestMultiProcessAppends")
	}
	id, _ := strconv.Atoi(os.Getenv(envChildID))
	ctx := context.Background()
	s, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for a := range childAppends {
		base := int64((id*childAppends + a) * childRows)
		if _, err := tb.Append(ctx, Rows(rowsOf(base, base+childRows, "")), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMultiProcessAppends(t *testing.T) {
	if os.Getenv(envChildDir) != "" {
		t.Skip("child")
	}
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	newTable(t, s)
	const children = 4
	cmds := make([]*exec.Cmd, children)
	outs := make([][]byte, children)
	var wg sync.WaitGroup
	for i := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMultiProcessChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChildDir+"="+dir, fmt.Sprintf("%s=%d", envChildID, i))
		cmds[i] = cmd
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _ = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, c := range cmds {
		if !c.ProcessState.Success() {
			t.Fatalf("child %d failed:\n%s", i, outs[i])
		}
	}
	// Contiguous versions 0..children*childAppends.
	for v := int64(0); v <= children*childAppends; v++ {
		if ok, _ := store.Exists(ctx, s, CommitKey(v)); !ok {
			t.Errorf("missing commit %d", v)
		}
	}
	ver, got := tableRows(t, s)
	if ver != children*childAppends || !slices.Equal(got, render(rowsOf(0, children*childAppends*childRows, ""))) {
		t.Fatalf("version %d, %d rows", ver, len(got))
	}
}
