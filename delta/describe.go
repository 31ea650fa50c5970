package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// TableInfo summarises a snapshot for listings such as `ariadne delta ls`.
type TableInfo struct {
	Version          int64             `json:"version"`
	Protocol         Protocol          `json:"protocol"`
	Schema           *schema.Struct    `json:"-"`
	SchemaString     string            `json:"schema"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration,omitempty"`
	ColumnMapping    ColumnMappingMode `json:"columnMapping"`
	Files            []FileInfo        `json:"files"`
	NumFiles         int               `json:"numFiles"`
	SizeBytes        int64             `json:"sizeBytes"` // sum of file sizes
	// NumRecords is the sum of the files' numRecords minus deleted rows;
	// RecordsKnown is false when a file has no numRecords in its stats.
	NumRecords   int64 `json:"numRecords"`
	RecordsKnown bool  `json:"recordsKnown"`
}

// FileInfo describes one active file.
type FileInfo struct {
	Path            string            `json:"path"` // decoded
	Size            int64             `json:"size"`
	NumRecords      *int64            `json:"numRecords,omitempty"` // from stats, before deletions
	DeletedRows     int64             `json:"deletedRows,omitempty"`
	PartitionValues map[string]string `json:"partitionValues,omitempty"` // nulls omitted
}

// Describe summarises the snapshot without reading data files.
func Describe(ctx context.Context, s *Snapshot) TableInfo {
	info := TableInfo{
		Version:          s.version,
		Protocol:         s.Protocol(),
		Schema:           s.schema,
		SchemaString:     s.metadata.SchemaString,
		PartitionColumns: s.PartitionColumns(),
		Configuration:    s.Metadata().Configuration,
		ColumnMapping:    s.colmap.mode,
		NumFiles:         len(s.files),
		RecordsKnown:     true,
	}
	for _, f := range s.files {
		p, err := DecodePath(f.Path)
		if err != nil {
			p = f.Path
		}
		fi := FileInfo{Path: p, Size: f.Size}
		if n, ok := f.NumRecords(); ok {
			fi.NumRecords = &n
			info.NumRecords += n
		} else {
			info.RecordsKnown = false
		}
		if f.DeletionVector != nil {
			fi.DeletedRows = f.DeletionVector.Cardinality
			info.NumRecords -= fi.DeletedRows
		}
		for k, v := range f.PartitionValues {
			if v != nil {
				if fi.PartitionValues == nil {
					fi.PartitionValues = make(map[string]string)
				}
				fi.PartitionValues[k] = *v
			}
		}
		info.SizeBytes += f.Size
		info.Files = append(info.Files, fi)
	}
	return info
}

// CommitInfo returns the commitInfo action of the commit of version (which
// must be at most the snapshot's version), decoded as a JSON object, or nil
// when the commit has none. It reads the commit file (one read).
func (s *Snapshot) CommitInfo(ctx context.Context, version int64) (map[string]any, error) {
	if version < 0 || version > s.version {
		return nil, fmt.Errorf("%w: version %d (snapshot is at %d)", ErrVersionNotFound, version, s.version)
	}
	actions, err := readCommit(ctx, s.st, CommitKey(version))
	if errors.Is(err, store.ErrNotExist) {
		return nil, fmt.Errorf("%w: commit %d was cleaned up: %w", ErrVersionNotFound, version, err)
	}
	if err != nil {
		return nil, err
	}
	for _, a := range actions {
		if a.CommitInfo != nil {
			var m map[string]any
			if err := json.Unmarshal(a.CommitInfo, &m); err != nil {
				return nil, corrupt(CommitKey(version), 0, err)
			}
			return m, nil
		}
	}
	return nil, nil
}
