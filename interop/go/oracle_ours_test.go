package interop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// The shared oracle: one Spark session with the 0.1.8-beta JAR for every
// test of this binary that needs it (Spark starts slowly on 2 cores).
var (
	oracleMu  sync.Mutex
	oracle    *Oracle
	oracleErr error
)

// oracleRelease is the release the differential tests compare us with.
const oracleRelease = "0.1.8-beta"

// sharedOracle starts the 0.1.8-beta oracle once; TestMain stops it.
func sharedOracle(t *testing.T) *Oracle {
	t.Helper()
	oracleMu.Lock()
	defer oracleMu.Unlock()
	if oracle == nil && oracleErr == nil {
		e := loadEnv(t)
		jar, err := OracleJarPath(oracleRelease)
		if err != nil {
			oracleErr = err
		} else {
			oracle, oracleErr = e.StartOracle(context.Background(), jar)
			if oracle != nil {
				t.Logf("oracle %s: Spark session up in %v", oracleRelease, oracle.Started.Round(time.Second))
			}
		}
	}
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return oracle
}

func TestMain(m *testing.M) {
	code := m.Run()
	oracleMu.Lock()
	if oracle != nil {
		oracle.Close()
	}
	oracleMu.Unlock()
	os.Exit(code)
}

// ours runs oracle scenarios through our packages (index + fileindex) on a
// store root folder: the same Step list the oracle runs, the same
// StepResult shapes, so the two can be compared step by step.
type ours struct {
	dir  string
	root store.Store
	set  map[string]string // spark.ariadne.* confs in force
}

func newOurs(t *testing.T, ctx context.Context, dir string) *ours {
	return &ours{dir: dir, root: openStore(t, ctx, dir), set: map[string]string{}}
}

func (o *ours) config() (config.Config, error) {
	var set []string
	for k, v := range o.set {
		set = append(set, k+"="+v)
	}
	sort.Strings(set)
	cfg, _, err := config.Resolve(config.Sources{Set: set})
	return cfg, err
}

func (o *ours) fileIndex(ctx context.Context, name string) (*fileindex.FileIndex, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	cat := index.NewCatalog(o.root, index.Options{Config: cfg})
	ix, err := cat.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	return fileindex.New(ix, fileindex.Options{Config: &cfg}), nil
}

// run runs the steps; a failing step gives a result with Error set, as on
// the oracle side.
func (o *ours) run(ctx context.Context, steps []Step) []StepResult {
	out := make([]StepResult, len(steps))
	for i, s := range steps {
		// The steps reach us as they reach the oracle: through JSON.
		var r StepResult
		b, err := json.Marshal(s)
		if err == nil {
			d := json.NewDecoder(strings.NewReader(string(b)))
			d.UseNumber()
			s = Step{}
			err = d.Decode(&s)
		}
		if err == nil {
			r, err = o.step(ctx, s)
		}
		if err != nil {
			msg := err.Error()
			r = StepResult{Error: &msg}
		}
		out[i] = r
	}
	return out
}

func str(s Step, k string) string { v, _ := s[k].(string); return v }

