package fileindexbench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
	"github.com/cespare/xxhash/v2"
)

// bareScan reads columns of every file with the reader Update uses
// (datafile), one file after the other, and returns the time taken.
func bareScan(ctx context.Context, src *schema.Struct, columns, uris []string) (time.Duration, error) {
	plan, err := datafile.Compile(datafile.Spec{Format: "parquet", Schema: src}, columns)
	if err != nil {
		return 0, err
	}
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	start := time.Now()
	for _, u := range uris {
		r, err := plan.Open(ctx, res, u)
		if err != nil {
			return 0, err
		}
		for {
			_, err := r.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				r.Close()
				return 0, err
			}
		}
		r.Close()
	}
	return time.Since(start), nil
}

// typedScan reads columns of every file with the typed page reader the
// update's Go summaries use (datafile.Plan.ScanTyped), one file after the
// other, touching every value (the dictionary entry of each row of a
// dictionary-encoded page), and returns the time taken: the update's own
// reading cost, without summarising.
func typedScan(ctx context.Context, src *schema.Struct, columns, uris []string) (time.Duration, error) {
	plan, err := datafile.Compile(datafile.Spec{Format: "parquet", Schema: src}, columns)
	if err != nil {
		return 0, err
	}
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	var sink int64
	start := time.Now()
	for _, u := range uris {
		ok, err := plan.ScanTyped(ctx, res, u, func(_ int, pg *pqrow.TypedPage) error {
			vals := pg.Values
			if pg.Dict != nil {
				vals = pg.Dict
				for _, i := range pg.Index {
					if vals.Offsets != nil {
						sink += int64(len(vals.Bytes(int(i))))
					} else {
						sink += vals.Ints[i]
					}
				}
				return nil
			}
			if vals == nil {
				return nil
			}
			if vals.Offsets != nil {
				for i := range vals.Len() {
					sink += int64(len(vals.Bytes(i)))
				}
				return nil
			}
			for _, x := range vals.Ints {
				sink += x
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("fileindex bench: %s has no typed form", u)
		}
	}
	_ = sink
	return time.Since(start), nil
}

// drainHash counts the rows of a stream until io.EOF and sums a hash of
// each row: the sum does not depend on the rows' order, so two results
// with equal counts and sums hold the same rows (up to hash collisions).
// Hashing costs the same per row for both joins.
func drainHash(ctx context.Context, next func(context.Context) ([][]any, error)) (int64, uint64, error) {
	var n int64
	var sum uint64
	var buf []byte
	for {
		b, err := next(ctx)
		if err == io.EOF {
			return n, sum, nil
		}
		if err != nil {
			return n, sum, err
		}
		n += int64(len(b))
		for _, row := range b {
			buf = rowBytes(buf[:0], row)
			sum += xxhash.Sum64(buf)
		}
	}
}

// rowBytes appends a canonical encoding of a row's values: integers
// of any width as int64, timestamps as Unix microseconds (time zone
// ignored), strings length-prefixed.
func rowBytes(dst []byte, row []any) []byte {
	for _, v := range row {
		switch x := v.(type) {
		case nil:
			dst = append(dst, 0)
		case string:
			dst = append(dst, 1)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(x)))
			dst = append(dst, x...)
		case time.Time:
			dst = append(dst, 2)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x.UnixMicro()))
		default:
			if i, ok := pqrow.AsInt64(v); ok {
				dst = append(dst, 3)
				dst = binary.LittleEndian.AppendUint64(dst, uint64(i))
			} else {
				dst = append(dst, 4)
				dst = fmt.Append(dst, v)
				dst = append(dst, 0)
			}
		}
	}
	return dst
}

// duckJoin is the baseline a user would run without an index: the keys
// loaded into DuckDB, joined with read_parquet over every file (DuckDB's
// own Parquet reader, with its row-group pruning and join filter
// pushdown; hive_partitioning off, so its rows have the lake's columns only,
// as ours), every result row brought back into Go as our join does.
// Settings are internal/duck's (threads = GOMAXPROCS, 1 GB memory).
// bench/duckdb is not used: its Engine answers prepared point lookups
// (WHERE key = ?), while a join needs the keys loaded as a table, which
// internal/duck's appender does; and it keeps the settings under which the
// figures of docs/fileindex.md were measured.
func duckJoin(ctx context.Context, keys [][]any, paths []string) (int64, uint64, error) {
	tmp, err := os.MkdirTemp("", "ariadne-bench-duck-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(tmp)
	db, err := duck.Open(ctx, duck.Options{TempDirectory: tmp})
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if _, err := db.Load(ctx, "k", duckKeys{fileindex.RowsSource(keySchema, keys)}); err != nil {
		return 0, 0, err
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = duck.String(p)
	}
	rows, err := db.Query(ctx, "SELECT * FROM k JOIN read_parquet(["+strings.Join(quoted, ",")+"], hive_partitioning = false) USING (user_id)")
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	return drainHash(ctx, func(ctx context.Context) ([][]any, error) { return rows.Next(ctx) })
}

// duckKeys adapts a fileindex.KeySource to duck.Source, to load the join's
// keys into DuckDB.
type duckKeys struct{ fileindex.KeySource }

func (k duckKeys) Next(ctx context.Context) ([]pqrow.Row, error) { return k.KeySource.Next(ctx) }
