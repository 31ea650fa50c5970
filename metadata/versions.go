package metadata

import (
	"slices"

	"github.com/ariadne-go/ariadne/aerr"
)

// Reserved staging column names (§3.1 step 2, §12 item 6): the internal
// columns of a staged batch. No index may be keyed by one of them.
// "_ariadne_ts" (a temporal working name) is deliberately not reserved.
const (
	StagedAtColumn            = "_ariadne_staged_at"
	BatchIDColumn             = "_ariadne_batch_id"
	StagingRankColumn         = "_ariadne_staging_rank"
	StagingCompletenessColumn = "_ariadne_staging_completeness"
	StagingHashColumn         = "_ariadne_staging_hash"
)

// ReservedStagingColumns returns the reserved staging column names, in the
// order the spec lists them (a fresh slice the caller may keep).
func ReservedStagingColumns() []string {
	return []string{StagedAtColumn, BatchIDColumn, StagingRankColumn, StagingCompletenessColumn, StagingHashColumn}
}

// IsReservedStagingColumn reports whether name is a reserved staging column
// name (exact, case-sensitive match, as in the original).
func IsReservedStagingColumn(name string) bool {
	switch name {
	case StagedAtColumn, BatchIDColumn, StagingRankColumn, StagingCompletenessColumn, StagingHashColumn:
		return true
	}
	return false
}

// ValidateDeclaredVersions runs the declared-version validation that starts
// every storage preflight (§4.8), before any physical or metadata write. In
// order, it fails with:
//
//  1. aerr.ErrStorageMigration if a configured column name (regular,
//     computed, exploded alias, temporal, bloom, range or auto-bloom) is a
//     reserved staging name;
//  2. aerr.ErrUnsupportedMetadataVersion if metadata_version >
//     CurrentMetadataVersion;
//  3. aerr.ErrStorageMigration if the declared storage version (absent = 1)
//     is below 1, aerr.ErrUnsupportedStorageFormatVersion if it is above
//     CurrentStorageFormatVersion.
//
// Both Unsupported… kinds are also ErrStorageMigration (see package aerr).
func ValidateDeclaredVersions(m *Metadata) error {
	for _, c := range ConfiguredColumns(m) {
		if IsReservedStagingColumn(c) {
			return aerr.New(aerr.ErrStorageMigration,
				"Index metadata configures column '%s', which is reserved for Ariadne staging metadata", c)
		}
	}
	if m.MetadataVersion != nil && *m.MetadataVersion > CurrentMetadataVersion {
		return aerr.UnsupportedMetadataVersion(*m.MetadataVersion, CurrentMetadataVersion)
	}
	switch sv := m.DeclaredStorageFormatVersion(); {
	case sv < BaselineStorageFormatVersion:
		return aerr.New(aerr.ErrStorageMigration,
			"Index storage format version %d is invalid; versions start at %d", sv, BaselineStorageFormatVersion)
	case sv > CurrentStorageFormatVersion:
		return aerr.UnsupportedStorageFormatVersion(sv, CurrentStorageFormatVersion)
	}
	return nil
}

// NeedsMigration reports whether the preflight fast path must take the
// update lock (§4.8): storage_format_version absent or below
// CurrentStorageFormatVersion, or metadata_version absent or not
// CurrentMetadataVersion. Call it after ValidateDeclaredVersions; it does
// not itself reject versions that are too new.
func NeedsMigration(m *Metadata) bool {
	return m.StorageFormatVersion == nil || *m.StorageFormatVersion < CurrentStorageFormatVersion ||
		m.MetadataVersion == nil || *m.MetadataVersion != CurrentMetadataVersion
}

// ConfiguredColumns returns every column name the record configures, for the
// reserved-name check: regular, computed names, exploded aliases, bloom columns, temporal
// value columns, range and auto-bloom columns, without duplicates.
func ConfiguredColumns(m *Metadata) []string {
	cols := IndexColumns(m)
	for _, a := range m.AutoBloomIndexes {
		cols = appendNew(cols, a)
	}
	return cols
}

// appendNew appends c to cols unless it is already there.
func appendNew(cols []string, c string) []string {
	if slices.Contains(cols, c) {
		return cols
	}
	return append(cols, c)
}
