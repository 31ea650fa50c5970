package rowindex

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"runtime"
	"sort"
	"sync"
)

// KeyRun is a run of consecutive rows of one data file holding one key,
// as LocateKeys returns them.
type KeyRun struct {
	Key      int    // index of the key in LocateKeys' keys
	File     string // the data file's URI
	RowGroup int
	Row      int64 // first row, in the row group (0-based)
	N        int64 // rows in the run
}

// LocateKeys returns where the rows of many point keys are (data file, row
// group, rows), from the key directory and fragments alone: no data file
// is read. It is Iter with only the key column asked for, for every key at
// once: each fragment group that may hold one of the keys is read and
// decoded once, all keys of the group are searched in it, and the groups
// are read in one round and decoded concurrently. A join of many keys
// would otherwise start one lookup per key, reading and decoding the same
// groups again for every key that hashes near another.
//
// Keys are values EncodeKey takes (bool, integers, float64, string);
// runs come in no particular order. Aggregate entries are not rows and
// are skipped; runs of removed files are dropped.
func (ri *RowIndex) LocateKeys(ctx context.Context, keys []any) ([]KeyRun, Cost, error) {
	runs, cost, err := ri.locateKeys(ctx, keys)
	if errors.Is(err, errFragmentGone) {
		if rerr := ri.Refresh(ctx); rerr != nil {
			return nil, cost, errors.Join(err, rerr)
		}
		runs, cost, err = ri.locateKeys(ctx, keys)
	}
	return runs, cost, err
}

// keyProbe is one key of a LocateKeys call.
type keyProbe struct {
	i      int
	enc    []byte
	bucket int32 // -1 on a sorted index
}

func (ri *RowIndex) locateKeys(ctx context.Context, keys []any) ([]KeyRun, Cost, error) {
	m := new(meter)
	man, ids := ri.snapshot()
	if man.KeyClass == "" || len(keys) == 0 {
		return nil, m.cost(), nil
	}
	probes := make([]keyProbe, len(keys))
	for i, k := range keys {
		enc, err := EncodeKey(k)
		if err != nil {
			return nil, m.cost(), err
		}
		p := keyProbe{i: i, enc: enc, bucket: -1}
		if man.Kind == KindHash {
			p.bucket = man.BucketHash.bucket(enc)
		}
		probes[i] = p
	}
	// Lookup order: bucket (0 on a sorted index), then key.
	order := func(a, b *keyProbe) int {
		return cmp.Or(cmp.Compare(max(a.bucket, 0), max(b.bucket, 0)), bytes.Compare(a.enc, b.enc))
	}
	sort.Slice(probes, func(i, j int) bool { return order(&probes[i], &probes[j]) < 0 })
	// The groups that may hold some key, with the keys each may hold.
	type job struct {
		fr     *FragmentEntry
		gi     int
		probes []keyProbe
		runs   []KeyRun
	}
	var jobs []*job
	for f := range man.Fragments {
		fr := &man.Fragments[f]
		for gi, g := range fr.Groups {
			var in []keyProbe
			if man.Kind == KindHash {
				lo := sort.Search(len(probes), func(i int) bool { return probes[i].bucket >= g.BucketLo })
				hi := sort.Search(len(probes), func(i int) bool { return probes[i].bucket > g.BucketHi })
				in = probes[lo:hi]
			} else {
				// The groups Iter reads for a point key: KeyLo ≤ key ≤ KeyHi.
				lo := sort.Search(len(probes), func(i int) bool { return bytes.Compare(probes[i].enc, g.KeyLo) >= 0 })
				hi := sort.Search(len(probes), func(i int) bool { return bytes.Compare(probes[i].enc, g.KeyHi) > 0 })
				in = probes[lo:hi]
			}
			if len(in) > 0 {
				jobs = append(jobs, &job{fr: fr, gi: gi, probes: in})
			}
		}
	}
	gone := man.tombstones()
	// One round of reads (fragment footers once each, then the groups'
	// bytes), then decoding on every core.
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	run := func(par int, f func(j int) error) error {
		sem := make(chan struct{}, par)
		for j := range jobs {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				errs[j] = f(j)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	metaDone := map[*FragmentEntry]bool{}
	var metaJobs []int
	for j, jb := range jobs {
		if !metaDone[jb.fr] {
			metaDone[jb.fr] = true
			metaJobs = append(metaJobs, j)
		}
	}
	var mwg sync.WaitGroup
	merrs := make([]error, len(metaJobs))
	msem := make(chan struct{}, maxConcurrentReads)
	for k, j := range metaJobs {
		mwg.Add(1)
		msem <- struct{}{}
		go func() {
			defer mwg.Done()
			defer func() { <-msem }()
			_, merrs[k] = ri.fragmentMeta(ctx, m, jobs[j].fr)
		}()
	}
	mwg.Wait()
	if err := errors.Join(merrs...); err != nil {
		return nil, m.cost(), err
	}
	if err := run(maxConcurrentReads, func(j int) error {
		jb := jobs[j]
		if len(jb.probes) == 1 || ri.isResident(jb.fr, jb.gi) {
			return nil // a point read below reads only the key's pages
		}
		_, err := ri.groupBytes(ctx, m, jb.fr, jb.gi)
		return err
	}); err != nil {
		return nil, m.cost(), err
	}
	if err := run(runtime.GOMAXPROCS(0), func(j int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		jb := jobs[j]
		var es []entry
		point := false
		if len(jb.probes) > 1 {
			// Each key's entries from a resident group, in lookup order:
			// the probes' order, which the search below keeps. A group
			// dropped meanwhile (DropCache) is decoded whole below.
			point = true
			for k, p := range jb.probes {
				if k > 0 && bytes.Equal(p.enc, jb.probes[k-1].enc) {
					continue // a key asked twice: its entries are in es once
				}
				got, ok := ri.residentKey(man, jb.fr, jb.gi, p.enc)
				if !ok {
					es, point = nil, false
					break
				}
				es = append(es, got...)
			}
			if point {
				m.hits.Add(1) // one group from memory
			}
		} else {
			got, ok, err := ri.groupKey(ctx, m, jb.fr, jb.gi, jb.probes[0].enc)
			if err != nil {
				return err
			}
			es, point = got, ok
		}
		if !point {
			all, err := ri.group(ctx, m, jb.fr, jb.gi)
			if err != nil {
				return err
			}
			es = all
		}
		for _, p := range jb.probes {
			b := max(p.bucket, 0)
			from := sort.Search(len(es), func(k int) bool {
				return cmp.Or(cmp.Compare(es[k].Bucket, b), bytes.Compare(es[k].Key, p.enc)) >= 0
			})
			to := from
			for to < len(es) && es[to].Bucket == b && bytes.Equal(es[to].Key, p.enc) {
				to++
			}
			for _, e := range dropRemoved(es[from:to:to], gone) {
				if e.isAggregate() {
					continue
				}
				fe, ok := ids[e.File]
				if !ok {
					return corrupt("entry names unknown file id %d", e.File)
				}
				jb.runs = append(jb.runs, KeyRun{Key: p.i, File: fe.URI, RowGroup: int(e.RG), Row: e.Row, N: e.N})
			}
		}
		return nil
	}); err != nil {
		return nil, m.cost(), err
	}
	var out []KeyRun
	for _, jb := range jobs {
		out = append(out, jb.runs...)
	}
	return out, m.cost(), nil
}
