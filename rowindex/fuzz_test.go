package rowindex

import (
	"encoding/json"
	"testing"

	fastjson "github.com/segmentio/encoding/json"
)

// FuzzDecodeCursor: a cursor from a client never panics; a refusal is
// ErrBadQuery.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(cursor{}.encode())
	f.Add("eyJpIjowfQ")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = decodeCursor(s)
	})
}

// FuzzDecodeStored: the encodings stored in fragments (hoisted values, value
// lists, keys) never panic on any bytes.
func FuzzDecodeStored(f *testing.F) {
	f.Add(appendValue(nil, int64(7)))
	f.Add(appendValue(nil, "x"))
	f.Add(appendIntKey(nil, -3))
	f.Add([]byte{tagBytes, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeHoisted(b)
		_, _ = decodeValues(b)
		_, _ = DecodeKey(b)
	})
}

// FuzzManifest: a manifest of any content, decoded as a reader does, never
// panics in its definition's checks.
func FuzzManifest(f *testing.F) {
	b, _ := json.Marshal(Manifest{FormatVersion: FormatVersion, Version: 1, Definition: Definition{Name: "u", Key: "user_id"}})
	f.Add(b)
	f.Add([]byte(`{"definition":{"name":"../x","aggregates":[{"op":"sum"}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Manifest
		if fastjson.Unmarshal(b, &m) != nil { // as loadManifest decodes it
			return
		}
		_ = m.Definition.Validate()
		for _, a := range m.Definition.Aggregates {
			_, _ = ParseAggregate(a.String())
		}
	})
}
