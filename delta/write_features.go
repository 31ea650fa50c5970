package delta

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/schema"
)

// maxWriterVersion is the newest writer protocol version we write: 7, the
// version with an explicit writerFeatures list.
const maxWriterVersion = 7

// writeOp is the kind of change a transaction makes, for feature checks.
type writeOp int

const (
	opWrite    writeOp = iota // adds rows (append, the insert side of upsert)
	opModify                  // removes or changes rows (delete, upsert)
	opOptimize                // rearranges rows without changing them
)

// Writer features (PROTOCOL.md, "Table Features") and how we honour them.
//
//   - appendOnly: Delete, Upsert and DeleteKeys are refused when
//     delta.appendOnly is true.
//   - invariants, checkConstraints, generatedColumns, identityColumns:
//     honoured vacuously: we refuse to write when the schema or
//     configuration actually uses them (we do not evaluate SQL).
//   - changeDataFeed: appends are fine (no CDC file needed); changes of
//     existing rows are refused while delta.enableChangeDataFeed is true.
//   - columnMapping: data files are written with physical names and field
//     ids; schema evolution is refused.
//   - deletionVectors: we never write deletion vectors; rewriting a file
//     applies its vector (deleted rows stay deleted) and removes it with
//     its descriptor.
//   - timestampNtz, domainMetadata, vacuumProtocolCheck, v2Checkpoint:
//     nothing to do when writing (we write classic checkpoints only when
//     v2Checkpoint is not enabled).
//
// Refused (ErrUnsupportedFeature): rowTracking, inCommitTimestamp,
// clustering, icebergCompat*, typeWidening*, variantType*, collations and
// every unknown feature.
var supportedWriterFeatures = []string{
	"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns",
	"columnMapping", "identityColumns", "deletionVectors", "timestampNtz", "domainMetadata",
	"vacuumProtocolCheck", "v2Checkpoint",
}

// SupportedWriterFeatures returns the writer features this package honours.
func SupportedWriterFeatures() []string { return slices.Clone(supportedWriterFeatures) }

// checkWritable refuses a write of kind op to a table whose protocol,
// configuration or schema needs something we do not implement.
func checkWritable(p *Protocol, md *Metadata, sch *schema.Struct, op writeOp) error {
	refuse := func(f string) error { return &UnsupportedFeatureError{Feature: f, Op: "write"} }
	if p.MinWriterVersion > maxWriterVersion {
		return refuse(fmt.Sprintf("minWriterVersion %d", p.MinWriterVersion))
	}
	if err := checkReadable(p, sch); err != nil {
		return err
	}
	if p.MinWriterVersion == maxWriterVersion {
		for _, f := range p.WriterFeatures {
			if !slices.Contains(supportedWriterFeatures, f) {
				return refuse(f)
			}
		}
	}
	conf := md.Configuration
	if op == opModify && strings.EqualFold(conf["delta.appendOnly"], "true") {
		return refuse("appendOnly (delta.appendOnly=true forbids deleting or updating rows)")
	}
	if op == opModify && strings.EqualFold(conf["delta.enableChangeDataFeed"], "true") {
		return refuse("changeDataFeed (change data files are not written)")
	}
	for k := range conf {
		if strings.HasPrefix(k, "delta.constraints.") {
			return refuse("checkConstraints (" + k + ")")
		}
	}
	if strings.EqualFold(conf["delta.enableRowTracking"], "true") {
		return refuse("rowTracking")
	}
	if strings.EqualFold(conf["delta.enableInCommitTimestamps"], "true") {
		return refuse("inCommitTimestamp")
	}
	if p.MinWriterVersion < maxWriterVersion {
		if mode := conf[ColumnMappingModeKey]; mode != "" && mode != "none" && p.MinWriterVersion < 5 {
			return refuse("columnMapping with minWriterVersion < 5")
		}
	}
	if sch != nil {
		return checkSchemaWritable(sch)
	}
	return nil
}

// checkSchemaWritable refuses schemas using invariants, generated or
// identity columns, which we would have to evaluate on write.
func checkSchemaWritable(sch *schema.Struct) error {
	var walk func(t schema.Type) error
	walk = func(t schema.Type) error {
		switch t := t.(type) {
		case *schema.Struct:
			for _, f := range t.Fields {
				if len(f.Metadata) > 0 {
					var md map[string]json.RawMessage
					if json.Unmarshal(f.Metadata, &md) == nil {
						for k := range md {
							switch {
							case k == "delta.invariants":
								return &UnsupportedFeatureError{Feature: "invariants (column " + f.Name + ")", Op: "write"}
							case k == "delta.generationExpression":
								return &UnsupportedFeatureError{Feature: "generatedColumns (column " + f.Name + ")", Op: "write"}
							case strings.HasPrefix(k, "delta.identity."):
								return &UnsupportedFeatureError{Feature: "identityColumns (column " + f.Name + ")", Op: "write"}
							}
						}
					}
				}
				if err := walk(f.Type); err != nil {
					return err
				}
			}
		case *schema.Array:
			return walk(t.Element)
		case *schema.Map:
			if err := walk(t.Key); err != nil {
				return err
			}
			return walk(t.Value)
		case *schema.Primitive:
			if t.Name == "variant" || t.Name == "null" {
				return &UnsupportedFeatureError{Feature: "type " + t.Name, Op: "write"}
			}
		}
		return nil
	}
	return walk(sch)
}
