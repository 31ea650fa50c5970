package delta

import (
	"encoding/json"
	"strconv"
)

// Action is one line of a Delta commit file (or one row of a checkpoint):
// exactly one of its fields is set. The JSON field names are the protocol's
// (PROTOCOL.md, "Actions"); encoding an Action with encoding/json yields a
// valid commit line.
type Action struct {
	Add                *AddFile            `json:"add,omitempty"`
	Remove             *RemoveFile         `json:"remove,omitempty"`
	MetaData           *Metadata           `json:"metaData,omitempty"`
	Protocol           *Protocol           `json:"protocol,omitempty"`
	CommitInfo         json.RawMessage     `json:"commitInfo,omitempty"` // kept raw: its content is free-form
	Txn                *Txn                `json:"txn,omitempty"`
	DomainMetadata     *DomainMetadata     `json:"domainMetadata,omitempty"`
	CDC                *AddCDCFile         `json:"cdc,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
}

// PartitionValues maps a partition column's name (its physical name in a
// column-mapped table) to the serialised partition value; a nil pointer is a
// null value. Values use the protocol's "Partition Value Serialization".
type PartitionValues map[string]*string

// Get returns the value for col and whether it is non-null.
func (p PartitionValues) Get(col string) (string, bool) {
	v, ok := p[col]
	if !ok || v == nil {
		return "", false
	}
	return *v, true
}

// AddFile is the "add" action: a data file that is part of the table.
type AddFile struct {
	// Path is the file's path as found in the log: relative to the table
	// root and URL-encoded (RFC 2396), or an absolute URI. Snapshots keep it
	// as logged; DecodePath gives the file name.
	Path             string          `json:"path"`
	PartitionValues  PartitionValues `json:"partitionValues"`
	Size             int64           `json:"size"`
	ModificationTime int64           `json:"modificationTime"` // ms since the epoch
	DataChange       bool            `json:"dataChange"`
	// Stats is the per-file statistics JSON ({"numRecords":..,"minValues":..}),
	// "" when absent. Checkpoints may carry stats_parsed instead; the reader
	// renders those back into this JSON form.
	Stats                   string                    `json:"stats,omitempty"`
	Tags                    map[string]string         `json:"tags,omitempty"`
	DeletionVector          *DeletionVectorDescriptor `json:"deletionVector,omitempty"`
	BaseRowID               *int64                    `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64                    `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      string                    `json:"clusteringProvider,omitempty"`
}

// RemoveFile is the "remove" action: a tombstone for a data file.
type RemoveFile struct {
	Path                    string                    `json:"path"`
	DeletionTimestamp       *int64                    `json:"deletionTimestamp,omitempty"` // ms since the epoch
	DataChange              bool                      `json:"dataChange"`
	ExtendedFileMetadata    bool                      `json:"extendedFileMetadata,omitempty"`
	PartitionValues         PartitionValues           `json:"partitionValues,omitempty"`
	Size                    *int64                    `json:"size,omitempty"`
	Stats                   string                    `json:"stats,omitempty"`
	Tags                    map[string]string         `json:"tags,omitempty"`
	DeletionVector          *DeletionVectorDescriptor `json:"deletionVector,omitempty"`
	BaseRowID               *int64                    `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64                    `json:"defaultRowCommitVersion,omitempty"`
}

// AddCDCFile is the "cdc" action: a change-data file. Snapshots ignore it
// (it never holds table rows); it is decoded so that commits round-trip.
type AddCDCFile struct {
	Path            string            `json:"path"`
	PartitionValues PartitionValues   `json:"partitionValues"`
	Size            int64             `json:"size"`
	DataChange      bool              `json:"dataChange"`
	Tags            map[string]string `json:"tags,omitempty"`
}

// Format is the data file format of a table ("parquet").
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the "metaData" action: the table's schema, partitioning and
// configuration.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	CreatedTime      *int64            `json:"createdTime,omitempty"` // ms since the epoch
	Configuration    map[string]string `json:"configuration"`
}

// normalize replaces nil collections with empty ones: the protocol requires
// partitionColumns (an array), configuration and format.options (maps), and
// Spark fails with a NullPointerException on null (found by the interop
// harness, interop/go/delta_bugs_test.go).
func (m *Metadata) normalize() {
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
	if m.Format.Provider == "" {
		m.Format.Provider = "parquet"
	}
}

// Protocol is the "protocol" action: the reader and writer versions and,
// from reader version 3 / writer version 7, the explicit feature lists.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Txn is the "txn" action: the last version an application committed, for
// idempotent writes.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"` // ms since the epoch
}

// DomainMetadata is the "domainMetadata" action: configuration owned by a
// named domain ("delta.clustering", or a user domain). Removed marks a
// tombstone.
type DomainMetadata struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// CheckpointMetadata is the "checkpointMetadata" action of a v2 checkpoint.
type CheckpointMetadata struct {
	Version int64             `json:"version"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// Sidecar is the "sidecar" action of a v2 checkpoint: a file under
// _delta_log/_sidecars/ holding part of the checkpoint's add and remove
// actions.
type Sidecar struct {
	Path             string            `json:"path"` // relative to _delta_log/_sidecars/, or absolute
	SizeInBytes      int64             `json:"sizeInBytes"`
	ModificationTime int64             `json:"modificationTime"`
	Tags             map[string]string `json:"tags,omitempty"`
}

// DeletionVectorDescriptor locates a deletion vector: the set of row
// indexes of a data file that are deleted (PROTOCOL.md, "Deletion Vectors").
type DeletionVectorDescriptor struct {
	// StorageType is "u" (a file next to the table, named from a UUID
	// encoded in PathOrInlineDV), "i" (inline: PathOrInlineDV is the
	// z85-encoded bitmap) or "p" (PathOrInlineDV is an absolute path).
	StorageType    string `json:"storageType"`
	PathOrInlineDV string `json:"pathOrInlineDv"`
	// Offset is the byte offset of the vector in its file ("u" and "p").
	Offset      *int32 `json:"offset,omitempty"`
	SizeInBytes int32  `json:"sizeInBytes"`
	Cardinality int64  `json:"cardinality"` // number of deleted rows
}

// UniqueID identifies the deletion vector: storage type, path or inline
// data, and "@offset" when there is an offset. Together with the file path it
// is the key under which log replay reconciles add and remove actions.
func (d *DeletionVectorDescriptor) UniqueID() string {
	if d == nil {
		return ""
	}
	id := d.StorageType + d.PathOrInlineDV
	if d.Offset != nil {
		id += "@" + strconv.FormatInt(int64(*d.Offset), 10)
	}
	return id
}
