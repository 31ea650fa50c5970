package delta

import (
	"encoding/json"
	"fmt"

	"github.com/ariadne-go/ariadne/schema"
)

// Column mapping (PROTOCOL.md, "Column Mapping"): with
// delta.columnMapping.mode "name" or "id", the data files name their columns
// by physical names (field metadata delta.columnMapping.physicalName) or
// identify them by Parquet field ids (delta.columnMapping.id), and
// partitionValues are keyed by physical name.

// Column mapping metadata keys and modes.
const (
	ColumnMappingModeKey      = "delta.columnMapping.mode"
	ColumnMappingPhysicalName = "delta.columnMapping.physicalName"
	ColumnMappingID           = "delta.columnMapping.id"
)

// ColumnMappingMode is "none", "name" or "id".
type ColumnMappingMode string

// The column mapping modes.
const (
	MappingNone ColumnMappingMode = "none"
	MappingName ColumnMappingMode = "name"
	MappingID   ColumnMappingMode = "id"
)

// columnMapping is a snapshot's resolved column mapping.
type columnMapping struct {
	mode     ColumnMappingMode
	physical *schema.Struct    // the schema with physical names (== logical when mode is none)
	toPhys   map[string]string // top-level logical name → physical name
}

// newColumnMapping resolves the mapping of a table's schema.
func newColumnMapping(m *Metadata, sch *schema.Struct) (columnMapping, error) {
	mode := ColumnMappingMode(m.Configuration[ColumnMappingModeKey])
	if mode == "" {
		mode = MappingNone
	}
	cm := columnMapping{mode: mode, toPhys: make(map[string]string, len(sch.Fields))}
	switch mode {
	case MappingNone:
		cm.physical = sch
		for _, f := range sch.Fields {
			cm.toPhys[f.Name] = f.Name
		}
		return cm, nil
	case MappingName, MappingID:
	default:
		return cm, &UnsupportedFeatureError{Feature: "columnMapping mode " + string(mode), Op: "read"}
	}
	phys, err := physicalType(sch, mode)
	if err != nil {
		return cm, err
	}
	cm.physical = phys.(*schema.Struct)
	for i, f := range sch.Fields {
		cm.toPhys[f.Name] = cm.physical.Fields[i].Name
	}
	return cm, nil
}

// fieldMapping is the column mapping metadata of one field.
type fieldMapping struct {
	PhysicalName string `json:"delta.columnMapping.physicalName"`
	ID           *int64 `json:"delta.columnMapping.id"`
}

// PhysicalName returns the name a field has in the data files: its
// delta.columnMapping.physicalName, or its logical name when it has none.
func PhysicalName(f schema.Field) string {
	if len(f.Metadata) == 0 {
		return f.Name
	}
	var fm fieldMapping
	if json.Unmarshal(f.Metadata, &fm) != nil || fm.PhysicalName == "" {
		return f.Name
	}
	return fm.PhysicalName
}

// physicalType renames every struct field (at any depth) to its physical
// name. The field metadata, including delta.columnMapping.id, is kept so
// that a reader can match by field id in id mode.
func physicalType(t schema.Type, mode ColumnMappingMode) (schema.Type, error) {
	switch t := t.(type) {
	case *schema.Struct:
		out := &schema.Struct{Fields: make([]schema.Field, len(t.Fields))}
		for i, f := range t.Fields {
			var fm fieldMapping
			if len(f.Metadata) > 0 {
				if err := json.Unmarshal(f.Metadata, &fm); err != nil {
					return nil, fmt.Errorf("delta: column mapping metadata of %q: %w", f.Name, err)
				}
			}
			if fm.PhysicalName == "" {
				return nil, fmt.Errorf("%w: column %q has no %s in column mapping mode %q", ErrCorruptLog, f.Name, ColumnMappingPhysicalName, mode)
			}
			if mode == MappingID && fm.ID == nil {
				return nil, fmt.Errorf("%w: column %q has no %s in column mapping mode id", ErrCorruptLog, f.Name, ColumnMappingID)
			}
			ft, err := physicalType(f.Type, mode)
			if err != nil {
				return nil, err
			}
			out.Fields[i] = schema.Field{Name: fm.PhysicalName, Type: ft, Nullable: f.Nullable, Metadata: f.Metadata}
		}
		return out, nil
	case *schema.Array:
		et, err := physicalType(t.Element, mode)
		if err != nil {
			return nil, err
		}
		return &schema.Array{Element: et, ContainsNull: t.ContainsNull}, nil
	case *schema.Map:
		kt, err := physicalType(t.Key, mode)
		if err != nil {
			return nil, err
		}
		vt, err := physicalType(t.Value, mode)
		if err != nil {
			return nil, err
		}
		return &schema.Map{Key: kt, Value: vt, ValueContainsNull: t.ValueContainsNull}, nil
	}
	return t, nil
}

// ColumnMappingMode returns the table's column mapping mode.
func (s *Snapshot) ColumnMappingMode() ColumnMappingMode { return s.colmap.mode }

// PhysicalSchema returns the schema with physical column names, as the data
// files store it (the logical schema when column mapping is off). Shared:
// callers must not modify it.
func (s *Snapshot) PhysicalSchema() *schema.Struct { return s.colmap.physical }
