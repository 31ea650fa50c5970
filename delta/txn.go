package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/ariadne-go/ariadne/store"
	"github.com/google/uuid"
)

// DefaultMaxCommitAttempts bounds how often a transaction is rebased after
// losing the race for the next version to a compatible commit. Each lost
// race means another writer committed, so 100 attempts let 100 concurrent
// writers all land (Delta's default is 10 000000 / "unbounded"; a bound
// keeps a livelock observable).
const DefaultMaxCommitAttempts = 100

// txn is one optimistic transaction: the snapshot it read, the actions it
// will commit, and what it needs to know to decide whether a concurrent
// commit invalidates it.
type txn struct {
	t        *Table
	snap     *Snapshot // read snapshot; nil only for Create
	readVer  int64     // snapshot version, -1 for Create
	op       string
	opParams map[string]any
	actions  []Action
	newMeta  *Metadata // metadata change carried by actions, if any

	// blindAppend: the transaction only adds files and read nothing.
	blindAppend bool
	// readWholeTable: the transaction's outcome depends on every row (a
	// predicate we cannot evaluate on stats); concurrent data additions
	// conflict with it.
	readWholeTable bool
	// keyFilter, when set, narrows what the transaction read: concurrent
	// additions conflict only if their stats admit one of the keys.
	keyFilter *KeyFilter
	// dataChange is false for OPTIMIZE (rearranges, never changes, rows).
	dataChange bool

	appID      string
	appVersion int64
	attempts   int
	txnID      string
	extraParam map[string]string
}

func newTxn(t *Table, snap *Snapshot, op string, opts WriteOptions) *txn {
	tx := &txn{
		t: t, snap: snap, readVer: snap.Version(), op: op,
		opParams:   map[string]any{},
		dataChange: true,
		appID:      opts.AppID, appVersion: opts.AppVersion,
		attempts:   opts.MaxCommitAttempts,
		extraParam: opts.OperationParameters,
	}
	return tx
}

// removes returns the paths (decoded) this transaction removes.
func (tx *txn) removes() map[string]bool {
	out := map[string]bool{}
	for _, a := range tx.actions {
		if a.Remove != nil {
			if p, err := DecodePath(a.Remove.Path); err == nil {
				out[p] = true
			}
		}
	}
	return out
}

// commit writes the transaction at the version after its snapshot,
// rebasing over compatible concurrent commits. It returns the committed
// version. After a successful commit at a multiple of the checkpoint
// interval it writes a checkpoint (best effort: a failed checkpoint does
// not fail the commit).
func (tx *txn) commit(ctx context.Context) (int64, error) {
	if tx.appID != "" {
		if err := tx.checkAppTxn(tx.snap.txns); err != nil {
			return 0, err
		}
		now := time.Now().UnixMilli()
		tx.actions = append(tx.actions, Action{Txn: &Txn{AppID: tx.appID, Version: tx.appVersion, LastUpdated: &now}})
	}
	attempts := tx.attempts
	if attempts <= 0 {
		attempts = DefaultMaxCommitAttempts
	}
	version := tx.readVer + 1
	for range attempts {
		err := tx.write(ctx, tx.t.st, version)
		if err == nil {
			tx.afterCommit(ctx, version)
			return version, nil
		}
		if !errors.Is(err, store.ErrPrecondition) {
			return 0, err
		}
		winner, err := readCommit(ctx, tx.t.st, CommitKey(version))
		if err != nil {
			return 0, fmt.Errorf("delta: reading the winning commit %d: %w", version, err)
		}
		if err := tx.checkConflict(version, winner); err != nil {
			return 0, err
		}
		version++
	}
	return 0, &ConflictError{Version: version - 1, Reason: fmt.Sprintf("gave up after %d commit attempts", attempts)}
}

// checkAppTxn refuses a write whose application version was already
// committed.
func (tx *txn) checkAppTxn(txns map[string]Txn) error {
	if prev, ok := txns[tx.appID]; ok && prev.Version >= tx.appVersion {
		return &ConflictError{Version: tx.readVer, Reason: fmt.Sprintf("application %q already committed version %d (≥ %d)", tx.appID, prev.Version, tx.appVersion)}
	}
	return nil
}

