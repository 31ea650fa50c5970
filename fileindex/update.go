package fileindex

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/metadata"
)

// UpdateOptions configure one Update.
type UpdateOptions struct {
	// Now returns the staging time of a batch (§4.3); nil = time.Now.
	// Tests pin it to make staging ranks predictable.
	Now func() time.Time
	// ReadCacheBytes applies to the files the engine summarises (see
	// EngineFiles; files summarised in Go are always read once). It bounds
	// the input whose rows the pre-flight analysis
	// keeps loaded for the batch builds, so that those files are read once
	// (0: DefaultReadCacheBytes; negative: none, every file is read by the
	// analysis and again by its batch). The kept rows spill to the update's
	// temporary folder past the engine's memory limit: the cost is
	// temporary disk, ~4.5× the input kept. A cached file is indexed as the
	// analysis read it, even if it changes before its batch is built.
	ReadCacheBytes int64
	// Concurrency is the number of data files read and summarised at once
	// (0: one per core, at most 8).
	Concurrency int
	// SummaryMemoryBytes bounds the memory of the Go summaries (distinct
	// value sets) of the files being read, shared by the files read at
	// once (0: DefaultSummaryMemoryBytes). A file whose sets outgrow its
	// share is summarised by the engine instead, which spills to disk.
	SummaryMemoryBytes int64

	// Summaries, when set, computes the per-file summaries of the files
	// this update indexes on another engine (package sparkengine's Engine:
	// Apache Spark through Spark Connect), SummaryBatchFiles files per
	// request (0: DefaultSummaryBatchFiles). Everything else — batching,
	// large-index rows, bloom filters, staging, merging, the lock — stays
	// here; the index is the one the embedded path builds. Computed
	// expressions are evaluated by that engine. See summary_engine.go.
	Summaries         SummaryEngine
	SummaryBatchFiles int
	// SummaryTables has Summaries (a SummaryTableEngine) write each
	// request's records as a Delta table in the index's folder
	// (SummaryTablesFolder, one table per request) with its own Delta
	// writer, instead of streaming them back; the update reads the
	// committed version with package delta, builds the index from it as
	// from streamed records, and deletes the table. The engine then needs
	// write access to the index's folder. See summary_table.go.
	SummaryTables bool

	// RetryQuarantined empties the list of quarantined files first, so
	// that they are indexed again (or quarantined again, if the cause
	// remains).
	RetryQuarantined bool

	// engineOnly builds every file through the engine, as before the Go
	// summaries: the tests compare both paths' indexes.
	engineOnly bool
	// rowsOnly keeps the Go summaries on the row reader (no typed path),
	// for tests comparing the two.
	rowsOnly bool
}

// UpdateResult reports what an Update did.
type UpdateResult struct {
	// RecoveredStaging is set when a leftover staging table (an interrupted
	// update's) was consolidated first (§5.3 step 4).
	RecoveredStaging bool
	// BackfilledFiles are the indexed files rebuilt because a definition's
	// column was missing from the main table (§5.4).
	BackfilledFiles int
	// NewFiles are the tracked files indexed for the first time.
	NewFiles int
	// Skipped are tracked files that no longer exist: not indexed, still
	// tracked, tried again by the next update.
	Skipped []SkippedFile
	// Quarantined are the files this update set aside (see
	// QuarantinedFile); earlier ones are listed by Quarantined.
	Quarantined []QuarantinedFile
	// Batches and Consolidations count the batches staged and the
	// consolidations into the main table (including the recovery).
	Batches, Consolidations int
	// Compactions counts auto-compactions (§5.3.8).
	Compactions int
	// Bytes is the input read by the batch builds.
	Bytes int64
	// AutoBloomDetected lists columns newly registered for auto-bloom.
	AutoBloomDetected []string
	// EngineFiles counts the files the engine summarised (computed
	// indexes, nested index values, value sets over the memory budget)
	// instead of the Go summaries.
	EngineFiles int
	// SummarizedBy counts the files UpdateOptions.Summaries summarised.
	SummarizedBy int
	// TypedFiles counts the files summarised from typed pages (Parquet
	// files whose summarised columns are top-level integers, dates,
	// timestamps or strings), without assembling rows.
	TypedFiles int
	// SnapshotFromMemory reports that the locate snapshot was built from
	// the rows the update merged (a first update: the main table held
	// nothing else), without scanning the main table.
	SnapshotFromMemory bool
	// Stages says where the time went.
	Stages UpdateStages
}

