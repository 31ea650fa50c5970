package fileindex

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// mergedSchema returns table's fields followed by the fields of ours that
// table lacks (Delta's additive schema merge), and a function that aligns a
// row of ours with it. changed reports whether new fields were added.
func mergedSchema(table, ours *schema.Struct) (merged *schema.Struct, align func([]any) []any, changed bool) {
	merged = &schema.Struct{Fields: slices.Clone(table.Fields)}
	idx := make([]int, len(ours.Fields))
	for i, f := range ours.Fields {
		j := slices.IndexFunc(merged.Fields, func(g schema.Field) bool { return g.Name == f.Name })
		if j < 0 {
			j = len(merged.Fields)
			merged.Fields = append(merged.Fields, f)
			changed = true
		}
		idx[i] = j
	}
	n := len(merged.Fields)
	align = func(row []any) []any {
		out := make([]any, n)
		for i, v := range row {
			out[idx[i]] = v
		}
		return out
	}
	return merged, align, changed
}

// openOrCreate opens the Delta table at st, creating it with sch when
// absent. We hold the update lock, so no one else creates it meanwhile.
func openOrCreate(ctx context.Context, st store.Store, sch *schema.Struct) (*delta.Table, error) {
	t, err := delta.Open(ctx, st)
	if errors.Is(err, delta.ErrNotATable) {
		return delta.Create(ctx, st, sch, delta.CreateOptions{})
	}
	return t, err
}

// appendMerged appends rows (aligned with sch) to the table at st, creating
// it when absent and adding new columns by schema merge (§4.3).
func appendMerged(ctx context.Context, st store.Store, sch *schema.Struct, rows [][]any) error {
	t, err := openOrCreate(ctx, st, sch)
	if err != nil {
		return err
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	merged, align, changed := mergedSchema(snap.Schema(), sch)
	seq := func(yield func([]any, error) bool) {
		for _, r := range rows {
			if !yield(align(r), nil) {
				return
			}
		}
	}
	_, err = t.Append(ctx, seq, delta.WriteOptions{Schema: merged, MergeSchema: changed, TargetFileSize: stagingTargetFileSize})
	return err
}

// stageBatch appends a batch's rows to staging/ with the two ordering
// columns (§4.3): _ariadne_staged_at (now, µs) and _ariadne_batch_id (a new
// UUID). The append is one Delta commit: the batch is staged entirely or
// not at all.
func (fi *FileIndex) stageBatch(ctx context.Context, res *batchResult, batchID string, now time.Time) error {
	sch := &schema.Struct{Fields: slices.Clone(res.schema.Fields)}
	sch.Fields = append(sch.Fields,
		schema.Field{Name: StagedAtColumn, Type: schema.Timestamp, Nullable: true},
		schema.Field{Name: BatchIDColumn, Type: schema.String, Nullable: true})
	staged := now.UTC().Truncate(time.Microsecond)
	rows := make([][]any, len(res.rows))
	for i, r := range res.rows {
		rows[i] = append(slices.Clone(r), staged, batchID)
	}
	return appendMerged(ctx, fi.updStagingStore(), sch, rows)
}

func (fi *FileIndex) updStagingStore() store.Store {
	return store.Sub(fi.ix.Root(), fi.ix.Paths().Staging)
}

func (fi *FileIndex) updMainStore() store.Store {
	return store.Sub(fi.ix.Root(), fi.ix.Paths().Main)
}

// stagedKey is the ranking key of one staged row (§5.3.5, §12 item 6).
type stagedKey struct {
	ordinal      int
	stagedAt     *time.Time // nil: absent column or null
	completeness int
	batchID      *string
	hash         string
}

// better reports whether a ranks before b: staged-at descending (nulls
// last), completeness descending, batch id descending (nulls last), content
// hash descending. The hash makes the choice total, so recovery of the same
// staging table always keeps the same rows, whatever the scan order.
func (a *stagedKey) better(b *stagedKey) bool {
	if c := cmpNullsLast(a.stagedAt, b.stagedAt, func(x, y time.Time) int { return x.Compare(y) }); c != 0 {
		return c > 0
	}
	if a.completeness != b.completeness {
		return a.completeness > b.completeness
	}
	if c := cmpNullsLast(a.batchID, b.batchID, strings.Compare); c != 0 {
		return c > 0
	}
	return a.hash > b.hash
}

// cmpNullsLast compares for a descending order with nulls last: > 0 when
// a ranks first.
func cmpNullsLast[T any](a, b *T, c func(x, y T) int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return c(*a, *b)
}

// selectStaged ranks the staged rows of snap and returns, per filename, the
// ordinal (scan position) of the row to keep, and the set of filenames. Only the small ranking keys
// are held, never the payloads: the payload rows are streamed again by
// stagedRows.
//
// keep is nil when every staged filename is distinct (the common case: each
// file is staged by one batch): every row is kept, and neither the payload
// nor a content hash is needed, so only the filename column is scanned.
func selectStaged(ctx context.Context, snap *delta.Snapshot) (keep map[int]bool, files map[string]bool, err error) {
	if _, ok := snap.Schema().Field(FilenameColumn); !ok {
		return rankStaged(ctx, snap) // reports the missing column
	}
	files = map[string]bool{}
	unique := true
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{FilenameColumn}}) {
		if err != nil {
			return nil, nil, err
		}
		fn, _ := row[0].(string)
		if files[fn] {
			unique = false
			break
		}
		files[fn] = true
	}
	if unique {
		return nil, files, nil
	}
	return rankStaged(ctx, snap)
}

