package delta

import (
	"fmt"
	"slices"

	"github.com/ariadne-go/ariadne/schema"
)

// maxReaderVersion is the newest reader protocol version this package reads:
// 3, the version from which readers check the explicit readerFeatures list.
const maxReaderVersion = 3

// Reader features. A table that lists a reader feature not in
// supportedReaderFeatures is refused (PROTOCOL.md, "Table Features": a
// reader must not read a table whose reader features it does not know).
//
//   - columnMapping: logical names resolved to physical names (name mode) or
//     Parquet field ids (id mode); partition values keyed by physical name.
//   - deletionVectors: inline, relative and absolute deletion vectors are
//     decoded and their rows skipped.
//   - timestampNtz: read as wall-clock time.Time in UTC.
//   - v2Checkpoint: JSON and Parquet v2 checkpoints with sidecars.
//   - vacuumProtocolCheck: a writer-side rule only; nothing to do on read.
//
// Refused: typeWidening and typeWidening-preview (data files may hold a
// narrower type than the schema, and we do not widen while decoding),
// variantType, variantType-preview and variantShredding-preview (the row
// value model has no variant), and every feature not listed here.
var supportedReaderFeatures = []string{
	"columnMapping",
	"deletionVectors",
	"timestampNtz",
	"v2Checkpoint",
	"vacuumProtocolCheck",
}

// SupportedReaderFeatures returns the reader features this package
// implements.
func SupportedReaderFeatures() []string { return slices.Clone(supportedReaderFeatures) }

// checkReadable refuses protocols and schemas this package cannot read, with
// an *UnsupportedFeatureError naming the first offending feature.
func checkReadable(p *Protocol, sch *schema.Struct) error {
	if p.MinReaderVersion > maxReaderVersion {
		return &UnsupportedFeatureError{Feature: fmt.Sprintf("minReaderVersion %d", p.MinReaderVersion), Op: "read"}
	}
	if p.MinReaderVersion == maxReaderVersion {
		for _, f := range p.ReaderFeatures {
			if !slices.Contains(supportedReaderFeatures, f) {
				return &UnsupportedFeatureError{Feature: f, Op: "read"}
			}
		}
	}
	// A variant column needs variantType, which we refuse above; a table
	// written without declaring it is refused all the same.
	if sch != nil && containsVariant(sch) {
		return &UnsupportedFeatureError{Feature: "variantType", Op: "read"}
	}
	return nil
}

func containsVariant(t schema.Type) bool {
	switch t := t.(type) {
	case *schema.Primitive:
		return t.Name == "variant"
	case *schema.Array:
		return containsVariant(t.Element)
	case *schema.Map:
		return containsVariant(t.Key) || containsVariant(t.Value)
	case *schema.Struct:
		for _, f := range t.Fields {
			if containsVariant(f.Type) {
				return true
			}
		}
	}
	return false
}