// UpdateStages are the times of an update's pipeline stages. Files are read
// and summarised in one streaming pass per file, several files at once:
// Read and Summarize are summed over those passes (so they may exceed
// ReadWall, the pass's wall time).
type UpdateStages struct {
	Read, Summarize, ReadWall time.Duration
	// Analyze is the engine's pre-flight analysis (files it summarises);
	// Build the batch builds (cells from the summaries, the engine's
	// queries, large-index writes); Stage the staging commits and their
	// metadata; Merge the merges into the main table; Snapshot the locate
	// snapshot's write.
	Analyze, Build, Stage, Merge, Snapshot time.Duration
}

// Update brings the index up to date with its FileList (spec §5.3): under
// the update lock (after the locked storage preflight) it consolidates any
// staging an interrupted update left, rebuilds every indexed file when a
// definition's column is missing from the main table (§5.4), then indexes
// the tracked files that have no main-table row.
//
// Files go through the pre-flight analysis (per-file distinct counts,
// §5.3.1), are packed into batches (§5.3.2), and each batch is built by the
// embedded engine over the rows our readers stream, staged as one Delta
// commit, and merged into the main table every stagingConsolidationThreshold
// batches and at the end.
//
// Failure and consistency: any error aborts the update and is returned;
// what was committed stays consistent (staging batches are single commits,
// the merge into index/ is one commit) and the next Update finishes the job:
// it consolidates the leftover staging first and then indexes whatever is
// still unindexed. Errors: *ComputedIndexError (ErrComputedExpression) for a
// computed expression the engine rejects, before anything is written;
// *datafile.FileError for an unreadable data file (its kind via errors.Is:
// datafile.ErrCorruptFile, datafile.ErrMalformedRecord, ...);
// *BloomBuildError; the lock and preflight errors of index.WithUpdateLock.
// Files that vanished before the analysis are skipped and reported in
// UpdateResult.Skipped.
//
// Update with nothing to do commits nothing to any Delta table and writes
// metadata.json only if a counter changed.
func (fi *FileIndex) Update(ctx context.Context, opts UpdateOptions) (UpdateResult, error) {
	var res UpdateResult
	err := fi.ix.WithUpdateLock(ctx, func(ctx context.Context) error {
		feed := newViewFeed()
		if err := fi.update(ctx, opts, &res, feed); err != nil {
			return err
		}
		t0 := time.Now()
		fi.updProgress(Progress{Phase: "snapshot", Done: 0, Total: 1})
		err := fi.snapshotAfterCommit(ctx, feed)
		res.Stages.Snapshot = time.Since(t0)
		res.SnapshotFromMemory = feed.used
		return err
	})
	return res, err
}

// updater is the state of one update run under the lock.
type updater struct {
	feed *viewFeed // the view of the rows merged, for the locate snapshot
	fi   *FileIndex
	opts UpdateOptions
	res  *UpdateResult
	s    *session
	// sinceConsolidation counts batches staged since the last merge;
	// sinceCompact is batches_since_compact (§5.3.8), read after the lock
	// and metadata refresh (§9 item 32 fixed).
	sinceConsolidation int
	sinceCompact       int
	// stagedValues counts the inline values staged since the last merge.
	stagedValues int64
	// pending are the batches staged since the last merge (see
	// consolidateStaged), their value arrays released to the summary
	// spill; readBack is set when some batch since the last merge had
	// engine files, whose rows the merge then reads back from staging/.
	pending  []stagedBatch
	readBack bool
}

// stagedValueBudget bounds the inline values staged between merges. A merge
// of new files streams; one that upserts (a backfill, a recovery) holds its
// source rows (the staged arrays) in memory: at ~40 B per value in Go (an interface, the
// boxed value, the writer's copy) 4 M values are ~160 MB. Without it, 50
// batches (stagingConsolidationThreshold) of up to L = 500,000 values per
// column could put 25 M values per column in one merge. An early merge only
// adds a Delta commit; what the index holds is the same.
const stagedValueBudget = 4_000_000

