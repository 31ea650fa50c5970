package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/schema"
)

// BenchmarkJSONRow: a joined row of the listening lake as a JSON line
// (join's JSON sink).
func BenchmarkJSONRow(b *testing.B) {
	st := &schema.Struct{Fields: []schema.Field{{Name: "user_id", Type: schema.Long}, {Name: "ts", Type: schema.Timestamp},
		{Name: "track_uri", Type: schema.String}, {Name: "duration_ms", Type: schema.Long}, {Name: "context", Type: schema.String}}}
	row := []any{int64(123456), time.UnixMicro(1717243384123456).UTC(), "spotify:track:0000000000000000161036", int64(170315),
		`{"type":"liked-songs","uri":"spotify:liked-songs:205df07a","device":"speaker","shuffle":true}`}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		jsonRow(&buf, row, st)
	}
}
