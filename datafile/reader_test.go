package datafile

import (
	"errors"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
)

// The §8.0 data files, read as the Spark library's tests read them; the
// expected rows are the spec's row listings.
func TestSparkTestFiles(t *testing.T) {
	data := testdata + "/ariadne/data/"
	csvH := map[string]string{"header": "true"}
	multi := map[string]string{"multiLine": "true"}
	tests := []struct {
		file   string
		format string
		schema string
		opts   map[string]string
		cols   []string
		want   []string
	}{
		{"table1_part0.csv", "csv", "Id int, Version int, Value double", csvH, nil,
			[]string{"[1,1,5]", "[2,1,3]", "[3,1,4]", "[1,2,4.5]"}},
		{"table1_part1.csv", "csv", "Id int, Version int, Value double", csvH, []string{"Value", "Id"},
			[]string{"[2,4]", "[9,4]", "[4,3]", "[5,1]"}},
		{"table2_part0.csv", "csv", "Id int, Version int", csvH, nil, []string{"[1,3]"}},
		{"table3_part0.csv", "csv", "Id string, Value double", csvH, nil,
			[]string{`["cat1_1",5]`, `["cat1_2",3]`, `["cat2_1",4]`, `["cat2_2",4.5]`}},
		{"table4_part1.csv", "csv", "Id string, Status string", csvH, nil, []string{`["cat4_1","Bad"]`}},
		{"temporal_part1.csv", "csv", "Id int, Value double, UpdatedAt timestamp", csvH, nil, []string{
			"[1,150,2024-06-15T12:00:00.000000Z]",
			"[2,250,2024-03-15T11:00:00.000000Z]",
			"[5,500,2024-06-15T12:00:00.000000Z]"}},
		// Without header=true the header line is a record: Id "Id" is not
		// an int, so PERMISSIVE makes it null and keeps the row.
		{"table2_part0.csv", "csv", "Id int, Version int", nil, nil, []string{"[null,null]", "[1,3]"}},
		// Schema wider than the file: positional, trailing columns null.
		{"table2_part0.csv", "csv", "Id int, Version int, Extra string", csvH, nil, []string{"[1,3,null]"}},
		{"array_test.json", "json",
			`{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},{"name":"event_type","type":"string","nullable":true,"metadata":{}},{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"integer","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`,
			multi, nil, []string{
				`["e1","login",[[100,"Alice"],[101,"Bob"]],["security","authentication"]]`,
				`["e2","purchase",[[101,"Bob"],[102,"Charlie"]],["commerce","payment"]]`,
				`["e3","logout",[[100,"Alice"]],["security"]]`}},
		{"array_events.json", "json",
			`{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},{"name":"participants","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"role","type":"string","nullable":true,"metadata":{}},{"name":"user_id","type":"long","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}]}`,
			multi, []string{"participants"}, []string{
				`[[["organizer",1],["attendee",2]]]`,
				`[[["organizer",2],["attendee",3],["attendee",4]]]`,
				`[[["attendee",1]]]`}},
		{"events.json", "json",
			`{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},{"name":"timestamp","type":"timestamp","nullable":true,"metadata":{}},{"name":"user_ids","type":{"type":"array","elementType":"long","containsNull":true},"nullable":true,"metadata":{}},{"name":"missing","type":"string","nullable":true,"metadata":{}}]}`,
			nil, nil, []string{
				`["evt-001",2024-03-15T10:30:00.000000Z,[1001,1002],null]`,
				`["evt-002",2024-03-15T11:00:00.000000Z,[2001],null]`,
				`["evt-003",2024-03-16T09:00:00.000000Z,[1003,2002,2003],null]`,
				`["evt-004",2024-03-17T14:00:00.000000Z,[1004],null]`}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			uri := uriOf(t, data+tc.file)
			got, err := readAll(t, uri, Spec{Format: tc.format, Schema: mustSchema(t, tc.schema), Options: tc.opts}, tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// The demo files of the library's examples: dates, decimals, timestamps.
func TestExampleFiles(t *testing.T) {
	dir := testdata + "/ariadne-examples/"
	tests := []struct {
		file, schema string
		want         []string
	}{
		{"orders_q1.csv", "order_id int, customer_id bigint, product_sku string, amount decimal(10;2), order_date date", []string{
			`[10001,1001,"SKU-A100",29.99,2024-01-20]`,
			`[10002,2001,"SKU-B200",149.99,2024-02-15]`,
			`[10003,1002,"SKU-A100",29.99,2024-03-01]`,
			`[10004,1003,"SKU-C300",79.50,2024-03-15]`}},
		{"sensor_readings_feb.csv", "sensor_id string, temperature float, humidity double, reading_time timestamp", []string{
			`["S001",21,48,2024-02-10T08:00:00.000000Z]`,
			`["S002",17.5,65,2024-02-10T08:00:00.000000Z]`,
			`["S004",26.3,35,2024-02-10T08:00:00.000000Z]`,
			`["S001",22,46,2024-02-10T12:00:00.000000Z]`}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := readAll(t, uriOf(t, dir+tc.file), Spec{Format: "csv", Schema: mustSchema(t, tc.schema), Options: map[string]string{"header": "true"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	st := mustSchema(t, "Id int, Value double")
	tests := []struct {
		name string
		spec Spec
		cols []string
		kind error
	}{
		{"format", Spec{Format: "avro", Schema: st}, nil, aerr.ErrInvalidArgument},
		{"column", Spec{Format: "csv", Schema: st}, []string{"Nope"}, aerr.ErrColumnNotFound},
		{"column case", Spec{Format: "csv", Schema: st}, []string{"id"}, aerr.ErrColumnNotFound},
		{"bool option", Spec{Format: "csv", Schema: st, Options: map[string]string{"header": "yes"}}, nil, aerr.ErrInvalidArgument},
		{"quote option", Spec{Format: "csv", Schema: st, Options: map[string]string{"quote": "ab"}}, nil, aerr.ErrInvalidArgument},
		{"pattern", Spec{Format: "csv", Schema: st, Options: map[string]string{"timestampFormat": "yyyy-QQ"}}, nil, aerr.ErrInvalidArgument},
		{"encoding", Spec{Format: "json", Schema: st, Options: map[string]string{"encoding": "UTF-16"}}, nil, ErrUnsupported},
		{"csv array", Spec{Format: "csv", Schema: mustSchema(t, `{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`)}, nil, ErrUnsupported},
		{"no schema", Spec{Format: "csv"}, nil, aerr.ErrMissingSchema},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.spec, tc.cols)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("Compile: %v, want %v", err, tc.kind)
			}
		})
	}
	if _, err := Compile(Spec{Format: " Parquet ", Schema: st}, nil); err != nil {
		t.Errorf("format names are case-insensitive: %v", err)
	}
}