func (fi *FileIndex) update(ctx context.Context, opts UpdateOptions, res *UpdateResult, feed *viewFeed) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := fi.ix.Metadata()
	u := &updater{fi: fi, opts: opts, res: res, sinceCompact: m.BatchesSinceCompact, feed: feed}

	// Step 4: stale staging recovery.
	if opts.RetryQuarantined {
		if err := fi.setQuarantined(ctx, nil); err != nil {
			return err
		}
	}
	recovered, err := fi.consolidateStaged(ctx, nil, nil, &res.Quarantined)
	if err != nil {
		return fmt.Errorf("fileindex: staging recovery: %w", err)
	}
	if recovered {
		res.RecoveredStaging = true
		res.Consolidations++
		if err := u.afterMerge(ctx); err != nil {
			return err
		}
		fi.updProgress(Progress{Phase: "recover", Done: 1, Total: 1})
	}

	if opts.Summaries != nil {
		// Summary tables a dead attempt's engine wrote (summary_table.go).
		if err := fi.sweepSummaryTables(ctx); err != nil {
			return err
		}
	}

	m = fi.ix.Metadata() // recovery may have registered auto-bloom columns
	src, err := fi.ix.StoredSchema()
	if err != nil {
		return err
	}
	db, tmp, err := openEngine(ctx)
	if err != nil {
		return err
	}
	s := &session{fi: fi, db: db, tmp: tmp}
	switch {
	case opts.ReadCacheBytes == 0:
		s.cache.budget = DefaultReadCacheBytes
	case opts.ReadCacheBytes > 0:
		s.cache.budget = opts.ReadCacheBytes
	}
	switch {
	case opts.SummaryMemoryBytes > 0:
		s.budget = opts.SummaryMemoryBytes
	default:
		s.budget = DefaultSummaryMemoryBytes
	}
	s.workers = opts.Concurrency
	if s.workers <= 0 {
		s.workers = defaultReadConcurrency()
	}
	defer s.close()
	defer func() { res.Stages = s.stats.export() }()
	u.s = s
	ctypes, err := computedTypes(ctx, db, m, src)
	if err != nil {
		return err
	}
	if s.plan, err = newBuildPlan(m, src, ctypes, fi.cfg.LargeIndexLimit, fi.cfg.AutoBloomFPR); err != nil {
		return err
	}
	if s.read, err = datafile.Compile(datafile.Spec{Format: m.Format, Schema: src, Options: s.plan.readOpts}, s.plan.readColumns); err != nil {
		return err
	}
	if opts.Summaries != nil {
		if s.sum, err = remoteSummaryPlan(s.plan); err != nil {
			return err
		}
	} else if !opts.engineOnly {
		if sp, ok := newSummaryPlan(s.plan, s.read.Schema()); ok {
			s.sum = sp
			if s.read.Format() == datafile.Parquet && !opts.rowsOnly {
				s.typed = sp.typedPlan(s.read.Schema())
			}
		}
	}

	// Step 5: column backfill; step 6: new files.
	ms, err := fi.readMainState(ctx)
	if err != nil {
		return err
	}
	if files := filesNeedingColumnUpdate(s.plan, ms); len(files) > 0 {
		n, err := u.indexFiles(ctx, files)
		if err != nil {
			return err
		}
		res.BackfilledFiles = n
		if ms, err = fi.readMainState(ctx); err != nil {
			return err
		}
	}
	tracked, err := fi.ix.Files(ctx)
	if err != nil {
		return err
	}
	quarantined, err := fi.Quarantined(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(tracked))
	for _, e := range tracked {
		if !slices.ContainsFunc(quarantined, func(q QuarantinedFile) bool { return q.File == e.Name }) {
			names = append(names, e.Name)
		}
	}
	if files := unindexedFiles(names, ms); len(files) > 0 {
		n, err := u.indexFiles(ctx, files)
		if err != nil {
			return err
		}
		res.NewFiles = n
	}

	// Steps 7 and 8: the size total, the batch counter. After a merge the
	// total was recomputed (afterMerge); without one, the main table is
	// unchanged since readMainState summed its file_size, which also
	// repairs a total left stale by a crash after the last merge.
	return fi.ix.UpdateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
		changed := m.BatchesSinceCompact != u.sinceCompact
		m.BatchesSinceCompact = u.sinceCompact
		if res.Consolidations == 0 && ms.exists && m.TotalIndexedFileSize != ms.sizeSum {
			m.TotalIndexedFileSize = ms.sizeSum
			changed = true
		}
		return changed, nil
	})
}

