package rowindex

import (
	"bytes"
	"context"
	"errors"
	"math"
	"runtime"
	"sort"
	"sync/atomic"
)

// Resident groups: a point lookup on a fragment row group that is not
// resident decompresses the key's pages of every fragment column and walks
// the group's integers to imply row numbers (pointread.go), ≈0.2 ms of CPU
// per group on a warm handle: half of a light lookup on prepared files.
// Warm decodes groups once more into a compact form instead, the group's
// distinct keys sorted with each key's entries beside them as integer
// columns packed in the bits their values span (3–16 bytes per entry
// against ≈100 for []entry), so a point
// lookup on a resident group is a binary search and a copy of its entries.
// They are kept in their own set (Options.ResidentBytes), which only Warm
// fills: lookups never evict them for other work, and a group past the
// budget keeps the point path.

// AutoResidentBytes' estimate of a resident group: residentBytesPerEntry
// per entry (the four integers packed, ≈4 bytes on a lake of a hundred
// files, and per distinct key its bytes and ≈2 of offsets: 3.3 bytes an
// entry measured on the 1 GB arrival-order lake, whose groups repeat keys,
// 3.6 on a 256 MB co-grouped one, ≈14 when every key is a distinct
// integer), and residentBytesPerStored per byte of the fragments, for what
// grows with them (longer keys, covers; a cover that compresses more than
// that needs Options.ResidentBytes set).
const (
	residentBytesPerEntry  = 16
	residentBytesPerStored = 4
)

// MaxAutoResidentBytes caps AutoResidentBytes: the 1 GB arrival-order
// lake's index (25.5M entries) is resident whole in 85 MB, and so would be
// a lake of about three times as many entries; past the budget, Warm makes
// resident the groups it holds, in about manifest order.
const MaxAutoResidentBytes = 256 << 20

// AutoResidentBytes is the resident budget of a row index version when
// none is set: enough for every group by the estimate above, at most
// MaxAutoResidentBytes.
func AutoResidentBytes(m *Manifest) int64 {
	var need int64
	for _, f := range m.Fragments {
		// A manifest's word, bounded: huge counts cannot wrap the sum.
		need += min(max(f.Entries, 0), MaxAutoResidentBytes)*residentBytesPerEntry +
			min(max(f.Size, 0), MaxAutoResidentBytes)*residentBytesPerStored
		need = min(need, MaxAutoResidentBytes)
	}
	return need
}

// residentSet holds the resident groups of a handle, by fragment path and
// group, within a budget (only Warm adds).
type residentSet = budgetSet[fragDecodedKey, *residentGroup]

func newResidentSet(budget int64) *residentSet {
	return newBudgetSet[fragDecodedKey, *residentGroup](budget)
}

// fragmentPaths returns the paths of m's fragments, as a set.
func (m *Manifest) fragmentPaths() map[string]bool {
	paths := make(map[string]bool, len(m.Fragments))
	for i := range m.Fragments {
		paths[m.Fragments[i].Path] = true
	}
	return paths
}

// keepFragments drops the groups of fragments not in paths (a Refresh
// replaced them).
func keepFragments(s *residentSet, paths map[string]bool) {
	s.keepOnly(func(k fragDecodedKey) bool { return paths[k.path] })
}

// residentGroup is one fragment row group decoded for point lookups. Key
// i's bytes are keys[keyEnds[i-1]:keyEnds[i]] (keys ascending bytewise,
// each once), or keys[i×keyWidth:(i+1)×keyWidth] when every key has
// keyWidth bytes (keyEnds nil: an integer key column), and its entries, in
// lookup order, are [firsts[i], firsts[i+1]) of the entry columns, each
// packed in as few bits as its values span (packedInts: ≈4 bytes an entry
// where []int32 and []uint32 columns took 16). Immutable once built:
// lookups share it without a lock.
type residentGroup struct {
	keys     []byte
	keyEnds  []uint32
	keyWidth int
	nkeys    int
	firsts   packedInts
	file     packedInts
	rg       packedInts
	row      packedInts
	n        packedInts
	// cover is nil when no entry has a cover; entry j's is
	// cover[coverEnds[j-1]:coverEnds[j]].
	cover     []byte
	coverEnds []uint32
}

