package delta

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// renderRow renders a row in the golden files' canonical form: one compact
// JSON object, keys in schema order.
func renderRow(st *schema.Struct, row []any) string {
	var b strings.Builder
	renderStruct(&b, st, row)
	return b.String()
}

func renderStruct(b *strings.Builder, st *schema.Struct, row []any) {
	b.WriteByte('{')
	for i, f := range st.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, f.Name)
		b.WriteByte(':')
		renderValue(b, f.Type, row[i])
	}
	b.WriteByte('}')
}

func writeJSONString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.WriteString(strings.TrimSuffix(buf.String(), "\n"))
}

func renderFloat(b *strings.Builder, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		b.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		b.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		b.WriteString(`"-Infinity"`)
	default:
		s := strconv.FormatFloat(f, 'g', -1, bits)
		// Python repr: exponent form only below 1e-4 or from 1e16.
		if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
			s = strconv.FormatFloat(f, 'e', -1, bits)
			mant, exp, _ := strings.Cut(s, "e")
			e, _ := strconv.Atoi(exp)
			sign := "+"
			if e < 0 {
				sign, e = "-", -e
			}
			s = fmt.Sprintf("%se%s%02d", mant, sign, e)
		} else {
			s = strconv.FormatFloat(f, 'f', -1, bits)
			if !strings.Contains(s, ".") {
				s += ".0"
			}
		}
		b.WriteString(s)
	}
}

func renderValue(b *strings.Builder, t schema.Type, v any) {
	if v == nil {
		b.WriteString("null")
		return
	}
	switch t := t.(type) {
	case *schema.Struct:
		renderStruct(b, t, v.([]any))
		return
	case *schema.Array:
		b.WriteByte('[')
		for i, e := range v.([]any) {
			if i > 0 {
				b.WriteByte(',')
			}
			renderValue(b, t.Element, e)
		}
		b.WriteByte(']')
		return
	case *schema.Map:
		kvs := v.([]pqrow.KV)
		pairs := make([][2]string, len(kvs))
		for i, kv := range kvs {
			var kb, vb strings.Builder
			renderValue(&kb, t.Key, kv.Key)
			renderValue(&vb, t.Value, kv.Value)
			pairs[i] = [2]string{kb.String(), vb.String()}
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
		b.WriteByte('[')
		for i, p := range pairs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("[" + p[0] + "," + p[1] + "]")
		}
		b.WriteByte(']')
		return
	case *schema.Decimal:
		writeJSONString(b, v.(pqrow.Decimal).PlainString())
		return
	}
	switch x := v.(type) {
	case string:
		writeJSONString(b, x)
	case []byte:
		writeJSONString(b, base64.StdEncoding.EncodeToString(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int8, int16, int32, int64:
		fmt.Fprint(b, x)
	case float32:
		renderFloat(b, float64(x), 32)
	case float64:
		renderFloat(b, x, 64)
	case time.Time:
		switch t.(*schema.Primitive).Name {
		case "date":
			writeJSONString(b, x.Format("2006-01-02"))
		case "timestamp":
			writeJSONString(b, x.UTC().Format("2006-01-02T15:04:05.000000Z"))
		default:
			writeJSONString(b, x.Format("2006-01-02T15:04:05.000000"))
		}
	default:
		fmt.Fprintf(b, "%q", fmt.Sprintf("unexpected %T", v))
	}
}

// divergences are tables where delta-rs's answer is wrong and ours is
// checked differently: the reason, and a row we must produce instead.
var divergences = map[string]struct{ reason, row string }{
	"table_with_edge_timestamps": {
		reason: "delta-rs converts timestamps through int64 nanoseconds, so 9999-12-30 wraps to 1816-03-28",
		row:    `{"BIG_DATE":"9999-12-30T00:00:00.000000Z","NORMAL_DATE":"2022-02-01T00:00:00.000000Z","SOME_VALUE":2}`,
	},
}

// TestDeltaRSRows scans every readable delta-rs table whose data files are
// all present and compares the canonical rows with delta-rs's.
func TestDeltaRSRows(t *testing.T) {
	ctx := context.Background()
	for name, dir := range deltaRSTables(t) {
		if _, refused := refusals[name]; refused {
			continue
		}
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			if g.Error != nil {
				t.Skipf("delta-rs could not read it either: %.80s", *g.Error)
			}
			snap, err := openDir(t, dir).Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for row, err := range snap.Scan(ctx, ScanOptions{}) {
				if err != nil {
					t.Fatalf("Scan: %v", err)
				}
				lines = append(lines, renderRow(snap.Schema(), row))
			}
			if int64(len(lines)) != g.NumRows {
				t.Fatalf("rows %d, delta-rs %d", len(lines), g.NumRows)
			}
			slices.Sort(lines)
			if d, ok := divergences[name]; ok {
				if !slices.Contains(lines, d.row) {
					t.Fatalf("(%s) want row %s, got %q", d.reason, d.row, lines)
				}
				return
			}
			sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
			if got := hex.EncodeToString(sum[:]); got != g.RowsSHA256 {
				if g.Rows != nil {
					want := make([]string, len(g.Rows))
					for i, r := range g.Rows {
						want[i] = string(r)
					}
					for i := range min(len(want), len(lines)) {
						if want[i] != lines[i] {
							t.Fatalf("row %d:\n got %s\nwant %s", i, lines[i], want[i])
						}
					}
				}
				t.Fatalf("rows sha256 %s, delta-rs %s", got, g.RowsSHA256)
			}
		})
	}
}
