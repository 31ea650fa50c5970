package rowindex

import (
	"bytes"
	"context"
	"sync"
)

// WarmProgress reports a Warm's advance. Step is "fragments" (fragment
// files read), "footers" (data files whose metadata is loaded), "resident"
// (fragment row groups made resident, or found full) or "shapes" (data
// files whose pages' shapes are learnt, Options.ShapeBytes); Done of Total
// counts its units, Bytes what the Warm has read so far.
type WarmProgress struct {
	Step        string
	Done, Total int
	Bytes       int64
}

// WarmOption configures one Warm.
type WarmOption func(*warmConfig)

type warmConfig struct {
	progress func(WarmProgress)
}

// WithWarmProgress makes Warm report its advance to fn after each unit of
// each step (one call at a time: fn need not lock; a slow fn slows Warm).
func WithWarmProgress(fn func(WarmProgress)) WarmOption {
	return func(c *warmConfig) { c.progress = fn }
}

// warmReporter calls a Warm's progress function, one call at a time.
type warmReporter struct {
	mu sync.Mutex
	fn func(WarmProgress)
	m  *meter
}

// counter returns a function that counts one more of total units of step
// done and reports it (nothing without a progress function); workers may
// call it concurrently, the counts reported still rise one by one.
func (r *warmReporter) counter(step string, total int) func() {
	done := 0
	return func() {
		if r.fn == nil {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		done++
		r.fn(WarmProgress{Step: step, Done: done, Total: total, Bytes: r.m.bytes.Load()})
	}
}

// Warm loads into the cache every fragment row group (one read per
// fragment file) and the metadata of every data file (dictionary pages are
// cached by the first lookup that reads them; the frame tables of framed
// files are checked against their pages), within the cache budget, then
// makes fragment row groups resident for point lookups within
// Options.ResidentBytes (resident.go), then, within Options.ShapeBytes,
// loads saved shape files and learns the shapes of the data pages that
// lookups may read in parts (shapes.go: a read of those pages; by default
// only of files on local stores). It returns the cost.
func (ri *RowIndex) Warm(ctx context.Context, opts ...WarmOption) (Cost, error) {
	var cfg warmConfig
	for _, o := range opts {
		o(&cfg)
	}
	m := new(meter)
	rep := &warmReporter{fn: cfg.progress, m: m}
	man, _ := ri.snapshot()
	fragmentRead := rep.counter("fragments", len(man.Fragments))
	for i := range man.Fragments {
		// One read per fragment file, cut into its groups.
		fr := &man.Fragments[i]
		if _, err := ri.fragmentMeta(ctx, m, fr); err != nil {
			return m.cost(), err
		}
		o := object{st: ri.st, key: folderOf(ri.name) + fr.Path, uri: fr.Path}
		b, err := readRange(ctx, m, o, 0, fr.Size)
		if err != nil {
			return m.cost(), ri.fragmentErr(fr, err)
		}
		for gi, g := range fr.Groups {
			if g.Offset+g.Length > int64(len(b)) {
				return m.cost(), ri.fragmentErr(fr, corrupt("group %d beyond its end", gi))
			}
			ri.cache.put(fragGroupKey{fr.Path, gi}, bytes.Clone(b[g.Offset:g.Offset+g.Length]), g.Length+64)
		}
		fragmentRead()
	}
	footerRead := rep.counter("footers", len(man.Files))
	for i := range man.Files {
		fm, _, err := ri.dataMeta(ctx, m, &man.Files[i])
		if err != nil {
			return m.cost(), err
		}
		// The frames of a file the cache kept (one past the budget is
		// loaded again by the lookup that needs it, and checked then).
		if v, ok := ri.cache.get(dataMetaKey{man.Files[i].ID}); ok && v == any(fm) {
			if err := fm.checkAllFrames(ctx); err != nil {
				return m.cost(), err
			}
		}
		footerRead()
	}
	if err := ri.makeResident(ctx, m, man, rep); err != nil {
		return m.cost(), err
	}
	// The shape files' listing too, so that a warmed handle's lookups make
	// no index request (a lookup would start it otherwise).
	ri.shapeFiles(ctx, m)
	if err := ri.learnShapes(ctx, m, man, rep); err != nil {
		return m.cost(), err
	}
	return m.cost(), nil
}
