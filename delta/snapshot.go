package delta

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// Snapshot is the state of a table at one version: protocol, metadata,
// active files, tombstones, application transactions and domain metadata.
// A Snapshot is immutable and safe for concurrent use; the slices and maps
// its accessors return are copies the caller may modify.
type Snapshot struct {
	st        store.Store
	version   int64
	protocol  Protocol
	metadata  Metadata
	schema    *schema.Struct // logical schema
	files     []AddFile      // sorted by Path (decoded)
	tombs     []RemoveFile   // sorted by Path (decoded)
	txns      map[string]Txn
	domains   map[string]DomainMetadata
	colmap    columnMapping
	logKeys   map[int64]string // version → commit key, for CommitInfo
	cpVersion int64            // version of the checkpoint used, -1 if none
}

// Version returns the snapshot's table version.
func (s *Snapshot) Version() int64 { return s.version }

// Protocol returns the table's protocol action.
func (s *Snapshot) Protocol() Protocol {
	p := s.protocol
	p.ReaderFeatures = append([]string(nil), p.ReaderFeatures...)
	p.WriterFeatures = append([]string(nil), p.WriterFeatures...)
	return p
}

// Metadata returns the table's metaData action.
func (s *Snapshot) Metadata() Metadata {
	m := s.metadata
	m.PartitionColumns = append([]string{}, m.PartitionColumns...) // [] stays [], never null
	m.Configuration = maps.Clone(m.Configuration)
	m.Format.Options = maps.Clone(m.Format.Options)
	return m
}

// Schema returns the table's logical schema (field names as users see them;
// column mapping metadata is kept in each field's Metadata). The returned
// struct is shared: callers must not modify it.
func (s *Snapshot) Schema() *schema.Struct { return s.schema }

// PartitionColumns returns the logical names of the partition columns.
func (s *Snapshot) PartitionColumns() []string {
	return append([]string(nil), s.metadata.PartitionColumns...)
}

// Files returns the active data files sorted by path. Paths are as found in
// the log (URL-encoded, relative to the table root or an absolute URI), so
// a remove action can name them unchanged; DecodePath gives the file name.
func (s *Snapshot) Files() []AddFile { return append([]AddFile(nil), s.files...) }

// NumFiles returns the number of active files.
func (s *Snapshot) NumFiles() int { return len(s.files) }

// Tombstones returns the remove actions still in the log state (files
// removed from the table that VACUUM may delete once their retention has
// passed), sorted by path (as logged).
func (s *Snapshot) Tombstones() []RemoveFile { return append([]RemoveFile(nil), s.tombs...) }

// AppTransactions returns the latest txn action per application id.
func (s *Snapshot) AppTransactions() map[string]Txn { return maps.Clone(s.txns) }

// DomainMetadata returns the live (not removed) domain metadata per domain.
func (s *Snapshot) DomainMetadata() map[string]DomainMetadata { return maps.Clone(s.domains) }

// Store returns the store of the table the snapshot belongs to.
func (s *Snapshot) Store() store.Store { return s.st }

// NumRecords returns the record count from the file's stats, and false when
// the stats are absent or carry no numRecords.
func (a *AddFile) NumRecords() (int64, bool) {
	if a.Stats == "" {
		return 0, false
	}
	var st struct {
		NumRecords *int64 `json:"numRecords"`
	}
	if err := json.Unmarshal([]byte(a.Stats), &st); err != nil || st.NumRecords == nil {
		return 0, false
	}
	return *st.NumRecords, true
}

func sortFiles(files []AddFile) {
	sort.Slice(files, func(i, j int) bool {
		if files[i].Path != files[j].Path {
			return files[i].Path < files[j].Path
		}
		return files[i].DeletionVector.UniqueID() < files[j].DeletionVector.UniqueID()
	})
}

func (s *Snapshot) String() string {
	return fmt.Sprintf("delta.Snapshot{version: %d, files: %d}", s.version, len(s.files))
}
