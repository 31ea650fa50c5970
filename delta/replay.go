package delta

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// fileKey identifies a logical file in log replay: the decoded path and the
// deletion vector's unique id (PROTOCOL.md, "Action Reconciliation").
type fileKey struct{ path, dv string }

// replayState accumulates actions in log order; the latest action per key
// wins.
type replayState struct {
	protocol *Protocol
	metadata *Metadata
	adds     map[fileKey]AddFile
	removes  map[fileKey]RemoveFile
	txns     map[string]Txn
	domains  map[string]DomainMetadata
}

func newReplayState() *replayState {
	return &replayState{
		adds:    make(map[fileKey]AddFile),
		removes: make(map[fileKey]RemoveFile),
		txns:    make(map[string]Txn),
		domains: make(map[string]DomainMetadata),
	}
}

// apply applies one action. Files are keyed by decoded path, so that two
// encodings of one name reconcile; the actions keep the path as logged.
func (r *replayState) apply(a *Action) error {
	switch {
	case a.Add != nil:
		add := *a.Add
		p, err := DecodePath(add.Path)
		if err != nil {
			return err
		}
		k := fileKey{p, add.DeletionVector.UniqueID()}
		delete(r.removes, k)
		r.adds[k] = add
	case a.Remove != nil:
		rm := *a.Remove
		p, err := DecodePath(rm.Path)
		if err != nil {
			return err
		}
		k := fileKey{p, rm.DeletionVector.UniqueID()}
		delete(r.adds, k)
		r.removes[k] = rm
	case a.MetaData != nil:
		m := *a.MetaData
		r.metadata = &m
	case a.Protocol != nil:
		p := *a.Protocol
		r.protocol = &p
	case a.Txn != nil:
		r.txns[a.Txn.AppID] = *a.Txn
	case a.DomainMetadata != nil:
		r.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
	}
	return nil
}

// replay reconstructs the snapshot at version from the listing: the newest
// complete checkpoint at or below version, then the commits after it.
func replay(ctx context.Context, st store.Store, l *logListing, version int64) (*Snapshot, error) {
	latest := l.latest()
	if version < 0 || version > latest {
		return nil, fmt.Errorf("%w: version %d (latest is %d)", ErrVersionNotFound, version, latest)
	}
	r := newReplayState()
	var incomplete *checkpoint // newest incomplete checkpoint we skipped
	var used *checkpoint
	for _, c := range l.checkpoints {
		if c.version > version {
			continue
		}
		if !c.complete() {
			if incomplete == nil {
				incomplete = c
			}
			continue
		}
		actions, err := readCheckpoint(ctx, st, l, c)
		if errors.Is(err, errIncompleteCheckpoint) {
			if incomplete == nil {
				incomplete = c
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		for i := range actions {
			if err := r.apply(&actions[i]); err != nil {
				return nil, corrupt(c.keys[0], 0, err)
			}
		}
		used = c
		break
	}
	start := int64(0)
	if used != nil {
		start = used.version + 1
	}
	// Every commit from start to version must be present.
	for v := start; v <= version; v++ {
		if _, ok := l.commits[v]; ok {
			continue
		}
		older := used != nil
		for w := range l.commits {
			if w < v {
				older = true
				break
			}
		}
		switch {
		case older:
			return nil, corrupt(CommitKey(v), 0, fmt.Errorf("commit %d is missing: gap in the log versions", v))
		case incomplete != nil:
			return nil, corrupt(incomplete.missingKey(), 0, fmt.Errorf("checkpoint %d is incomplete and no older checkpoint or full commit history exists", incomplete.version))
		default:
			return nil, fmt.Errorf("%w: version %d can no longer be reconstructed: commit %d was cleaned up and no checkpoint covers it", ErrVersionNotFound, version, v)
		}
	}
	keys := make(map[int64]string)
	for v := start; v <= version; v++ {
		obj := l.commits[v]
		keys[v] = obj.Key
		actions, err := readCommit(ctx, st, obj.Key)
		if err != nil {
			return nil, err
		}
		for i := range actions {
			if err := r.apply(&actions[i]); err != nil {
				return nil, corrupt(obj.Key, 0, err)
			}
		}
	}
	return r.snapshot(st, version, used, keys)
}

// snapshot freezes the replay state.
func (r *replayState) snapshot(st store.Store, version int64, used *checkpoint, keys map[int64]string) (*Snapshot, error) {
	at := fmt.Sprintf("%s%020d", LogDir, version)
	if r.protocol == nil {
		return nil, corrupt(at, 0, errors.New("no protocol action in the log"))
	}
	if r.metadata == nil {
		return nil, corrupt(at, 0, errors.New("no metaData action in the log"))
	}
	if err := checkReadable(r.protocol, nil); err != nil {
		return nil, err
	}
	sch, err := schema.Parse(r.metadata.SchemaString)
	if err != nil {
		return nil, corrupt(at, 0, fmt.Errorf("schemaString: %w", err))
	}
	if err := checkReadable(r.protocol, sch); err != nil {
		return nil, err
	}
	cm, err := newColumnMapping(r.metadata, sch)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{
		st:        st,
		version:   version,
		protocol:  *r.protocol,
		metadata:  *r.metadata,
		schema:    sch,
		txns:      r.txns,
		domains:   make(map[string]DomainMetadata),
		colmap:    cm,
		logKeys:   keys,
		cpVersion: -1,
	}
	if used != nil {
		s.cpVersion = used.version
	}
	for d, m := range r.domains {
		if !m.Removed {
			s.domains[d] = m
		}
	}
	s.files = make([]AddFile, 0, len(r.adds))
	for _, a := range r.adds {
		s.files = append(s.files, a)
	}
	sortFiles(s.files)
	s.tombs = make([]RemoveFile, 0, len(r.removes))
	for _, rm := range r.removes {
		s.tombs = append(s.tombs, rm)
	}
	slices.SortFunc(s.tombs, func(a, b RemoveFile) int {
		if a.Path < b.Path {
			return -1
		}
		if a.Path > b.Path {
			return 1
		}
		return 0
	})
	return s, nil
}

// maxLogLine bounds one line of a JSON commit. A commit line holds one
// action; the largest are add actions with stats over wide schemas (a
// 1 000-column table with 32-character min/max values is ~100 KB) and
// metaData with large schemas; 64 MiB leaves two orders of magnitude.
const maxLogLine = 64 << 20

// readCommit reads and parses one JSON commit (one action per line).
func readCommit(ctx context.Context, st store.Store, key string) ([]Action, error) {
	rc, err := st.NewRangeReader(ctx, key, 0, -1)
	if err != nil {
		return nil, corrupt(key, 0, err)
	}
	defer rc.Close()
	return parseActions(rc, key)
}

// parseActions parses newline-delimited JSON actions.
func parseActions(rd io.Reader, key string) ([]Action, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), maxLogLine)
	var out []Action
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var a Action
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, corrupt(key, line, err)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, corrupt(key, line+1, err)
	}
	return out, nil
}
