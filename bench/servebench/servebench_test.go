package servebench

import (
	"context"
	"testing"
	"time"
)

// TestRun runs the load generator on a tiny lake: every lookup succeeds,
// covered lookups read no data file once warm, and a second run reuses the
// lake.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, SizeMB: 2, Users: 300, Concurrency: 4, Duration: 300 * time.Millisecond, Covered: true, Limit: 50}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Phases) != 2 || rep.Lake.Rows == 0 || rep.WarmUp.Requests == 0 {
		t.Fatalf("report %+v", rep)
	}
	cold, warm := rep.Phases[0], rep.Phases[1]
	if cold.Requests != 8 || cold.Errors != 0 || warm.Errors != 0 || warm.Requests == 0 || warm.Rows == 0 {
		t.Fatalf("phases %+v", rep.Phases)
	}
	if warm.DataRequests != 0 || warm.IndexRequests != 0 || cold.IndexRequests == 0 {
		t.Fatalf("covered warm lookups made storage requests, or cold ones none: %+v", rep.Phases)
	}
	if warm.Rows > int64(warm.Requests)*50 {
		t.Fatalf("more rows than the limit: %+v", warm)
	}
	cfg.Covered = false
	rep2, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Lake != rep.Lake || rep2.Phases[1].Errors != 0 {
		t.Fatalf("second run: %+v", rep2)
	}
}