// indexFiles analyses, batches, builds and stages files (§5.3.3), with
// periodic and final consolidation. It returns how many files it indexed.
//
// Backfill and new files take the same path; sizes are never added per
// batch but recomputed from the main table after each merge (§5.15, see
// consolidate).
func (u *updater) indexFiles(ctx context.Context, uris []string) (int, error) {
	fi, s := u.fi, u.s
	files, missing, err := s.statFiles(ctx, uris)
	if err != nil {
		return 0, err
	}
	u.res.Skipped = append(u.res.Skipped, missing...)
	defer s.dropCache(context.WithoutCancel(ctx))
	// Read and summarise in Go what the Go summaries cover; the engine
	// analyses the rest (§5.3.1).
	engine := files
	if u.opts.Summaries != nil {
		fi.updProgress(Progress{Phase: "summarize", Done: 0, Total: len(files)})
		t0 := time.Now()
		err := s.summarizeOn(ctx, u.opts.Summaries, u.opts.SummaryTables, u.opts.SummaryBatchFiles, files, func(phase string, done int, bytes int64) {
			fi.updProgress(Progress{Phase: phase, Done: done, Total: len(files), Bytes: bytes})
		})
		s.stats.readWall += time.Since(t0)
		if err != nil {
			return 0, err
		}
		u.res.SummarizedBy += len(files)
		engine = nil
	} else if s.sum != nil {
		fi.updProgress(Progress{Phase: "read", Done: 0, Total: len(files)})
		engine, err = s.summarize(ctx, files, func(phase string, done int, bytes int64) {
			fi.updProgress(Progress{Phase: phase, Done: done, Total: len(files), Bytes: bytes})
		})
		if err != nil {
			return 0, err
		}
	}
	u.res.EngineFiles += len(engine)
	u.res.TypedFiles = s.stats.typed
	if len(engine) > 0 {
		t0 := time.Now()
		fi.updProgress(Progress{Phase: "analyze", Done: 0, Total: len(engine)})
		err = s.analyze(ctx, engine, func(done int, bytes int64) {
			fi.updProgress(Progress{Phase: "analyze", Done: done, Total: len(engine), Bytes: bytes})
		})
		s.stats.analyze += time.Since(t0)
		if err != nil {
			return 0, err
		}
	}
	batches := createOptimalBatches(files, s.plan.largeL, len(s.plan.storage) > 0)
	threshold := fi.cfg.StagingConsolidationThreshold
	if threshold <= 0 {
		threshold = 50
	}
	var bytes int64
	for bi, batch := range batches {
		t0 := time.Now()
		br, err := s.buildBatch(ctx, batch)
		if err != nil {
			return 0, err
		}
		t1 := time.Now()
		s.stats.build += t1.Sub(t0)
		if err := fi.stageBatch(ctx, br, uuid.NewString(), u.opts.Now()); err != nil {
			return 0, err
		}
		// Batches with engine files keep their rows until the merge only
		// through staging/: their arrays cannot be restored from the spill.
		if sb, ok := s.release(br, batch); ok && !u.readBack {
			u.pending = append(u.pending, sb)
		} else {
			u.pending, u.readBack = nil, true
		}
		u.res.Batches++
		u.sinceConsolidation++
		u.sinceCompact++
		u.stagedValues += br.values
		bytes += br.bytes
		u.res.Bytes += br.bytes
		// §5.3.4 step 9: persist the batch's auto-bloom detections (and
		// the batch counter) only after staging succeeded.
		detected := br.detected
		if err := fi.ix.UpdateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
			changed := m.BatchesSinceCompact != u.sinceCompact
			m.BatchesSinceCompact = u.sinceCompact
			for _, c := range detected {
				if !slices.Contains(m.AutoBloomIndexes, c) {
					m.AutoBloomIndexes = append(m.AutoBloomIndexes, c)
					changed = true
				}
			}
			return changed, nil
		}); err != nil {
			return 0, err
		}
		for _, c := range detected {
			if !slices.Contains(s.plan.autoBloom, c) {
				s.plan.autoBloom = append(s.plan.autoBloom, c)
				u.res.AutoBloomDetected = append(u.res.AutoBloomDetected, c)
			}
		}
		s.stats.stage += time.Since(t1)
		fi.updProgress(Progress{Phase: "stage", Done: bi + 1, Total: len(batches), Bytes: bytes})
		if u.sinceConsolidation >= threshold || u.stagedValues >= stagedValueBudget {
			if err := u.consolidate(ctx); err != nil {
				return 0, err
			}
		}
	}
	if u.sinceConsolidation > 0 {
		if err := u.consolidate(ctx); err != nil {
			return 0, err
		}
	}
	return len(files), nil
}

