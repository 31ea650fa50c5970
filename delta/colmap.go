package delta

import "github.com/ariadne-go/ariadne/schema"

type columnMapping struct{}

func newColumnMapping(m *Metadata, sch *schema.Struct) (columnMapping, error) {
	return columnMapping{}, nil
}