// newResidentGroup builds the resident form of a group's entries, given in
// lookup order (decodeGroup: entries of one key side by side). ok is false
// when the entries cannot be held (offsets past 32 bits, or a key's entries
// apart, which lookup order rules out): the group keeps the point path.
func newResidentGroup(es []entry) (g *residentGroup, ok bool) {
	n := len(es)
	if n >= math.MaxInt32 {
		return nil, false
	}
	var keyBytes, coverBytes int
	distinct := 0
	for i := range es {
		if i == 0 || !bytes.Equal(es[i].Key, es[i-1].Key) {
			distinct++
			keyBytes += len(es[i].Key)
		}
		coverBytes += len(es[i].Cover)
	}
	if keyBytes >= math.MaxUint32 || coverBytes >= math.MaxUint32 {
		return nil, false
	}
	// Runs of one key, to be ordered by key bytes (a hash index's lookup
	// order is bucket first).
	type run struct{ from, to int }
	runs := make([]run, 0, distinct)
	for i := 0; i < n; {
		j := i + 1
		for j < n && bytes.Equal(es[j].Key, es[i].Key) {
			j++
		}
		runs = append(runs, run{i, j})
		i = j
	}
	sort.SliceStable(runs, func(a, b int) bool { return bytes.Compare(es[runs[a].from].Key, es[runs[b].from].Key) < 0 })
	for k := 1; k < len(runs); k++ {
		if bytes.Equal(es[runs[k].from].Key, es[runs[k-1].from].Key) {
			return nil, false
		}
	}
	g = &residentGroup{keys: make([]byte, 0, keyBytes), nkeys: len(runs)}
	fixed := len(runs) > 0
	for _, r := range runs {
		fixed = fixed && len(es[r.from].Key) == len(es[runs[0].from].Key)
	}
	if fixed {
		g.keyWidth = len(es[runs[0].from].Key)
	} else {
		g.keyEnds = make([]uint32, 0, len(runs))
	}
	// Entries in the order of their keys' runs.
	order := make([]int32, 0, n)
	firsts := make([]int64, 0, len(runs)+1)
	for _, r := range runs {
		g.keys = append(g.keys, es[r.from].Key...)
		if !fixed {
			g.keyEnds = append(g.keyEnds, uint32(len(g.keys)))
		}
		firsts = append(firsts, int64(len(order)))
		for i := r.from; i < r.to; i++ {
			order = append(order, int32(i))
		}
	}
	firsts = append(firsts, int64(n))
	g.firsts = packInts(len(firsts), func(i int) int64 { return firsts[i] })
	g.file = packInts(n, func(i int) int64 { return int64(es[order[i]].File) })
	g.rg = packInts(n, func(i int) int64 { return int64(es[order[i]].RG) })
	g.row = packInts(n, func(i int) int64 { return es[order[i]].Row })
	g.n = packInts(n, func(i int) int64 { return es[order[i]].N })
	if coverBytes > 0 {
		g.cover, g.coverEnds = make([]byte, 0, coverBytes), make([]uint32, 0, n)
		for _, i := range order {
			g.cover = append(g.cover, es[i].Cover...)
			g.coverEnds = append(g.coverEnds, uint32(len(g.cover)))
		}
	}
	return g, true
}

// charge is the group's memory as the resident set counts it.
func (g *residentGroup) charge() int64 {
	// 400: the struct's headers and its map entry.
	return 400 + int64(len(g.keys)+len(g.cover)) + 4*int64(len(g.keyEnds)+len(g.coverEnds)) +
		g.firsts.charge() + g.file.charge() + g.rg.charge() + g.row.charge() + g.n.charge()
}

// key returns distinct key i.
func (g *residentGroup) key(i int) []byte {
	if g.keyEnds == nil {
		return g.keys[i*g.keyWidth : (i+1)*g.keyWidth]
	}
	var from uint32
	if i > 0 {
		from = g.keyEnds[i-1]
	}
	return g.keys[from:g.keyEnds[i]]
}

// find returns the entries of key in lookup order (nil when the group has
// none), with Key set to key and Bucket to bucket. Covers share the
// group's memory, as the decoded cache's entries do.
func (g *residentGroup) find(key []byte, bucket int32) []entry {
	r := g.run(key, bucket)
	if r.g == nil {
		return nil
	}
	return g.entries(r.at, r.to, key, bucket)
}

// entries returns entries [from, to) of the group (a key's), with Key set
// to key and Bucket to bucket.
func (g *residentGroup) entries(from, to int, key []byte, bucket int32) []entry {
	out := make([]entry, to-from)
	for k := range out {
		e, j := &out[k], from+k
		e.Bucket, e.Key = bucket, key
		e.File, e.RG = int32(g.file.get(j)), int32(g.rg.get(j))
		e.Row, e.N = g.row.get(j), g.n.get(j)
		if g.cover != nil {
			var c uint32
			if j > 0 {
				c = g.coverEnds[j-1]
			}
			e.Cover = g.cover[c:g.coverEnds[j]:g.coverEnds[j]]
		}
	}
	return out
}

// residentPart is how many of a key's entries in a resident group a
// stream unpacks at a time (residentRun).
const residentPart = 256

// residentRun is the entries [at, to) of a key in a resident group, not yet
// unpacked; the zero value has none.
type residentRun struct {
	g      *residentGroup
	at, to int
	key    []byte
	bucket int32
}

