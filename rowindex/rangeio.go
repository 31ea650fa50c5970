package rowindex

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ariadne-go/ariadne/internal/bufpool"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/store"
)

// object names one object of one store.
type object struct {
	st  store.Store
	key string
	uri string // for messages
}

// meter counts the storage requests and bytes of one operation. Every read
// the row index issues goes through readRange, so a Plan's figures are the
// store's figures.
type meter struct {
	requests  atomic.Int64 // ranged reads, lists and stats issued
	bytes     atomic.Int64 // bytes received
	misses    atomic.Int64 // reads that fell through the prefetched ranges
	missBytes atomic.Int64
	hits      atomic.Int64 // cache hits (metadata, dictionaries, index blocks)
	pages     atomic.Int64 // data pages decoded
	pageHits  atomic.Int64 // data pages served decoded from the page cache
	frames    atomic.Int64 // ZSTD frames of framed files decoded (also in pages)
}

// readRange issues exactly one ranged read of n bytes at off. A short object
// is io.ErrUnexpectedEOF.
func readRange(ctx context.Context, m *meter, o object, off, n int64) ([]byte, error) {
	return readRangeInto(ctx, m, o, off, make([]byte, n))
}

// readRangeInto is readRange into buf (of the n bytes to read).
func readRangeInto(ctx context.Context, m *meter, o object, off int64, buf []byte) ([]byte, error) {
	m.requests.Add(1)
	rc, err := o.st.NewRangeReader(ctx, o.key, off, int64(len(buf)))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	got, err := io.ReadFull(rc, buf)
	m.bytes.Add(int64(got))
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return buf[:got], err
	}
	return buf, nil
}

// brange is a byte range [off, end).
type brange struct{ off, end int64 }

// coalesce sorts ranges and merges those that overlap or lie within gap bytes
// of each other.
func coalesce(rs []brange, gap int64) []brange {
	if len(rs) == 0 {
		return nil
	}
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b brange) int {
		if a.off != b.off {
			if a.off < b.off {
				return -1
			}
			return 1
		}
		return 0
	})
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.off <= last.end+gap {
			last.end = max(last.end, r.end)
			continue
		}
		out = append(out, r)
	}
	return out
}

// span is a fetched byte range of one object.
type span struct {
	off  int64
	data []byte
}

func (s span) end() int64 { return s.off + int64(len(s.data)) }

// spans is a set of spans sorted by offset, not overlapping.
type spans []span

// add inserts s, keeping the order; overlapping spans are kept (serve reads
// from the first that covers an offset).
func (ss *spans) add(s span) {
	i, _ := slices.BinarySearchFunc(*ss, s.off, func(a span, off int64) int {
		switch {
		case a.off < off:
			return -1
		case a.off > off:
			return 1
		}
		return 0
	})
	*ss = slices.Insert(*ss, i, s)
}

// serve copies into p the bytes at off that the spans hold contiguously and
// returns how many it copied.
func (ss spans) serve(p []byte, off int64) int {
	n := 0
	for n < len(p) {
		at := off + int64(n)
		// Last span starting at or before at.
		i, found := slices.BinarySearchFunc(ss, at, func(a span, off int64) int {
			switch {
			case a.off < off:
				return -1
			case a.off > off:
				return 1
			}
			return 0
		})
		if !found {
			i--
		}
		progressed := false
		for j := i; j >= 0; j-- { // spans may overlap: any earlier one may cover at
			if s := ss[j]; s.off <= at && at < s.end() {
				n += copy(p[n:], s.data[at-s.off:])
				progressed = true
				break
			}
		}
		if !progressed {
			break
		}
	}
	return n
}

