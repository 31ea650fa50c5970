package infer

import (
	"os"
	"strings"
	"testing"
)

const data = "../../testdata/ariadne/data/"

func TestCSVFixtures(t *testing.T) {
	for file, want := range map[string]string{
		"table1_part0.csv":   "struct<Id:int,Version:int,Value:double>",
		"table3_part0.csv":   "struct<Id:string,Value:double>",
		"temporal_part0.csv": "struct<Id:int,Value:double,UpdatedAt:timestamp>",
	} {
		f, err := os.Open(data + file)
		if err != nil {
			t.Fatal(err)
		}
		st, err := CSV(f, CSVOptions{Header: true})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if st.String() != want {
			t.Errorf("%s: got %s want %s", file, st, want)
		}
	}
}

func TestCSVWidening(t *testing.T) {
	st, err := CSV(strings.NewReader("a;b;c;d;e\n1;x;;true;1\n3000000000;y;;false;2.5\n"), CSVOptionsFrom(map[string]string{"header": "true", "sep": ";"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := st.String(); got != "struct<a:bigint,b:string,c:string,d:boolean,e:double>" {
		t.Fatal(got)
	}
	if _, err := CSV(strings.NewReader("a,b\n"), CSVOptions{Header: true}); err != ErrNoRows {
		t.Fatalf("want ErrNoRows, got %v", err)
	}
}

func TestJSONFixtures(t *testing.T) {
	for _, tc := range []struct {
		file      string
		multiLine bool
		want      string
	}{
		{"array_test.json", true, "struct<event_id:string,event_type:string,tags:array<string>,users:array<struct<id:bigint,name:string>>>"},
		{"events.json", false, ""},
	} {
		f, err := os.Open(data + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		st, err := JSON(f, tc.multiLine)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if tc.want != "" && st.String() != tc.want {
			t.Errorf("%s: got %s want %s", tc.file, st, tc.want)
		}
		if len(st.Fields) == 0 {
			t.Errorf("%s: empty schema", tc.file)
		}
	}
}

func TestJSONWidening(t *testing.T) {
	st, err := JSON(strings.NewReader(`{"b":1,"a":null}`+"\n"+`{"b":2.5,"a":null,"c":[1,"x"]}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.String(); got != "struct<a:string,b:double,c:array<string>>" {
		t.Fatal(got)
	}
	if _, err := JSON(strings.NewReader(`[1,2]`), true); err == nil {
		t.Fatal("want error for non-object records")
	}
}
