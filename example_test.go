package ariadne_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
)

// exampleLake generates a small lake with an index "plays" in a temporary
// folder and returns its store URL and most active user.
func exampleLake() (storeURL string, hot int64, cleanup func()) {
	dir, err := os.MkdirTemp("", "ariadne-example")
	if err != nil {
		log.Fatal(err)
	}
	lake, err := playsfixture.Plays(context.Background(), dir, 4)
	if err != nil {
		log.Fatal(err)
	}
	return lake.StoreURL, lake.Hot, func() { lake.Close(); os.RemoveAll(dir) }
}

// Open a store, find an index, and read one user's history, a page at a
// time.
func ExampleIndex_Lookup() {
	storeURL, hot, cleanup := exampleLake()
	defer cleanup()
	ctx := context.Background()

	st, err := ariadne.Open(ctx, storeURL)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	ix, err := st.Index(ctx, "plays")
	if err != nil {
		log.Fatal(err)
	}
	req := ariadne.LookupRequest{Column: "user_id", Key: hot, Columns: []string{"ts", "track_uri"}, Limit: 100}
	pages, rows := 0, 0
	for {
		res, err := ix.Lookup(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		pages++
		rows += len(res.Rows)
		if res.Cursor == "" {
			break
		}
		req.Cursor = res.Cursor
	}
	fmt.Println(pages, "pages,", rows, "rows")
	// Output: 4 pages, 343 rows
}

// Keys given as text are parsed by the key column's type; rows served from
// cover columns need no data file read.
func ExampleIndex_Lookup_covered() {
	storeURL, _, cleanup := exampleLake()
	defer cleanup()
	ctx := context.Background()

	st, err := ariadne.Open(ctx, storeURL)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	ix, err := st.Index(ctx, "plays")
	if err != nil {
		log.Fatal(err)
	}
	res, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "user_id", Key: "1", Columns: []string{"ts", "duration_ms"}, Limit: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res.Rows {
		fmt.Println(r.Values["ts"].(time.Time).Format(time.RFC3339), r.Values["duration_ms"])
	}
	fmt.Println("covered:", res.Plan.Covered, "data requests:", res.Plan.Data.Requests, "count:", res.Aggregates[0].Values["count"])
	// Output:
	// 2024-06-01T00:04:20Z 294966
	// 2024-06-01T00:20:09Z 268677
	// covered: true data requests: 0 count: 343
}

// Locate the data files that can hold keys.
func ExampleIndex_Locate() {
	storeURL, hot, cleanup := exampleLake()
	defer cleanup()
	ctx := context.Background()

	st, err := ariadne.Open(ctx, storeURL)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	ix, err := st.Index(ctx, "plays")
	if err != nil {
		log.Fatal(err)
	}
	res, err := ix.Locate(ctx, ariadne.LocateRequest{Keys: map[string][]any{"user_id": {hot}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(res.Files), "files can hold user", hot)
	// Output: 2 files can hold user 1
}