// slice returns the n bytes at off without copying, when one span holds
// them all.
func (ss spans) slice(off, n int64) ([]byte, bool) {
	i, found := slices.BinarySearchFunc(ss, off, func(a span, off int64) int {
		switch {
		case a.off < off:
			return -1
		case a.off > off:
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	for j := i; j >= 0; j-- {
		if s := ss[j]; s.off <= off && off+n <= s.end() {
			return s.data[off-s.off : off-s.off+n : off-s.off+n], true
		}
	}
	return nil, false
}

// errOutsideSpans is returned by a pageReader without fall-through when
// parquet-go reads bytes that were not prefetched (typically its read-ahead
// past the last page needed). It is only an error if those bytes are needed.
var errOutsideSpans = errors.New("rowindex: read outside prefetched ranges")

// pageReader is the io.ReaderAt handed to parquet-go's page reader for one
// data file during one operation. It serves the prefetched spans; a read
// outside them either fails with errOutsideSpans (the default: parquet-go's
// buffered reader reads ahead past the last needed page, and those bytes are
// never used) or, with fallThrough set, becomes one counted ranged read (a
// miss).
type pageReader struct {
	ctx         context.Context
	m           *meter
	obj         object
	sp          spans
	fallThrough bool
	outside     atomic.Bool // a read was cut short at the prefetched ranges
	// chunks are the file's chunk ranges (fileMeta.chunks; nil: unknown),
	// for pqrow.GuardPages.
	chunks *pqrow.ChunkSpans
}

// ChunkSpans gives pqrow.GuardPages the file's chunk ranges.
func (r *pageReader) ChunkSpans() *pqrow.ChunkSpans { return r.chunks }

func (r *pageReader) ReadAt(p []byte, off int64) (int, error) {
	n := r.sp.serve(p, off)
	if n == len(p) {
		return n, nil
	}
	if !r.fallThrough {
		r.outside.Store(true)
		return n, errOutsideSpans
	}
	rest := int64(len(p) - n)
	b, err := readRange(r.ctx, r.m, r.obj, off+int64(n), rest)
	r.m.misses.Add(1)
	r.m.missBytes.Add(int64(len(b)))
	n += copy(p[n:], b)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// fetch is one ranged read to issue.
type fetch struct {
	obj  object
	r    brange
	data []byte // filled by fetchAll
	// err is why f was not read (data nil): its read's error, or its
	// batch's (fetchAll). A fetch the first error cancelled before it
	// was read has none: this tells the failed file from the others.
	err error
	// pooled: data is read into a pooled buffer (bufpool.Get), which the
	// caller gives back with releaseFetches once nothing points into it.
	pooled bool
}

// releaseFetches gives the pooled buffers of fs back; their data must no
// longer be used.
func (ri *RowIndex) releaseFetches(fs []*fetch) {
	for _, f := range fs {
		if f.pooled && f.data != nil {
			ri.putBuf(f.data)
			f.data = nil
		}
	}
}

// maxConcurrentReads bounds the reads in flight for one operation. A warm
// lookup issues about one coalesced range per data file holding the key, and
// a hot key of a daily-partitioned lake is in every file (120 in the
// benchmark lake, 365 for a year): 256 keeps such a lookup to one round trip
// up to 256 files, well under the thousands of parallel GETs per prefix that
// object stores serve, while bounding goroutines and file descriptors on
// local disk.
const maxConcurrentReads = 256

// fetchAll issues every fetch concurrently (at most maxConcurrentReads at a
// time). With batch, the fetches of one object in a store that reads ranges
// in a batch (store.BatchesRanges: the file store) are one task, read in
// order with one stat and handle (each still one request); the rest are a
// task each. The build passes batch false: the file store copies a batch
// out of a mapping of the file, whose touched pages stay resident (RssFile)
// while the handle is cached, and the build's resident memory is bounded by
// its budget. The first error cancels the rest and is returned.
func fetchAll(ctx context.Context, m *meter, fs []*fetch, batch bool) error {
	return fetchEach(ctx, m, fs, batch, nil)
}

// fetchEach is fetchAll calling read, when not nil, on the goroutine that
// read each fetch, as soon as its data is set (a lookup starts decoding a
// file while others are still being read).
func fetchEach(ctx context.Context, m *meter, fs []*fetch, batch bool, read func(*fetch)) error {
	if len(fs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tasks := make([][]*fetch, 0, len(fs))
	var byObj map[object]int
	for _, f := range fs {
		if batch && store.BatchesRanges(f.obj.st) {
			if byObj == nil {
				byObj = map[object]int{}
			}
			if i, ok := byObj[f.obj]; ok {
				tasks[i] = append(tasks[i], f)
				continue
			}
			byObj[f.obj] = len(tasks)
		}
		tasks = append(tasks, []*fetch{f})
	}
	var (
		wg      sync.WaitGroup
		once    sync.Once
		firstEr error
		sem     = make(chan struct{}, maxConcurrentReads)
	)
	do := func(t []*fetch) {
		var err error
		// A batch of one fetch (a light key's one range in a co-grouped
		// file) is still read as a batch: one stat per handle per
		// recheck window instead of a stat per read.
		if len(t) == 1 && !(batch && store.BatchesRanges(t[0].obj.st)) {
			err = t[0].read(ctx, m)
		} else {
			err = readBatch(ctx, m, t)
		}
		if err != nil {
			once.Do(func() { firstEr = err; cancel() })
			return
		}
		if read != nil {
			for _, f := range t {
				read(f)
			}
		}
	}
	if byObj != nil && len(byObj) == len(tasks) {
		// Every task is a batch of a store that reads ranges in a batch
		// (local files: a copy out of the page cache, microseconds): a
		// few workers, the caller one of them, take the next task. A
		// goroutine per file (≈30 for a light lookup) cost more in
		// creation and wake-ups than the copies.
		eachOnWorkers(len(tasks), batchReadWorkers, func(i int) { do(tasks[i]) })
		return firstEr
	}
	for _, t := range tasks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			do(t)
		}()
	}
	wg.Wait()
	return firstEr
}

// eachOnWorkers calls fn(i) for every i in [0, n) on at most workers
// goroutines, the caller one of them, each taking the next i; it returns
// when all are done.
func eachOnWorkers(n, workers int, fn func(i int)) {
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range min(workers, n) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

// batchReadWorkers is how many goroutines read the batches of a store that
// reads ranges in a batch (fetchAll): enough to overlap a few page-cache
// misses of local files, without a goroutine per file.
const batchReadWorkers = 4

// buffer returns the buffer f is read into: pooled when f.pooled.
func (f *fetch) buffer() []byte {
	if f.pooled {
		return bufpool.Get(int(f.r.end - f.r.off))
	}
	return make([]byte, f.r.end-f.r.off)
}

// read issues f as one ranged read, setting f.data when it succeeds.
func (f *fetch) read(ctx context.Context, m *meter) error {
	buf := f.buffer()
	b, err := readRangeInto(ctx, m, f.obj, f.r.off, buf)
	if err != nil {
		if f.pooled {
			bufpool.Put(buf)
		}
		f.err = err
		return err
	}
	f.data = b
	return nil
}

// readBatch reads fetches of one object with store.ReadRanges, counting
// each as one request, and sets the data of those read whole.
func readBatch(ctx context.Context, m *meter, t []*fetch) error {
	offs := make([]int64, len(t))
	bufs := make([][]byte, len(t))
	for i, f := range t {
		offs[i], bufs[i] = f.r.off, f.buffer()
	}
	m.requests.Add(int64(len(t)))
	ns, err := store.ReadRanges(ctx, t[0].obj.st, t[0].obj.key, offs, bufs)
	whole := true // every range before this one was read whole
	for i, f := range t {
		m.bytes.Add(int64(ns[i]))
		if whole = whole && ns[i] == len(bufs[i]); whole {
			f.data = bufs[i]
		} else {
			f.err = err
			if f.pooled {
				bufpool.Put(bufs[i])
			}
		}
	}
	return err
}
