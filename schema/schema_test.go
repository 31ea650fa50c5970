package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTripFixtures(t *testing.T) {
	// Schemas written by Spark must render back byte for byte.
	for _, s := range []string{
		`{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":false,"metadata":{}},{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"integer","nullable":false,"metadata":{}}]},"containsNull":true},"nullable":false,"metadata":{}}]}`,
		`{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"string","valueType":"decimal(10,2)","valueContainsNull":true},"nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-5f4"}}]}`,
	} {
		st, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Marshal(); got != s {
			t.Errorf("round trip:\n got %s\nwant %s", got, s)
		}
	}
}

func TestDeltaRsSchemasParse(t *testing.T) {
	// Every schemaString in the delta-rs test tables parses (or names its
	// unsupported type) and re-renders to an equivalent schema.
	logs, _ := filepath.Glob("../testdata/delta-rs/*/_delta_log/00000000000000000000.json")
	if len(logs) == 0 {
		t.Skip("test data not present")
	}
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		for _, line := range strings.Split(string(data), "\n") {
			i := strings.Index(line, `"schemaString":`)
			if i < 0 {
				continue
			}
			// Extract the JSON string value with the decoder.
			var v struct {
				MetaData struct{ SchemaString string } `json:"metaData"`
			}
			if err := json.Unmarshal([]byte(line), &v); err != nil || v.MetaData.SchemaString == "" {
				continue
			}
			st, err := Parse(v.MetaData.SchemaString)
			if err != nil {
				t.Errorf("%s: %v", l, err)
				continue
			}
			again, err := Parse(st.Marshal())
			if err != nil || !Equal(st, again) {
				t.Errorf("%s: re-render differs", l)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	st, err := Parse(`{"type":"struct","fields":[{"name":"id","type":"integer","nullable":true,"metadata":{}},{"name":"address","type":{"type":"struct","fields":[{"name":"city","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"n","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{"id": true, "address.city": true, "address.zip": false, "phone": false, "tags.n": false, "ID": false} {
		if _, ok := st.Resolve(path); ok != want {
			t.Errorf("Resolve(%q) = %v, want %v", path, ok, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{`not a real schema`, `"integer"`, `{"type":"struct","fields":[{"name":"a"}]}`, `{"type":"udt"}`, `{"type":"struct","fields":[{"name":"a","type":"uint"}]}`} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q): want error", s)
		}
	}
}