// consolidate merges staging into the main table, recomputes the size
// total from it, and auto-compacts when due (§5.3.6, §5.3.8).
//
// total_indexed_file_size is recomputed as the sum of the main table's
// file_size after each merge rather than incremented per batch (§5.3.4 step
// 8): the sum is what §5.15 requires, and recomputing it keeps it exact
// after a crash between a staging commit and a metadata write, and when a
// file is re-indexed (§9 item 5).
func (u *updater) consolidate(ctx context.Context) error {
	fi := u.fi
	fi.updProgress(Progress{Phase: "merge", Done: 0, Total: 1})
	t0 := time.Now()
	pending := u.pending
	u.pending, u.readBack = nil, false
	if _, err := fi.consolidateStaged(ctx, pending, u.feed, &u.res.Quarantined); err != nil {
		return err
	}
	if u.s != nil {
		defer func() { u.s.stats.merge += time.Since(t0) }()
	}
	u.sinceConsolidation, u.stagedValues = 0, 0
	u.res.Consolidations++
	if err := u.afterMerge(ctx); err != nil {
		return err
	}
	fi.updProgress(Progress{Phase: "merge", Done: 1, Total: 1})
	return nil
}

// afterMerge auto-compacts when due and persists the recomputed size total
// and the batch counter.
func (u *updater) afterMerge(ctx context.Context) error {
	fi := u.fi
	compact := fi.cfg.HasAutoCompact && u.sinceCompact >= fi.cfg.AutoCompactThreshold
	if compact {
		if err := fi.updAutoCompact(ctx); err != nil {
			return err
		}
		u.sinceCompact = 0
		u.res.Compactions++
	}
	total, _, err := fi.updMainSizeTotal(ctx)
	if err != nil {
		return err
	}
	staged, err := fi.stagedAutoBloom(ctx)
	if err != nil {
		return err
	}
	return fi.ix.UpdateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
		changed := m.TotalIndexedFileSize != total || m.BatchesSinceCompact != u.sinceCompact
		m.TotalIndexedFileSize = total
		m.BatchesSinceCompact = u.sinceCompact
		// A batch whose staging commit succeeded but whose metadata write
		// did not (a crash in between) carries its auto-bloom detection in
		// its auto_bloom_<c> column: register it now, so the index ends as
		// an uninterrupted update leaves it.
		storage := metadata.StorageColumns(m)
		temporal := map[string]bool{}
		for _, tc := range m.TemporalIndexes {
			temporal[tc.Column] = true
		}
		for _, c := range staged {
			if slices.Contains(storage, c) && !temporal[c] && !slices.Contains(m.AutoBloomIndexes, c) {
				m.AutoBloomIndexes = append(m.AutoBloomIndexes, c)
				changed = true
			}
		}
		return changed, nil
	})
}

// progress reports to Options.Progress, if set.
func (fi *FileIndex) updProgress(p Progress) {
	if fi.opts.Progress != nil {
		fi.opts.Progress(p)
	}
}
