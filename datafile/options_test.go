package datafile

import (
	"errors"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// CSV options and modes, each case a small file written to t.TempDir().
func TestCSVOptions(t *testing.T) {
	tests := []struct {
		name    string
		content string
		schema  string
		opts    map[string]string
		want    []string
	}{
		{"nulls by default", "a,,\"\",x\n", "s string, i int, e string, t string", nil,
			[]string{`["a",null,null,"x"]`}},
		{"nullValue", "NA,,\"\"\n", "s string, t string, u string", map[string]string{"nullValue": "NA"},
			[]string{`[null,null,""]`}},
		{"emptyValue", "x,\"\"\n", "a string, b string", map[string]string{"nullValue": "NA", "emptyValue": "EMPTY"},
			[]string{`["x","EMPTY"]`}},
		{"sep tab", "1\ta b\n", "i int, s string", map[string]string{"sep": `\t`}, []string{`[1,"a b"]`}},
		{"delimiter multi", "1||2\n", "i int, j int", map[string]string{"delimiter": "||"}, []string{`[1,2]`}},
		{"quoted sep and escapes", `"a,b","say \"hi\"","x""y"` + "\n", "a string, b string, c string", nil,
			[]string{`["a,b","say \"hi\"","x\"y"]`}},
		{"custom quote and escape", "'a;b';c\n", "a string, b string", map[string]string{"quote": "'", "sep": ";"},
			[]string{`["a;b","c"]`}},
		{"comment", "#skip,me\n1,2\n", "i int, j int", map[string]string{"comment": "#"}, []string{`[1,2]`}},
		{"empty lines skipped", "1,2\n\n\r\n3,4\r\n", "i int, j int", nil, []string{`[1,2]`, `[3,4]`}},
		{"permissive bad field", "x,2\n", "i int, j int", nil, []string{`[null,2]`}},
		{"permissive short and long", "1\n1,2,3\n", "i int, j int", nil, []string{`[1,null]`, `[1,2]`}},
		{"dropmalformed", "x,2\n1\n3,4\n", "i int, j int", map[string]string{"mode": "DROPMALFORMED"}, []string{`[3,4]`}},
		{"failfast", "1,2\nx,2\n", "i int, j int", map[string]string{"mode": "failfast"}, nil},
		{"multiLine", "1,\"two\nlines\"\n2,x\n", "i int, s string", map[string]string{"multiLine": "true"},
			[]string{`[1,"two\nlines"]`, `[2,"x"]`}},
		{"no multiLine splits quoted newline", "1,\"two\nlines\"\n", "i int, s string", nil,
			[]string{`[1,"two"]`, `[null,null]`}},
		{"types", "true,-7,12345678901,1.5E2,NaN,-Inf,3.14159,2024-01-15\n", "b boolean, s smallint, l bigint, d double, n double, m double, dec decimal(5;2), dt date", nil,
			[]string{`[true,-7,12345678901,150,NaN,-Inf,3.14,2024-01-15]`}},
		{"decimal overflow", "12345.6\n", "d decimal(5;2)", nil, []string{`[null]`}},
		{"int overflow", "128,2147483648\n", "b tinyint, i int", nil, []string{`[null,null]`}},
		{"lenient timestamps", "2024-01-15 10:00:00,2024-01-15T10:00:00.123456Z,2024-01-15T12:00:00+02:00,2024-01-15\n",
			"a timestamp, b timestamp, c timestamp, d timestamp", nil,
			[]string{`[2024-01-15T10:00:00.000000Z,2024-01-15T10:00:00.123456Z,2024-01-15T10:00:00.000000Z,2024-01-15]`}},
		{"timeZone", "2024-01-15 10:00:00\n", "a timestamp", map[string]string{"timeZone": "America/New_York"},
			[]string{`[2024-01-15T15:00:00.000000Z]`}},
		{"timestampFormat", "15/01/2024 10:30,bad\n", "a timestamp, b timestamp", map[string]string{"timestampFormat": "dd/MM/yyyy HH:mm"},
			[]string{`[2024-01-15T10:30:00.000000Z,null]`}},
		{"dateFormat", "01.02.2024,2024-02-01\n", "a date, b date", map[string]string{"dateFormat": "dd.MM.yyyy"},
			[]string{`[2024-02-01,null]`}},
		{"timestamp_ntz", "2024-01-15 10:00:00\n", "a timestamp_ntz", map[string]string{"timeZone": "Asia/Tokyo"},
			[]string{`[2024-01-15T10:00:00.000000Z]`}},
		{"header only", "a,b\n", "a int, b int", map[string]string{"header": "true"}, nil},
		{"no trailing newline", "1,2", "a int, b int", nil, []string{`[1,2]`}},
		{"whitespace kept", " 1 , x \n", "a string, b string", nil, []string{`[" 1 "," x "]`}},
		{"whitespace trimmed", " a , x \n", "a string, b string", map[string]string{"ignoreLeadingWhiteSpace": "true", "ignoreTrailingWhiteSpace": "true"},
			[]string{`["a","x"]`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uri := writeFile(t, "f.csv", tc.content)
			wantErr := map[string]error{"failfast": ErrMalformedRecord}[tc.name]
			got, err := readAll(t, uri, Spec{Format: "csv", Schema: mustSchema(t, tc.schema), Options: tc.opts}, nil)
			if wantErr != nil {
				if !errors.Is(err, wantErr) || !isFileError(err, uri) {
					t.Fatalf("err = %v, want %v in a *FileError", err, wantErr)
				}
				var re *RecordError
				if !errors.As(err, &re) || re.Record != 2 {
					t.Errorf("record error %+v, want record 2", re)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestJSONOptions(t *testing.T) {
	nested := `{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}},{"name":"d","type":"double","nullable":true,"metadata":{}},{"name":"n","type":{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},{"name":"m","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":true},"nullable":true,"metadata":{}}]}`
	tests := []struct {
		name    string
		content string
		opts    map[string]string
		want    []string
	}{
		{"by name, missing, extra", `{"s":"x","zzz":1,"a":1}` + "\n", nil, []string{`[1,"x",null,null,null]`}},
		{"case-sensitive", `{"A":1,"S":"x"}` + "\n", nil, []string{`[null,null,null,null,null]`}},
		{"coercion", `{"a":1,"s":12.50,"d":3,"n":{"x":5},"m":{"k":1,"j":2}}` + "\n", nil,
			[]string{`[1,"12.50",3,[5],{"k":1,"j":2}]`}},
		{"string from object", `{"s":{"b": [1, 2]}}` + "\n", nil, []string{`[null,"{\"b\":[1,2]}",null,null,null]`}},
		{"float for int is malformed", `{"a":1.5,"s":"kept"}` + "\n", nil, []string{`[null,"kept",null,null,null]`}},
		{"NaN strings", `{"d":"NaN"}` + "\n" + `{"d":"-Infinity"}` + "\n", nil, []string{`[null,null,NaN,null,null]`, `[null,null,-Inf,null,null]`}},
		{"syntax error row of nulls", "{\"a\":1\n{\"a\":2}\n", nil, []string{`[null,null,null,null,null]`, `[2,null,null,null,null]`}},
		{"dropmalformed", "{\"a\":1\n{\"a\":\"x\"}\n{\"a\":3}\n", map[string]string{"mode": "DROPMALFORMED"}, []string{`[3,null,null,null,null]`}},
		{"failfast", "{\"a\":1}\n{\"a\":true}\n", map[string]string{"mode": "FAILFAST"}, nil},
		{"array line", `[{"a":1},{"a":2}]` + "\n\n", nil, []string{`[1,null,null,null,null]`, `[2,null,null,null,null]`}},
		{"multiLine object", "{\n \"a\": 7\n}\n", map[string]string{"multiLine": "true"}, []string{`[7,null,null,null,null]`}},
		{"multiLine array", "[\n{\"a\": 1},\n 5,\n{\"a\": 2}\n]", map[string]string{"multiLine": "true"},
			[]string{`[1,null,null,null,null]`, `[null,null,null,null,null]`, `[2,null,null,null,null]`}},
		{"multiLine empty", "  \n", map[string]string{"multiLine": "true"}, nil},
		{"multiLine truncated", "[{\"a\": 1}, {\"a\": ", map[string]string{"multiLine": "true"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uri := writeFile(t, "f.json", tc.content)
			wantErr := map[string]error{"failfast": ErrMalformedRecord, "multiLine truncated": ErrCorruptFile}[tc.name]
			got, err := readAll(t, uri, Spec{Format: "json", Schema: mustSchema(t, nested), Options: tc.opts}, nil)
			if wantErr != nil {
				if !errors.Is(err, wantErr) || !isFileError(err, uri) {
					t.Fatalf("err = %v, want %v in a *FileError", err, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	for _, f := range []string{"csv", "json", "parquet"} {
		uri := uriOf(t, t.TempDir()+"/nope."+f)
		_, err := readAll(t, uri, Spec{Format: f, Schema: mustSchema(t, "a int")}, nil)
		if !errors.Is(err, store.ErrNotExist) || !isFileError(err, uri) {
			t.Errorf("%s: %v, want store.ErrNotExist in a *FileError", f, err)
		}
	}
}