// rankStaged ranks every staged row (§5.3.5) and keeps each filename's
// best.
func rankStaged(ctx context.Context, snap *delta.Snapshot) (keep map[int]bool, files map[string]bool, err error) {
	sch := snap.Schema()
	fnIdx := -1
	atIdx, idIdx := -1, -1
	var payload []int // payload columns (everything but the ordering columns)
	for i, f := range sch.Fields {
		switch f.Name {
		case FilenameColumn:
			fnIdx = i
			payload = append(payload, i)
		case StagedAtColumn:
			atIdx = i
		case BatchIDColumn:
			idIdx = i
		default:
			payload = append(payload, i)
		}
	}
	if fnIdx < 0 {
		return nil, nil, fmt.Errorf("fileindex: staging table has no %s column", FilenameColumn)
	}
	// The content hash renders payload columns in ascending name order.
	hashOrder := slices.Clone(payload)
	sort.SliceStable(hashOrder, func(i, j int) bool { return sch.Fields[hashOrder[i]].Name < sch.Fields[hashOrder[j]].Name })
	best := map[string]*stagedKey{}
	ord := 0
	for row, err := range snap.Scan(ctx, delta.ScanOptions{}) {
		if err != nil {
			return nil, nil, err
		}
		fn, _ := row[fnIdx].(string)
		k := &stagedKey{ordinal: ord}
		ord++
		if atIdx >= 0 {
			if t, ok := row[atIdx].(time.Time); ok {
				k.stagedAt = &t
			}
		}
		if idIdx >= 0 {
			if s, ok := row[idIdx].(string); ok {
				k.batchID = &s
			}
		}
		for _, i := range payload {
			if i != fnIdx && row[i] != nil {
				k.completeness++
			}
		}
		k.hash = contentHash(sch, hashOrder, row)
		if b, ok := best[fn]; !ok || k.better(b) {
			best[fn] = k
		}
	}
	keep = make(map[int]bool, len(best))
	files = make(map[string]bool, len(best))
	for fn, k := range best {
		keep[k.ordinal] = true
		files[fn] = true
	}
	return keep, files, nil
}

