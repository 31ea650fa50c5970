package fileindex

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/schema"
)

// TestStagingRanking is §5.3.5 / §12 item 6: when staging holds several
// rows for one file, consolidation keeps the newest batch's, then the most
// complete, then the greatest batch id, then the greatest content hash;
// legacy staging without the ordering columns ranks by completeness and
// hash alone. The choice never depends on the order rows were staged in.
func TestStagingRanking(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	full := []any{int32(1), int32(2)}
	type staged struct {
		tag   string // marks the row
		ids   []any  // the Id cell (nil: null)
		size  any    // file_size
		at    any    // _ariadne_staged_at (nil: null)
		batch any    // _ariadne_batch_id
	}
	tests := []struct {
		name   string
		legacy bool
		rows   []staged
		want   string // tag of the kept row
	}{
		{"newest batch wins over completeness", false, []staged{
			{tag: "old-full", ids: full, size: int64(10), at: t1, batch: "b"},
			{tag: "new-partial", ids: nil, size: int64(10), at: t2, batch: "a"},
		}, "new-partial"},
		{"null staged-at ranks last", false, []staged{
			{tag: "null-at", ids: full, size: int64(10), at: nil, batch: "z"},
			{tag: "dated", ids: full, size: int64(10), at: t1, batch: "a"},
		}, "dated"},
		{"same time: more complete wins", false, []staged{
			{tag: "partial", ids: nil, size: int64(10), at: t1, batch: "z"},
			{tag: "full", ids: full, size: int64(10), at: t1, batch: "a"},
		}, "full"},
		{"same time and completeness: greater batch id wins", false, []staged{
			{tag: "a", ids: full, size: int64(10), at: t1, batch: "a"},
			{tag: "b", ids: full, size: int64(10), at: t1, batch: "b"},
		}, "b"},
		{"legacy: more complete wins", true, []staged{
			{tag: "partial", ids: nil, size: int64(10)},
			{tag: "full", ids: full, size: int64(10)},
		}, "full"},
	}
	for _, tc := range tests {
		for _, reversed := range []bool{false, true} {
			name := tc.name
			if reversed {
				name += " (reversed)"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				e := newUpdEnv(t)
				ix := e.open("rank", updT1S, "csv", map[string]string{"header": "true"})
				must(t, ix.AddIndex(ctx, "Id"))
				fi := e.fi(ix)
				sch := &schema.Struct{Fields: []schema.Field{
					{Name: FilenameColumn, Type: schema.String, Nullable: true},
					{Name: "Id", Type: &schema.Array{Element: schema.Integer, ContainsNull: true}, Nullable: true},
					{Name: "tag", Type: schema.String, Nullable: true},
					{Name: FileSizeColumn, Type: schema.Long, Nullable: true},
				}}
				if !tc.legacy {
					sch.Fields = append(sch.Fields,
						schema.Field{Name: StagedAtColumn, Type: schema.Timestamp, Nullable: true},
						schema.Field{Name: BatchIDColumn, Type: schema.String, Nullable: true})
				}
				rows := slices.Clone(tc.rows)
				if reversed {
					slices.Reverse(rows)
				}
				// One commit per staged row, as batches are.
				for _, r := range rows {
					var ids any // a nil slice would be an empty array, not null
					if r.ids != nil {
						ids = r.ids
					}
					row := []any{"file:///f.csv", ids, r.tag, r.size}
					if !tc.legacy {
						row = append(row, r.at, r.batch)
					}
					must(t, appendMerged(ctx, fi.updStagingStore(), sch, [][]any{row}))
				}
				ok, err := fi.updConsolidate(ctx)
				must(t, err)
				if !ok {
					t.Fatal("staging not found")
				}
				msch, mrows := updTableRows(t, ix.Root(), ix.Paths().Main)
				if len(mrows) != 1 {
					t.Fatalf("%d main rows", len(mrows))
				}
				if got := mrows[0][fieldIndex(msch, "tag")]; got != tc.want {
					t.Errorf("kept %v, want %s", got, tc.want)
				}
				// The ordering columns never reach the main table.
				if fieldIndex(msch, StagedAtColumn) >= 0 || fieldIndex(msch, BatchIDColumn) >= 0 {
					t.Errorf("ordering columns in main table: %s", msch.Marshal())
				}
				if updTableVersion(t, ix.Root(), ix.Paths().Staging) != -1 {
					t.Errorf("staging not deleted")
				}
			})
		}
	}
}

// TestStagingHashTieBreak: rows equal in every ranking key but content are
// resolved by the content hash, whatever the staging order.
func TestStagingHashTieBreak(t *testing.T) {
	sch := &schema.Struct{Fields: []schema.Field{
		{Name: FilenameColumn, Type: schema.String, Nullable: true},
		{Name: "v", Type: schema.String, Nullable: true},
	}}
	a := []any{"f", "x"}
	b := []any{"f", "y"}
	ha := contentHash(sch, []int{0, 1}, a)
	hb := contentHash(sch, []int{0, 1}, b)
	if ha == hb || len(ha) != 64 {
		t.Fatalf("hashes %s %s", ha, hb)
	}
	ka := &stagedKey{completeness: 1, hash: ha}
	kb := &stagedKey{completeness: 1, hash: hb}
	if ka.better(kb) == kb.better(ka) {
		t.Fatal("hash does not order the rows totally")
	}
}
