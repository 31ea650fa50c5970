package metadata

import (
	"errors"
	"slices"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
)

func intp(v int) *int { return &v }

func TestValidateDeclaredVersions(t *testing.T) {
	base := func(mv, sv *int) *Metadata {
		m := NewMetadata("csv", "s")
		m.MetadataVersion, m.StorageFormatVersion = mv, sv
		return m
	}
	withCol := func(f func(m *Metadata)) *Metadata {
		m := base(intp(10), intp(3))
		f(m)
		return m
	}
	for _, tc := range []struct {
		name string
		m    *Metadata
		want *aerr.Kind // nil: valid
	}{
		{"current", base(intp(10), intp(3)), nil},
		{"unversioned", base(nil, nil), nil},
		{"older explicit", base(intp(9), intp(2)), nil},
		{"storage 1", base(nil, intp(1)), nil},
		{"future metadata version", base(intp(999), intp(3)), aerr.ErrUnsupportedMetadataVersion},
		{"metadata 11", base(intp(11), nil), aerr.ErrUnsupportedMetadataVersion},
		{"future storage version", base(intp(10), intp(999)), aerr.ErrUnsupportedStorageFormatVersion},
		{"storage 4", base(nil, intp(4)), aerr.ErrUnsupportedStorageFormatVersion},
		{"storage 0", base(intp(10), intp(0)), aerr.ErrStorageMigration},
		{"storage negative", base(intp(10), intp(-1)), aerr.ErrStorageMigration},
		{"both future: metadata first", base(intp(11), intp(4)), aerr.ErrUnsupportedMetadataVersion},
		{"reserved regular", withCol(func(m *Metadata) { m.Indexes = []string{StagedAtColumn} }), aerr.ErrStorageMigration},
		{"reserved computed", withCol(func(m *Metadata) { m.ComputedIndexes.Set(BatchIDColumn, "1") }), aerr.ErrStorageMigration},
		{"reserved exploded alias", withCol(func(m *Metadata) {
			m.ExplodedFieldIndexes = []ExplodedFieldIndex{{"a", "b", StagingRankColumn}}
		}), aerr.ErrStorageMigration},
		{"reserved temporal", withCol(func(m *Metadata) {
			m.TemporalIndexes = []TemporalIndex{{StagingCompletenessColumn, "ts"}}
		}), aerr.ErrStorageMigration},
		{"reserved bloom", withCol(func(m *Metadata) { m.BloomIndexes = []BloomIndex{{StagingHashColumn, 0.01}} }), aerr.ErrStorageMigration},
		{"reserved range", withCol(func(m *Metadata) { m.RangeIndexes = []RangeIndex{{StagedAtColumn}} }), aerr.ErrStorageMigration},
		{"reserved auto-bloom", withCol(func(m *Metadata) { m.AutoBloomIndexes = []string{BatchIDColumn} }), aerr.ErrStorageMigration},
		{"reserved beats future version", func() *Metadata {
			m := base(intp(999), intp(999))
			m.Indexes = []string{StagedAtColumn}
			return m
		}(), aerr.ErrStorageMigration},
		{"_ariadne_ts is not reserved", withCol(func(m *Metadata) { m.Indexes = []string{"_ariadne_ts"} }), nil},
		{"exploded array column is not a key", withCol(func(m *Metadata) {
			m.ExplodedFieldIndexes = []ExplodedFieldIndex{{StagedAtColumn, "b", "c"}}
		}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateDeclaredVersions(tc.m)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if aerr.KindOf(err) != tc.want {
				t.Fatalf("err = %v (kind %v), want kind %v", err, aerr.KindOf(err), tc.want)
			}
			if !errors.Is(err, aerr.ErrStorageMigration) {
				t.Errorf("%v must be a StorageMigration error", err)
			}
		})
	}
	err := ValidateDeclaredVersions(base(intp(999), nil))
	if got, want := err.Error(), "Index metadata version 999 is newer than supported version 10. Upgrade Ariadne."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	err = ValidateDeclaredVersions(base(nil, intp(999)))
	if got, want := err.Error(), "Index storage format version 999 is newer than supported version 3. Upgrade Ariadne."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestNeedsMigration(t *testing.T) {
	for _, tc := range []struct {
		mv, sv *int
		want   bool
	}{
		{intp(10), intp(3), false},
		{nil, nil, true},
		{nil, intp(3), true},
		{intp(10), nil, true},
		{intp(9), intp(3), true},
		{intp(10), intp(2), true},
		{intp(10), intp(1), true},
		{intp(11), intp(3), true}, // not 10: rejected earlier by ValidateDeclaredVersions
	} {
		m := NewMetadata("csv", "s")
		m.MetadataVersion, m.StorageFormatVersion = tc.mv, tc.sv
		if got := NeedsMigration(m); got != tc.want {
			t.Errorf("NeedsMigration(mv=%v, sv=%v) = %v, want %v", deref(tc.mv), deref(tc.sv), got, tc.want)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return "absent"
	}
	return *p
}

func TestReservedStagingColumns(t *testing.T) {
	want := []string{"_ariadne_staged_at", "_ariadne_batch_id", "_ariadne_staging_rank",
		"_ariadne_staging_completeness", "_ariadne_staging_hash"}
	if got := ReservedStagingColumns(); !slices.Equal(got, want) {
		t.Errorf("ReservedStagingColumns() = %v", got)
	}
	for _, c := range want {
		if !IsReservedStagingColumn(c) {
			t.Errorf("%s not reserved", c)
		}
	}
	for _, c := range []string{"_ariadne_ts", "_ARIADNE_STAGED_AT", "filename", ""} {
		if IsReservedStagingColumn(c) {
			t.Errorf("%q reserved", c)
		}
	}
}

func TestColumns(t *testing.T) {
	m := fixtureMetadata(9)
	if got, want := IndexColumns(m), []string{"Test", "Test2", "test", "test2", "user_id", "tag_name",
		"transaction_id", "session_id", "entity_id", "amount", "score"}; !slices.Equal(got, want) {
		t.Errorf("IndexColumns = %v\nwant %v", got, want)
	}
	// user_id is both an exploded alias and a temporal column in v6+ (§4.7 note):
	// listed once.
	if got, want := StorageColumns(m), []string{"Test", "Test2", "test", "test2", "user_id", "tag_name", "entity_id"}; !slices.Equal(got, want) {
		t.Errorf("StorageColumns = %v\nwant %v", got, want)
	}
	if got := StorageColumns(NewMetadata("csv", "s")); got == nil || len(got) != 0 {
		t.Errorf("StorageColumns(empty) = %#v", got)
	}
	for _, tc := range []struct {
		col  string
		want IndexType
	}{
		{"Test", Regular}, {"test2", Computed}, {"tag_name", ExplodedField}, {"session_id", Bloom},
		{"entity_id", Temporal}, {"score", Range},
		{"user_id", ExplodedField}, // exploded takes precedence over temporal
		{"users", 0},               // an array column is not a key
	} {
		got, ok := ExistingType(m, tc.col)
		if got != tc.want || ok != (tc.want != 0) {
			t.Errorf("ExistingType(%q) = %v, %v; want %v", tc.col, got, ok, tc.want)
		}
	}
	for _, tc := range []struct {
		t             IndexType
		name, article string
	}{
		{Regular, "regular", "a"}, {Computed, "computed", "a"}, {ExplodedField, "exploded field", "an"},
		{Bloom, "bloom", "a"}, {Temporal, "temporal", "a"}, {Range, "range", "a"},
	} {
		if tc.t.String() != tc.name || tc.t.Article() != tc.article {
			t.Errorf("%d: %q %q", tc.t, tc.t.Article(), tc.t.String())
		}
	}
}