// stagedRows streams the kept staged rows (every row when keep is nil),
// without the ordering columns, aligned with payloadSchema(snap).
func stagedRows(ctx context.Context, snap *delta.Snapshot, keep map[int]bool) iter.Seq2[[]any, error] {
	sch := snap.Schema()
	var cols []int
	for i, f := range sch.Fields {
		if f.Name != StagedAtColumn && f.Name != BatchIDColumn {
			cols = append(cols, i)
		}
	}
	return func(yield func([]any, error) bool) {
		ord := 0
		for row, err := range snap.Scan(ctx, delta.ScanOptions{}) {
			if err != nil {
				yield(nil, err)
				return
			}
			o := ord
			ord++
			if keep != nil && !keep[o] {
				continue
			}
			out := make([]any, len(cols))
			for j, i := range cols {
				out[j] = row[i]
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// payloadSchema is the staging schema without the ordering columns.
func payloadSchema(sch *schema.Struct) *schema.Struct {
	out := &schema.Struct{}
	for _, f := range sch.Fields {
		if f.Name != StagedAtColumn && f.Name != BatchIDColumn {
			out.Fields = append(out.Fields, f)
		}
	}
	return out
}

// contentHash is the SHA-256 (hex) of a canonical JSON rendering of the
// payload columns in ascending name order (§5.3.5 step 4). It only has to
// be deterministic for our own recovery: it breaks ties between rows that
// agree on every other key.
func contentHash(sch *schema.Struct, order []int, row []any) string {
	var b bytes.Buffer
	b.WriteByte('{')
	for n, i := range order {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(sch.Fields[i].Name))
		b.WriteByte(':')
		renderJSON(&b, row[i])
	}
	b.WriteByte('}')
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// renderJSON writes v (a pqrow value) as compact JSON.
func renderJSON(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(strconv.Quote(x))
	case []byte:
		b.WriteString(strconv.Quote(base64.StdEncoding.EncodeToString(x)))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float32:
		pqrow.WriteJSONFloat(b, float64(x), 32)
	case float64:
		pqrow.WriteJSONFloat(b, x, 64)
	case time.Time:
		b.WriteString(strconv.Quote(x.UTC().Format("2006-01-02T15:04:05.000000Z")))
	case pqrow.Decimal:
		if x.Unscaled != nil {
			b.WriteString(strconv.Quote(x.Unscaled.String() + "e-" + strconv.Itoa(int(x.Scale))))
		} else {
			b.WriteString("null")
		}
	case *big.Int:
		b.WriteString(x.String())
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			renderJSON(b, e)
		}
		b.WriteByte(']')
	case []pqrow.KV:
		b.WriteByte('[')
		for i, kv := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			renderJSON(b, kv.Key)
			b.WriteByte(',')
			renderJSON(b, kv.Value)
			b.WriteByte(']')
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "%v", x)
	}
}

// deleteStaging removes staging/ so that every intermediate state a crash
// can leave is either a valid Delta table or nothing (the storage preflight
// refuses a folder that is not a Delta table, §4.8): the log is deleted
// newest entry first (each step leaves an older, already consolidated
// version, down to the empty version 0), then the data files, and the first
// commit last.
func deleteStaging(ctx context.Context, st store.Store) error {
	var log, data []string
	var first string
	for info, err := range st.List(ctx, store.ListOptions{}) {
		if err != nil {
			return err
		}
		switch {
		case info.Key == delta.CommitKey(0):
			first = info.Key
		case strings.HasPrefix(info.Key, "_delta_log/"):
			log = append(log, info.Key)
		default:
			data = append(data, info.Key)
		}
	}
	slices.SortFunc(log, func(a, b string) int { return cmp.Compare(b, a) })
	for _, group := range [][]string{log, data} {
		for _, k := range group {
			if err := st.Delete(ctx, k, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
				return fmt.Errorf("fileindex: delete staging %s: %w", k, err)
			}
		}
	}
	if first != "" {
		if err := st.Delete(ctx, first, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			return fmt.Errorf("fileindex: delete staging %s: %w", first, err)
		}
	}
	return nil
}