func strs(s Step, k string) []string {
	var out []string
	switch v := s[k].(type) {
	case []string:
		return v
	case []any:
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

func (o *ours) step(ctx context.Context, s Step) (StepResult, error) {
	name := str(s, "index")
	switch str(s, "op") {
	case "conf":
		if m, ok := s["set"].(map[string]any); ok {
			for k, v := range m {
				o.set[strings.TrimPrefix(k, "spark.ariadne.")] = fmt.Sprint(v)
			}
		}
		for _, k := range strs(s, "unset") {
			delete(o.set, strings.TrimPrefix(k, "spark.ariadne."))
		}
		return StepResult{}, nil
	case "create":
		st, err := schema.Parse(str(s, "schema"))
		if err != nil {
			return StepResult{}, err
		}
		opts := map[string]string{}
		if m, ok := s["options"].(map[string]any); ok {
			for k, v := range m {
				opts[k] = fmt.Sprint(v)
			}
		} else if m, ok := s["options"].(map[string]string); ok {
			opts = m
		}
		cfg, err := o.config()
		if err != nil {
			return StepResult{}, err
		}
		_, err = index.NewCatalog(o.root, index.Options{Config: cfg}).Open(ctx, name, index.OpenOptions{Schema: st, Format: str(s, "format"), ReadOptions: opts})
		return StepResult{}, err
	}
	fi, err := o.fileIndex(ctx, name)
	if err != nil {
		return StepResult{}, err
	}
	ix := fi.Index()
	switch op := str(s, "op"); op {
	case "call":
		args, _ := s["args"].([]any)
		arg := func(i int) string {
			if i < len(args) {
				return fmt.Sprint(args[i])
			}
			return ""
		}
		switch m := str(s, "method"); m {
		case "addIndex":
			return StepResult{}, ix.AddIndex(ctx, arg(0))
		case "addBloomIndex":
			fpr, _ := args[1].(json.Number).Float64()
			return StepResult{}, ix.AddBloomIndex(ctx, arg(0), fpr)
		case "addRangeIndex":
			return StepResult{}, ix.AddRangeIndex(ctx, arg(0))
		case "addTemporalIndex":
			return StepResult{}, ix.AddTemporalIndex(ctx, arg(0), arg(1))
		case "addComputedIndex":
			return StepResult{}, ix.AddComputedIndex(ctx, arg(0), arg(1))
		case "addExplodedFieldIndex":
			return StepResult{}, ix.AddExplodedFieldIndex(ctx, arg(0), arg(1), arg(2))
		case "update":
			_, err := fi.Update(ctx, fileindex.UpdateOptions{})
			return StepResult{}, err
		case "compact":
			_, err := fi.Compact(ctx)
			return StepResult{}, err
		default:
			return StepResult{}, fmt.Errorf("ours: unknown method %q", m)
		}
	case "add_files":
		_, err := ix.AddFiles(ctx, strs(s, "files")...)
		return StepResult{}, err
	case "delete_files":
		return StepResult{}, fi.DeleteFiles(ctx, strs(s, "files")...)
	case "vacuum":
		h, _ := s["hours"].(json.Number).Float64()
		_, err := fi.Vacuum(ctx, time.Duration(h)*time.Hour)
		return StepResult{}, err
	case "locate":
		q := fileindex.Query{}
		types, _ := s["types"].(map[string]any)
		qm, _ := s["query"].(map[string]any)
		for c, vs := range qm {
			t, _ := types[c].(string)
			for _, v := range vs.([]any) {
				q[c] = append(q[c], jsonValue(v, t))
			}
		}
		files, err := fi.Locate(ctx, q)
		if err != nil {
			return StepResult{}, err
		}
		files = slices.Clone(files)
		sort.Strings(files)
		if files == nil {
			files = []string{}
		}
		return StepResult{Files: files}, nil
	case "join":
		st, err := schema.Parse(str(s, "keys_schema"))
		if err != nil {
			return StepResult{}, err
		}
		var rows [][]any
		raw, _ := s["rows"].([]any)
		for _, r := range raw {
			cells := r.([]any)
			row := make([]any, len(cells))
			for i, c := range cells {
				row[i] = jsonValue(c, strings.Trim(schema.MarshalType(st.Fields[i].Type), `"`)) // "long", "integer", ...
			}
			rows = append(rows, row)
		}
		how, err := fileindex.ParseJoinType(str(s, "how"))
		if err != nil {
			return StepResult{}, err
		}
		left := true
		if b, ok := s["index_left"].(bool); ok {
			left = b
		}
		res, err := fi.Join(ctx, fileindex.RowsSource(st, rows), strs(s, "on"), how, fileindex.JoinOptions{IndexOnLeft: left, Select: strs(s, "select")})
		if err != nil {
			return StepResult{}, err
		}
		defer res.Close()
		var all [][]any
		for {
			b, err := res.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return StepResult{}, err
			}
			all = append(all, b...)
		}
		lines, err := RenderRows(res.Schema(), all)
		if err != nil {
			return StepResult{}, err
		}
		sort.Strings(lines)
		if lines == nil {
			lines = []string{}
		}
		return StepResult{Columns: res.Schema().Names(), Schema: res.Schema().Marshal(), Rows: lines}, nil
	case "bloom_bytes":
		b, err := mainTableBytes(ctx, o.root, ix.Paths().Main, "bloom_"+str(s, "column"))
		return StepResult{Blooms: b}, err
	default:
		return StepResult{}, fmt.Errorf("ours: unknown op %q", op)
	}
}

// mainTableBytes reads column col of the main table at key main: file name
// → base64 of the stored bytes (null cells left out).
func mainTableBytes(ctx context.Context, root store.Store, main, col string) (map[string]string, error) {
	tbl, err := delta.Open(ctx, store.Sub(root, main+"/"))
	if err != nil {
		return nil, err
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for r, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{"filename", col}}) {
		if err != nil {
			return nil, err
		}
		if r[1] == nil {
			continue
		}
		b, ok := r[1].([]byte)
		if !ok {
			return nil, fmt.Errorf("%s: %T, want bytes", col, r[1])
		}
		out[r[0].(string)] = base64.StdEncoding.EncodeToString(b)
	}
	return out, nil
}

// jsonValue converts a JSON-decoded value to our value model, typed by the
// Spark type name t ("" = as the oracle types it: a whole number is an
// Integer, a number with a fraction a Double).
func jsonValue(v any, t string) any {
	switch x := v.(type) {
	case nil:
		return nil
	case json.Number:
		if f, err := x.Float64(); err == nil {
			if strings.ContainsAny(string(x), ".eE") {
				return jsonValue(f, t)
			}
			i, _ := x.Int64()
			return jsonValue(i, t)
		}
		return string(x)
	case int:
		return jsonValue(int64(x), t)
	case int64:
		switch t {
		case "long", "bigint":
			return x
		case "double":
			return float64(x)
		case "string":
			return fmt.Sprint(x)
		}
		return int32(x)
	case float64:
		switch t {
		case "long", "bigint":
			return int64(x)
		case "integer", "int":
			return int32(x)
		case "string":
			return fmt.Sprint(x)
		}
		return x
	}
	return v
}
