package fileindex

import (
	"cmp"
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"
)

// DefaultSummaryMemoryBytes is the memory the Go summaries of the files
// being read may take when UpdateOptions.SummaryMemoryBytes is 0: the
// distinct value sets of the files in flight (≈ 64 B per distinct integer,
// 112 B per distinct string plus its bytes). A file whose sets outgrow its
// share (the budget divided by the files read at once) is summarised by the
// engine instead, which spills: memory stays bounded whatever a file holds.
// 256 MiB holds about 2 million distinct values per file with two files
// in flight; the benchmark lake's files hold about 100,000.
const DefaultSummaryMemoryBytes = 256 << 20

// maxReadConcurrency caps the default number of files read at once.
const maxReadConcurrency = 8

// spillRef locates a block of the summary spill file.
type spillRef struct {
	off int64
	n   int
}

// spillFile holds the encoded cells and filters of summarised files until
// their batch is built. Global batching (§5.3.2) needs every file's counts
// before the first batch, so summaries wait; on disk they cost the size of
// the index payload (a few bytes per distinct value), not memory. Written
// by the updating goroutine only; read by the batch builds.
type spillFile struct {
	f   *os.File
	off int64
}

func newSpillFile(dir string) (*spillFile, error) {
	f, err := os.CreateTemp(dir, "summaries-*")
	if err != nil {
		return nil, err
	}
	return &spillFile{f: f}, nil
}

// write appends b and returns its offset.
func (s *spillFile) write(b []byte) (int64, error) {
	off := s.off
	if _, err := s.f.WriteAt(b, off); err != nil {
		return 0, err
	}
	s.off += int64(len(b))
	return off, nil
}

// read returns the block at r.
func (s *spillFile) read(r spillRef) ([]byte, error) {
	b := make([]byte, r.n)
	if _, err := s.f.ReadAt(b, r.off); err != nil {
		return nil, err
	}
	return b, nil
}

func (s *spillFile) close() {
	if s != nil {
		s.f.Close()
	}
}

// summarized is one worker's result for one file.
type summarized struct {
	i     int
	sum   *fileSummary
	buf   []byte
	err   error
	stats readStats
}

// summarize reads and summarises files concurrently (workers at a time,
// each within its share of the memory budget; each file read ahead of its
// summariser by a goroutine of its own) and spills their cells. Progress
// reports "read" as files are read through and "summarize" as their
// summaries are spilled. It
// returns the files that must go to the engine instead (their value sets
// outgrew the budget). Progress and the spill writes happen on the calling
// goroutine, in completion order.
func (s *session) summarize(ctx context.Context, files []*fileAnalysis, progress func(phase string, done int, bytes int64)) (engine []*fileAnalysis, err error) {
	if len(files) == 0 {
		return nil, nil
	}
	if !s.sum.reads() {
		// No index needs data: a file's row is its name and size.
		for _, a := range files {
			a.sum = &fileSummary{}
		}
		return nil, nil
	}
	if s.spill == nil {
		if s.spill, err = newSpillFile(s.tmp); err != nil {
			return nil, err
		}
	}
	workers := min(s.workers, len(files))
	limit := s.budget / int64(workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	results := make(chan summarized, workers)
	reads := make(chan int, len(files)) // files read through (never blocks)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			var hints *setHints
			for i := range next {
				res := summarized{i: i}
				res.sum, res.buf, res.err = s.summarizeFile(ctx, files[i], limit, buf[:0], &res.stats, &hints, func() { reads <- i })
				select {
				case results <- res:
				case <-ctx.Done():
					return
				}
				// The buffer is the collector's until it was written:
				// start a new one (the spill write copies it to disk).
				buf = nil
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range files {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	done, bytes := 0, int64(0)
	nread, readBytes := 0, int64(0)
	drainReads := func() {
		for {
			select {
			case i := <-reads:
				nread++
				readBytes += files[i].Size
				if err == nil {
					progress("read", nread, readBytes)
				}
			default:
				return
			}
		}
	}
	start := time.Now()
	for res := range results {
		drainReads()
		a := files[res.i]
		s.stats.read += res.stats.read
		s.stats.summarize += res.stats.summarize
		if res.err == nil {
			s.stats.typed += res.stats.typed
		}
		switch {
		case errors.Is(res.err, errOverflow):
			engine = append(engine, a)
		case res.err != nil:
			if err == nil {
				err = res.err
				cancel()
			}
			continue
		default:
			base, werr := s.spill.write(res.buf)
			if werr != nil && err == nil {
				err = werr
				cancel()
				continue
			}
			for i := range res.sum.storage {
				res.sum.storage[i].off += base
			}
			for i := range res.sum.blooms {
				res.sum.blooms[i].off += base
			}
			a.sum = res.sum
		}
		done++
		bytes += a.Size
		if err == nil {
			progress("summarize", done, bytes)
		}
	}
	drainReads()
	s.stats.readWall += time.Since(start)
	if err != nil {
		return nil, err
	}
	// Keep FileList order among the engine's files.
	sortByPosition(engine, files)
	return engine, nil
}

// sortByPosition orders sub as the files appear in all.
func sortByPosition(sub, all []*fileAnalysis) {
	if len(sub) < 2 {
		return
	}
	pos := make(map[*fileAnalysis]int, len(all))
	for i, a := range all {
		pos[a] = i
	}
	slices.SortFunc(sub, func(a, b *fileAnalysis) int { return cmp.Compare(pos[a], pos[b]) })
}

// defaultReadConcurrency is the number of files read at once: one per
// core (reading and summarising are CPU-bound on local files), at most
// maxReadConcurrency.
func defaultReadConcurrency() int {
	return max(1, min(runtime.GOMAXPROCS(0), maxReadConcurrency))
}
