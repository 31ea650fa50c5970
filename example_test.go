package ariadne_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/playsfixture"
	"github.com/ariadne-go/ariadne/rowindex"
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

// Join a key set with the rows of only the data files that can hold its
// keys, streaming the result.
func ExampleIndex_Join() {
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
	rows, err := ix.Join(ctx, ariadne.JoinRequest{
		Keys:   map[string][]any{"user_id": {hot, "2654435762"}}, // typed by the column: text is parsed
		Select: []string{"user_id", "ts", "track_uri"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	n := map[int64]int{}
	for rows.Next() {
		n[rows.Values()[0].(int64)]++
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(rows.Columns(), n[hot], "rows of user", hot, "and", n[2654435762], "of user 2654435762 from", len(rows.Files()), "files")
	// Output: [user_id ts track_uri] 343 rows of user 1 and 326 of user 2654435762 from 4 files
}

// Build a row index on another column, look it up, and drop it.
func ExampleIndex_AddRowIndex() {
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
	info, _, err := ix.AddRowIndex(ctx, ariadne.RowIndexDefinition{Key: "track_uri", Kind: rowindex.KindHash, Cover: []string{"user_id"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Name, info.Kind, info.Files, "files")
	res, err := ix.Lookup(ctx, ariadne.LookupRequest{Column: "track_uri", Key: "spotify:track:0000000000000000000007", Columns: []string{"user_id"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(res.Rows), "plays of track 7, covered:", res.Plan.Covered)
	if err := ix.DropRowIndex(ctx, "track_uri"); err != nil {
		log.Fatal(err)
	}
	d, err := ix.Describe(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range d.RowIndexes {
		fmt.Println(r.Name, r.Key, r.Kind, r.Cover)
	}
	// Output:
	// track_uri hash 4 files
	// 60 plays of track 7, covered: true
	// ts ts sorted [user_id]
	// user_id user_id hash [ts duration_ms]
}

// Answer a question about one user's history with SQL over its rows,
// without paging the rows out: the key's rows are the table rows.
func ExampleIndex_LookupSQL() {
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
	res, err := ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: hot,
		SQL: "SELECT count(*) AS plays, count(DISTINCT track_uri) AS tracks FROM rows"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Columns, res.InputRows, "rows in")
	// A statement that is not one read-only query never runs.
	_, err = ix.LookupSQL(ctx, ariadne.LookupSQLRequest{Column: "user_id", Key: hot, SQL: "COPY rows TO 'out.csv'"})
	fmt.Println(ariadne.ErrorKind(err))
	// Output:
	// [plays tracks] 343 rows in
	// bad query
}
