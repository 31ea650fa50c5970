package rowindex

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// TestRecordTimestamps: Record renders a timestamp column as the instant it
// holds (lakegen's ts is TIMESTAMP(MICROS)), not as its epoch count.
func TestRecordTimestamps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, true)
	res := StoreResolver{data}
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "idx"))
	if _, _, err := Create(ctx, idx, Definition{Name: "u", Key: "user_id"}, res, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, "u", Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ri.Lookup(ctx, Query{Key: hot(0), Columns: []string{"user_id", "ts"}, Limit: 5})
	if err != nil || len(r.Rows) == 0 {
		t.Fatalf("%d rows, %v", len(r.Rows), err)
	}
	for i := range r.Rows {
		rec, err := r.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		ts, ok := rec["ts"].(time.Time)
		if !ok {
			t.Fatalf("ts is %T %v, want time.Time", rec["ts"], rec["ts"])
		}
		if want := time.UnixMicro(r.Rows[i].Values[1].Int64()).UTC(); !ts.Equal(want) || ts.Year() != 2024 {
			t.Fatalf("ts %v, want %v", ts, want)
		}
		if rec["user_id"] != hot(0) {
			t.Fatalf("user_id %v (%T), want %d", rec["user_id"], rec["user_id"], hot(0))
		}
	}
}