// run returns the run of key's entries in g (empty when g has none), with
// Key set to key and Bucket to bucket.
func (g *residentGroup) run(key []byte, bucket int32) residentRun {
	i := sort.Search(g.nkeys, func(i int) bool { return bytes.Compare(g.key(i), key) >= 0 })
	if i == g.nkeys || !bytes.Equal(g.key(i), key) {
		return residentRun{}
	}
	return residentRun{g: g, at: int(g.firsts.get(i)), to: int(g.firsts.get(i + 1)), key: key, bucket: bucket}
}

// take unpacks the run's next residentPart entries at most (nil at its end).
func (r *residentRun) take() []entry {
	if r.at >= r.to {
		return nil
	}
	n := min(r.to-r.at, residentPart)
	es := r.g.entries(r.at, r.at+n, r.key, r.bucket)
	r.at += n
	return es
}

// residentKey returns the entries of key in group gi of fr when the group
// is resident (ok false otherwise). The caller counts the cache hit, once
// per group.
func (ri *RowIndex) residentKey(man *Manifest, fr *FragmentEntry, gi int, key []byte) (es []entry, ok bool) {
	g, ok := ri.resident.get(fragDecodedKey{fr.Path, gi})
	if !ok {
		return nil, false
	}
	var bucket int32
	if man.Kind != KindSorted {
		bucket = man.BucketHash.bucket(key)
	}
	return g.find(key, bucket), true
}

// ResidentGroups returns how many of the version's fragment row groups are
// resident (Warm made them so, within Options.ResidentBytes), of how many,
// and the bytes they hold.
func (ri *RowIndex) ResidentGroups() (resident, groups int, bytes int64) {
	man, _ := ri.snapshot()
	for i := range man.Fragments {
		groups += len(man.Fragments[i].Groups)
	}
	// The set holds only this version's groups: a Refresh prunes it.
	bytes, resident = ri.resident.stats()
	return resident, groups, bytes
}

// isResident reports whether group gi of fr is resident.
func (ri *RowIndex) isResident(fr *FragmentEntry, gi int) bool {
	_, ok := ri.resident.get(fragDecodedKey{fr.Path, gi})
	return ok
}

// makeResident decodes the groups of man's fragments, in manifest order
// (about: groups are decoded on every core), into the resident set until
// one does not fit its budget (up to one per core is then decoded past the
// budget and dropped). A group that cannot be read or decoded is left
// out: it keeps the point path, whose lookups report the damage
// (*FragmentError) as before, and the groups around it still serve; only a
// cancelled ctx fails.
func (ri *RowIndex) makeResident(ctx context.Context, m *meter, man *Manifest, rep *warmReporter) error {
	type job struct {
		fr *FragmentEntry
		gi int
	}
	if ri.ResidentBudget() == 0 {
		return nil
	}
	var jobs []job
	for i := range man.Fragments {
		fr := &man.Fragments[i]
		for gi := range fr.Groups {
			if !ri.isResident(fr, gi) {
				jobs = append(jobs, job{fr, gi})
			}
		}
	}
	kind, hash := man.Kind, man.BucketHash
	var full atomic.Bool
	groupDone := rep.counter("resident", len(jobs))
	eachOnWorkers(len(jobs), runtime.GOMAXPROCS(0), func(i int) {
		defer groupDone()
		if full.Load() || ctx.Err() != nil {
			return
		}
		if ri.makeGroupResident(ctx, m, jobs[i].fr, jobs[i].gi, kind, hash) == errResidentFull {
			full.Store(true)
		}
	})
	if cur, _ := ri.snapshot(); cur != man {
		// A Refresh ran meanwhile: groups this Warm added for fragments
		// the new version dropped would hold budget no lookup uses.
		keepFragments(ri.resident, cur.fragmentPaths())
	}
	return ctx.Err()
}

// errResidentFull: the resident set has no room for a group.
var errResidentFull = errors.New("rowindex: resident budget spent")

// makeGroupResident decodes group gi of fr whole and keeps its resident
// form, if it decodes (else an error, which Warm ignores) and the resident
// set has room for it (else errResidentFull).
func (ri *RowIndex) makeGroupResident(ctx context.Context, m *meter, fr *FragmentEntry, gi int, kind Kind, hash BucketHash) error {
	fm, err := ri.fragmentMeta(ctx, m, fr)
	if err != nil {
		return err
	}
	b, err := ri.groupBytes(ctx, m, fr, gi)
	if err != nil {
		return err
	}
	o := object{st: ri.st, key: folderOf(ri.name) + fr.Path, uri: fr.Path}
	pr := &pageReader{ctx: ctx, m: m, obj: o, sp: spans{{fr.Groups[gi].Offset, b}}, fallThrough: true, chunks: fm.chunks}
	es, err := decodeGroup(fm, gi, pr, kind, hash)
	if err != nil {
		return err
	}
	g, ok := newResidentGroup(es)
	if !ok {
		return nil
	}
	if ri.resident.add(fragDecodedKey{fr.Path, gi}, g, g.charge()) {
		return errResidentFull
	}
	return nil
}