// checkConflict decides whether the commit winner, which took version v,
// invalidates this transaction (after the rules of Delta's
// ConflictChecker, at WriteSerializable isolation):
//
//   - a protocol or metadata change conflicts with everything;
//   - a txn action for our application id conflicts (idempotent writes);
//   - removing a file we also remove (or rewrite) conflicts: both
//     transactions read it;
//   - added data conflicts with a transaction that read the table (delete,
//     upsert), unless its key filter proves the new files hold none of its
//     keys; blind appends and OPTIMIZE never conflict with additions.
func (tx *txn) checkConflict(v int64, winner []Action) error {
	ours := tx.removes()
	for _, a := range winner {
		switch {
		case a.Protocol != nil:
			return &ConflictError{Version: v, Reason: "concurrent protocol change"}
		case a.MetaData != nil:
			return &ConflictError{Version: v, Reason: "concurrent metadata change"}
		case a.Txn != nil && tx.appID != "" && a.Txn.AppID == tx.appID:
			return &ConflictError{Version: v, Reason: fmt.Sprintf("concurrent transaction of application %q", tx.appID)}
		case a.Remove != nil:
			p, _ := DecodePath(a.Remove.Path)
			if ours[p] {
				return &ConflictError{Version: v, Reason: fmt.Sprintf("concurrent removal of %s, which this transaction also rewrites", p)}
			}
		case a.Add != nil && a.Add.DataChange && !tx.blindAppend && tx.dataChange:
			if tx.readWholeTable {
				return &ConflictError{Version: v, Reason: "concurrent append to a table this transaction read"}
			}
			if tx.keyFilter != nil && tx.keyFilter.mayContain(tx.snap, a.Add) {
				return &ConflictError{Version: v, Reason: fmt.Sprintf("concurrently added file %s may hold keys this transaction changes", a.Add.Path)}
			}
		}
	}
	return nil
}

// write puts the transaction's actions, led by commitInfo, at version v by
// put-if-absent (store.ErrPrecondition when v exists).
func (tx *txn) write(ctx context.Context, s store.Store, v int64) error {
	if tx.txnID == "" {
		tx.txnID = uuid.NewString()
	}
	var buf bytes.Buffer
	buf.Write(tx.commitInfo())
	buf.WriteByte('\n')
	for _, a := range tx.actions {
		if a.MetaData != nil {
			md := *a.MetaData
			md.normalize()
			a.MetaData = &md
		}
		line, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("delta: encoding an action: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return store.WriteAll(ctx, s, CommitKey(v), buf.Bytes(), &store.WriteOptions{IfNotExist: true, ContentType: "application/json"})
}

// commitInfo renders the commitInfo action. Its operationParameters values
// are JSON-encoded strings, as Spark writes them.
func (tx *txn) commitInfo() []byte {
	params := map[string]string{}
	for k, v := range tx.opParams {
		switch v := v.(type) {
		case string:
			params[k] = v
		case nil:
			params[k] = "null"
		default:
			b, _ := json.Marshal(v)
			params[k] = string(b)
		}
	}
	maps.Copy(params, tx.extraParam)
	ci := map[string]any{
		"timestamp":           time.Now().UnixMilli(),
		"operation":           tx.op,
		"operationParameters": params,
		"isolationLevel":      "WriteSerializable",
		"isBlindAppend":       tx.blindAppend,
		"engineInfo":          EngineInfo,
		"txnId":               tx.txnID,
	}
	if tx.readVer >= 0 {
		ci["readVersion"] = tx.readVer
	}
	if m := tx.metrics(); len(m) > 0 {
		ci["operationMetrics"] = m
	}
	b, _ := json.Marshal(map[string]any{"commitInfo": ci})
	return b
}

// metrics counts the transaction's files and bytes, as Spark's
// operationMetrics (values are strings).
func (tx *txn) metrics() map[string]string {
	var adds, removes, addBytes, rows int64
	for _, a := range tx.actions {
		switch {
		case a.Add != nil:
			adds++
			addBytes += a.Add.Size
			if n, ok := a.Add.NumRecords(); ok {
				rows += n
			}
		case a.Remove != nil:
			removes++
		}
	}
	if adds == 0 && removes == 0 {
		return nil
	}
	m := map[string]string{
		"numFiles":       strconv.FormatInt(adds, 10),
		"numOutputBytes": strconv.FormatInt(addBytes, 10),
		"numOutputRows":  strconv.FormatInt(rows, 10),
	}
	if removes > 0 {
		m["numRemovedFiles"] = strconv.FormatInt(removes, 10)
	}
	return m
}

// afterCommit writes the automatic checkpoint when v is a multiple of
// delta.checkpointInterval.
func (tx *txn) afterCommit(ctx context.Context, v int64) {
	conf := tx.snap.metadata.Configuration
	if tx.newMeta != nil {
		conf = tx.newMeta.Configuration
	}
	interval := checkpointInterval(conf)
	if v > 0 && v%interval == 0 {
		_ = tx.t.Checkpoint(ctx, v) // best effort, as in Delta: readers fall back to the commits
	}
}

// DefaultCheckpointInterval is Delta's delta.checkpointInterval default:
// a checkpoint every 10 commits.
const DefaultCheckpointInterval = 10

func checkpointInterval(conf map[string]string) int64 {
	if v, ok := conf["delta.checkpointInterval"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return DefaultCheckpointInterval
}

// jsonList and jsonMap render operation parameters as Spark does.
func jsonList(s []string) string {
	if s == nil {
		s = []string{}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func jsonMap(m map[string]string) string {
	if m == nil {
		m = map[string]string{}
	}
	keys := slices.Sorted(maps.Keys(m))
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(m[k])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.String()
}
