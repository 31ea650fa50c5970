package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// Summaries written by the engine (UpdateOptions.SummaryTables): the
// engine writes a request's summary records — the SummaryJob layout, not
// finished staging rows — with its own Delta writer to a new table under
// the index's folder, at SummaryTablesFolder/<random UUID>. We read that
// table's committed version with package delta and consume its records as
// streamed ones; then the table is deleted. Everything that makes an index
// row (batching by distinct counts, large-index rows, bloom and auto-bloom
// filters), the staging commits and the merge stay ours, under our lock and
// commit protocol, so the index is the streamed path's.
//
// Why this is safe although the engine's Delta commit ignores our update
// lock:
//   - Each request writes a table of its own (a random UUID per request),
//     so a killed or late write of another attempt never lands in a table
//     this update reads, and two attempts never commit to one table.
//   - Only a committed version is read: data files of a write cut before
//     its commit are listed by no version and ignored (a cut write fails
//     the request, and the update with it, before anything is staged).
//   - The index's tables (staging, main, large indexes) are written only by
//     us; the engine writes only inside SummaryTablesFolder, which nothing
//     else reads. A table left by a dead attempt is deleted by the next
//     update that uses an engine (under the lock); one an engine writes
//     late, after that, is deleted by the one after.

// summaryTableURI returns the key (under the store root) and the URI the
// engine writes the table of one request to.
func (fi *FileIndex) summaryTableURI() (key, uri string, err error) {
	key = fi.ix.Paths().Dir + "/" + SummaryTablesFolder + "/" + uuid.NewString()
	raw := store.Sub(fi.ix.Root(), key).URL()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Scheme == "mem" {
		return "", "", fmt.Errorf("fileindex: summary tables: the index store %q is not one an engine can write to (update without summary tables)", fi.ix.Root().URL())
	}
	// The store's query parameters (region, endpoint) are ours; the
	// engine's file systems are configured on its side.
	u.RawQuery, u.ForceQuery = "", false
	return key, u.String(), nil
}

// summaryTable has eng write job's records as a Delta table and opens its
// committed version as records. drop deletes the table; the caller calls
// it (also on error) once the records are consumed.
func (fi *FileIndex) summaryTable(ctx context.Context, eng SummaryTableEngine, job *SummaryJob) (JoinRows, func(), error) {
	key, uri, err := fi.summaryTableURI()
	if err != nil {
		return nil, func() {}, err
	}
	drop := func() {
		// Best effort: a table left behind is deleted by the next update.
		ctx := context.WithoutCancel(ctx)
		store.DeleteAll(ctx, fi.ix.Root(), key+"/")
		fi.removeEmptySummaryFolders(ctx)
	}
	if err := eng.SummarizeToTable(ctx, job, uri); err != nil {
		return nil, drop, err
	}
	tb, err := delta.Open(ctx, store.Sub(fi.ix.Root(), key))
	if errors.Is(err, delta.ErrNotATable) {
		return nil, drop, fmt.Errorf("fileindex: %s engine: its summary table at %s has no committed version", eng.Name(), uri)
	}
	if err != nil {
		return nil, drop, err
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		return nil, drop, err
	}
	next, stop := iter.Pull2(snap.Scan(ctx, delta.ScanOptions{}))
	return &summaryTableRows{schema: snap.Schema(), next: next, stop: stop, file: eng.TableFiles(job), eng: eng.Name()}, drop, nil
}

// sweepSummaryTables deletes every table of SummaryTablesFolder: under the
// update lock, none is this update's, so each is a dead attempt's (or a
// late write of one).
func (fi *FileIndex) sweepSummaryTables(ctx context.Context) error {
	if _, err := store.DeleteAll(ctx, fi.ix.Root(), fi.ix.Paths().Dir+"/"+SummaryTablesFolder+"/"); err != nil {
		return err
	}
	fi.removeEmptySummaryFolders(ctx)
	return nil
}

// removeEmptySummaryFolders removes the folders a local summary table
// leaves once its objects are deleted (Delta's empty _delta_log/_commits/
// keeps them from going with their last object). Only empty folders go:
// the zero cutoff matches no temporary file (store.SweepTemps).
func (fi *FileIndex) removeEmptySummaryFolders(ctx context.Context) {
	store.SweepTemps(ctx, fi.ix.Root(), fi.ix.Paths().Dir+"/"+SummaryTablesFolder, time.Time{})
}

// summaryTableRows are the records of a summary table, in batches.
type summaryTableRows struct {
	schema *schema.Struct
	next   func() ([]any, error, bool)
	stop   func()
	file   func(string) (string, bool)
	eng    string
}

func (r *summaryTableRows) Schema() *schema.Struct { return r.schema }

func (r *summaryTableRows) Next(ctx context.Context) ([][]any, error) {
	var out [][]any
	for len(out) < 1024 {
		row, err, ok := r.next()
		if !ok {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(row) > 0 {
			f, _ := row[0].(string)
			if row[0], ok = r.file(f); !ok {
				return nil, fmt.Errorf("fileindex: %s engine: its summary table names file %q, not a file of the batch", r.eng, f)
			}
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, io.EOF
	}
	return out, nil
}

func (r *summaryTableRows) Close() error {
	r.stop()
	return nil
}
