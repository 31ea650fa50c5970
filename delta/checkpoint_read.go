package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/store"
)

// errIncompleteCheckpoint: a checkpoint refers to a sidecar that is not in
// the listing; replay skips it like a multi-part checkpoint missing a part.
var errIncompleteCheckpoint = errors.New("delta: incomplete checkpoint")

// missingKey names the first missing object of an incomplete checkpoint.
func (c *checkpoint) missingKey() string {
	if k := c.missing(); k != "" {
		return k
	}
	return c.keys[0]
}

// checkpointRowBatch is the number of checkpoint rows decoded at a time. A
// checkpoint row is one action (~0.5–2 KB decoded), so 1 024 rows keep the
// batch around 1 MB.
const checkpointRowBatch = 1024

// actionColumns are the top-level checkpoint columns that hold actions we
// replay (commitInfo and cdc never appear in a snapshot's state).
var actionColumns = []string{"add", "remove", "metaData", "protocol", "txn", "domainMetadata", "checkpointMetadata", "sidecar"}

// readCheckpoint reads every action of a checkpoint: all parts of a
// multi-part checkpoint, and for a v2 checkpoint (JSON or Parquet top-level
// file) the actions of every sidecar it names. It returns
// errIncompleteCheckpoint when a sidecar is missing from the listing.
func readCheckpoint(ctx context.Context, st store.Store, l *logListing, c *checkpoint) ([]Action, error) {
	var out []Action
	for _, key := range c.keys {
		var acts []Action
		var err error
		if strings.HasSuffix(key, ".json") {
			acts, err = readCommit(ctx, st, key)
		} else {
			acts, err = readParquetActions(ctx, st, key)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	var sidecars []Sidecar
	for _, a := range out {
		if a.Sidecar != nil {
			sidecars = append(sidecars, *a.Sidecar)
		}
	}
	for _, sc := range sidecars {
		name, err := DecodePath(sc.Path)
		if err != nil {
			return nil, corrupt(c.keys[0], 0, err)
		}
		if isAbsoluteURI(name) || strings.Contains(name, "/") {
			return nil, corrupt(c.keys[0], 0, fmt.Errorf("sidecar path %q outside %s_sidecars/ is not supported", sc.Path, LogDir))
		}
		if _, ok := l.sidecars[name]; !ok {
			return nil, fmt.Errorf("%w: %s: sidecar %s%s is missing", errIncompleteCheckpoint, c.keys[0], LogDir+"_sidecars/", name)
		}
		acts, err := readParquetActions(ctx, st, LogDir+"_sidecars/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}

// readParquetActions decodes the actions of one Parquet checkpoint file (or
// sidecar). Any failure, including a panic inside the Parquet decoder on a
// damaged file, is a *CorruptLogError for key.
func readParquetActions(ctx context.Context, st store.Store, key string) (out []Action, err error) {
	rc, err := st.NewRangeReader(ctx, key, 0, -1)
	if err != nil {
		return nil, corrupt(key, 0, err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, corrupt(key, 0, err)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, corrupt(key, 0, fmt.Errorf("parquet decoder panic: %v", r))
		}
	}()
	f, err := pqrow.OpenParquet(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, corrupt(key, 0, err)
	}
	root := f.Schema()
	type col struct {
		name  string
		node  parquet.Node
		first int // index of the column's first leaf
		n     int // number of leaves
	}
	var cols []col
	leaf := 0
	for _, fld := range root.Fields() {
		n := countLeaves(fld)
		for _, want := range actionColumns {
			if fld.Name() == want {
				cols = append(cols, col{want, fld, leaf, n})
			}
		}
		leaf += n
	}
	numLeaves := leaf
	rows := make([]parquet.Row, checkpointRowBatch)
	perCol := make([][]levelValue, numLeaves)
	for _, rg := range f.RowGroups() {
		rr := rg.Rows()
		for {
			n, rerr := rr.ReadRows(rows)
			for _, row := range rows[:n] {
				for i := range perCol {
					perCol[i] = perCol[i][:0]
				}
				for _, v := range row {
					if c := v.Column(); c >= 0 && c < numLeaves {
						perCol[c] = append(perCol[c], levelValue{v.RepetitionLevel(), v.DefinitionLevel(), v})
					}
				}
				for _, c := range cols {
					val := assemble(c.node, perCol[c.first:c.first+c.n], 0, 0)
					if val == nil {
						continue
					}
					a, err := actionFromCheckpoint(c.name, val)
					if err != nil {
						rr.Close()
						return nil, corrupt(key, 0, err)
					}
					out = append(out, a)
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rr.Close()
				return nil, corrupt(key, 0, rerr)
			}
			if err := ctx.Err(); err != nil {
				rr.Close()
				return nil, err
			}
		}
		rr.Close()
	}
	return out, nil
}

// actionFromCheckpoint turns one assembled checkpoint column value into an
// Action, going through the action's JSON form so that checkpoints and
// commits share one decoder. stats_parsed and partitionValues_parsed fill in
// stats and partitionValues when those are absent.
func actionFromCheckpoint(name string, val any) (Action, error) {
	var a Action
	if m, ok := val.(map[string]any); ok && (name == "add" || name == "remove") {
		if s, _ := m["stats"].(string); s == "" {
			if sp, ok := m["stats_parsed"].(map[string]any); ok && sp != nil {
				b, err := json.Marshal(sp)
				if err != nil {
					return a, err
				}
				m["stats"] = string(b)
			}
		}
		if pv, _ := m["partitionValues"].(map[string]any); len(pv) == 0 {
			if pp, ok := m["partitionValues_parsed"].(map[string]any); ok {
				pv := make(map[string]any, len(pp))
				for k, v := range pp {
					pv[k] = partitionString(v)
				}
				m["partitionValues"] = pv
			}
		}
		delete(m, "stats_parsed")
		delete(m, "partitionValues_parsed")
	}
	b, err := json.Marshal(map[string]any{name: val})
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("%s action: %w", name, err)
	}
	return a, nil
}

// partitionString renders a partitionValues_parsed value in the protocol's
// partition value serialisation.
func partitionString(v any) any {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return v
	case json.Number:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case isoTime:
		return time.Time(v).UTC().Format("2006-01-02 15:04:05.999999")
	}
	return fmt.Sprint(v)
}

// levelValue is one leaf value with its repetition and definition levels.
type levelValue struct {
	rep, def int
	v        parquet.Value
}

func countLeaves(n parquet.Node) int {
	if n.Leaf() {
		return 1
	}
	c := 0
	for _, f := range n.Fields() {
		c += countLeaves(f)
	}
	return c
}

// assemble rebuilds the value of node n for one record from its leaves'
// values (record shredding in reverse, as in the Dremel paper). def and rep
// are the definition and repetition levels of n's parent. The result uses
// JSON-ready Go values: map[string]any for groups and MAPs, []any for
// LISTs and repeated fields, string, json.Number, bool, isoTime, nil.
func assemble(n parquet.Node, leaves [][]levelValue, def, rep int) any {
	if len(leaves) == 0 || len(leaves[0]) == 0 {
		return nil
	}
	switch {
	case n.Repeated():
		d, r := def+1, rep+1
		if leaves[0][0].def < d {
			return []any{}
		}
		var list []any
		for _, elem := range splitRepeated(leaves, r) {
			list = append(list, assembleRequired(n, elem, d, r))
		}
		return list
	case n.Optional():
		if leaves[0][0].def < def+1 {
			return nil
		}
		return assembleRequired(n, leaves, def+1, rep)
	default:
		return assembleRequired(n, leaves, def, rep)
	}
}

// splitRepeated splits each leaf's values into the elements of a repeated
// node at repetition level r: an element starts at every value whose
// repetition level is at most r (the first value always starts one).
func splitRepeated(leaves [][]levelValue, r int) [][][]levelValue {
	var elems [][][]levelValue
	for li, vals := range leaves {
		e := -1
		for i, v := range vals {
			if i == 0 || v.rep <= r {
				e++
				if e == len(elems) {
					elems = append(elems, make([][]levelValue, len(leaves)))
				}
			}
			elems[e][li] = append(elems[e][li], v)
		}
	}
	return elems
}

// assembleRequired assembles a node known to be present.
func assembleRequired(n parquet.Node, leaves [][]levelValue, def, rep int) any {
	if n.Leaf() {
		return leafValue(n, leaves[0][0].v)
	}
	fields := n.Fields()
	ann := annotationOf(n)
	children := make(map[string]any, len(fields))
	i := 0
	for _, f := range fields {
		k := countLeaves(f)
		children[f.Name()] = assemble(f, leaves[i:i+k], def, rep)
		i += k
	}
	switch {
	case ann.isMap && len(fields) == 1:
		// MAP: one repeated group of (key, value).
		m := map[string]any{}
		kvs, _ := children[fields[0].Name()].([]any)
		for _, kv := range kvs {
			g, _ := kv.(map[string]any)
			var key, val any
			for name, v := range g {
				if name == "key" {
					key = v
				} else {
					val = v
				}
			}
			if key != nil {
				m[fmt.Sprint(key)] = val
			}
		}
		return m
	case ann.isList && len(fields) == 1:
		// LIST: one repeated group "list" with one field "element" (or,
		// legacy, the repeated field itself is the element).
		items, _ := children[fields[0].Name()].([]any)
		if !fields[0].Leaf() && len(fields[0].Fields()) == 1 {
			inner := fields[0].Fields()[0].Name()
			for j, it := range items {
				if g, ok := it.(map[string]any); ok {
					items[j] = g[inner]
				}
			}
		}
		return items
	}
	return children
}

// isoTime is a timestamp decoded from a checkpoint column; it marshals as
// Delta's stats timestamp form (ISO-8601, milliseconds, Z).
type isoTime time.Time

// MarshalJSON renders the time as "2006-01-02T15:04:05.000Z".
func (t isoTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"`), nil
}

// leafValue converts a Parquet leaf value to a JSON-ready Go value,
// honouring the leaf's logical type (dates, timestamps, decimals, strings).
func leafValue(n parquet.Node, v parquet.Value) any {
	if v.IsNull() {
		return nil
	}
	ann := annotationOf(n)
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean()
	case parquet.Int32:
		x := int64(v.Int32())
		switch {
		case ann.isDate:
			return time.Unix(x*86400, 0).UTC().Format("2006-01-02")
		case ann.decimal:
			return json.Number(scaled(strconv.FormatInt(x, 10), ann.scale))
		}
		return json.Number(strconv.FormatInt(x, 10))
	case parquet.Int64:
		x := v.Int64()
		switch {
		case ann.timestamp != 0:
			switch ann.timestamp {
			case time.Millisecond:
				return isoTime(time.UnixMilli(x))
			case time.Nanosecond:
				return isoTime(time.Unix(0, x))
			default:
				return isoTime(time.UnixMicro(x))
			}
		case ann.decimal:
			return json.Number(scaled(strconv.FormatInt(x, 10), ann.scale))
		}
		return json.Number(strconv.FormatInt(x, 10))
	case parquet.Int96:
		i := v.Int96()
		// INT96: nanoseconds of the day (low 8 bytes), Julian day (high 4).
		nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
		const julianUnixEpoch = 2440588
		days := int64(i[2]) - julianUnixEpoch
		return isoTime(time.Unix(days*86400, nanos))
	case parquet.Float:
		return floatNumber(float64(v.Float()), 32)
	case parquet.Double:
		return floatNumber(v.Double(), 64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		if ann.decimal {
			return json.Number(scaled(bigEndianSigned(b), ann.scale))
		}
		return string(b)
	}
	return nil
}

func floatNumber(f float64, bits int) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}

// bigEndianSigned renders a two's complement big-endian integer in decimal.
func bigEndianSigned(b []byte) string {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	return n.String()
}

// scaled inserts a decimal point scale digits from the right of an integer.
func scaled(digits string, scale int) string {
	if scale <= 0 {
		return digits
	}
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	for len(digits) <= scale {
		digits = "0" + digits
	}
	s := digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

// annotation is what we need of a node's logical (or legacy converted) type.
type annotation struct {
	isMap, isList, isDate bool
	decimal               bool
	scale                 int
	timestamp             time.Duration // unit; 0 when not a timestamp
}

func annotationOf(n parquet.Node) annotation {
	var a annotation
	t := n.Type()
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		switch v := lt.Value.(type) {
		case *format.MapType:
			a.isMap = true
		case *format.ListType:
			a.isList = true
		case *format.DateType:
			a.isDate = true
		case *format.DecimalType:
			a.decimal, a.scale = true, int(v.Scale)
		case *format.TimestampType:
			a.timestamp = time.Microsecond
			switch v.Unit.Value.(type) {
			case *format.MilliSeconds:
				a.timestamp = time.Millisecond
			case *format.NanoSeconds:
				a.timestamp = time.Nanosecond
			}
		}
		return a
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.Map, deprecated.MapKeyValue:
			a.isMap = true
		case deprecated.List:
			a.isList = true
		case deprecated.Date:
			a.isDate = true
		case deprecated.TimestampMillis:
			a.timestamp = time.Millisecond
		case deprecated.TimestampMicros:
			a.timestamp = time.Microsecond
		}
	}
	return a
}
