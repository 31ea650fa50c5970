package interop

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// randSchema is the schema of the generated CSV files: an int key, a long
// group, a text tag, a double measure and a timestamp.
const randSchema = `{"type":"struct","fields":[` +
	`{"name":"k","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"g","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"s","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"d","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}}]}`

// randColumns are the generated columns with their Spark type names.
var randColumns = []struct{ name, typ string }{
	{"k", "integer"}, {"g", "long"}, {"s", "string"}, {"d", "double"},
}

// randValue draws a value of column c from a small domain, so that files
// share values and locates find several files; nil now and then.
func randValue(r *rand.Rand, c string) any {
	switch c {
	case "k":
		return r.IntN(25)
	case "g":
		return int64(r.IntN(6)) * 10_000_000_000
	case "s":
		return string(rune('a' + r.IntN(10)))
	case "d":
		return float64(r.IntN(40)) / 4
	}
	return nil
}

func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// randomScenario generates seed's data files under dir and its scenario:
// 2-4 CSV files, 1-4 definitions over distinct columns (regular, bloom,
// range, temporal on the key), sometimes a small largeIndexLimit, 8
// locates of one or two columns and 3 joins of random types and sides, and
// for one seed in four a later file, a second update and more queries.
func randomScenario(t *testing.T, seed uint64, dir string) scenario {
	r := rand.New(rand.NewPCG(seed, 0xa71ad4e))
	ix := "r"
	writeFile := func(n int) string {
		var b strings.Builder
		b.WriteString("k,g,s,d,ts\n")
		rows := 2 + r.IntN(12)
		for i := 0; i < rows; i++ {
			var cells []string
			for _, c := range randColumns {
				var v any
				if r.IntN(12) > 0 {
					v = randValue(r, c.name)
				}
				cells = append(cells, csvCell(v))
			}
			ts := time.Date(2024, 1, 1+r.IntN(200), r.IntN(24), 0, 0, 0, time.UTC)
			cells = append(cells, ts.Format("2006-01-02 15:04:05"))
			b.WriteString(strings.Join(cells, ",") + "\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("seed%d_part%d.csv", seed, n))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return "file://" + p
	}
	nFiles := 2 + r.IntN(3)
	var files []string
	for i := 0; i < nFiles; i++ {
		files = append(files, writeFile(i))
	}

	steps := []Step{}
	large := r.IntN(4) == 0
	if large {
		steps = append(steps, Step{"op": "conf", "set": map[string]string{"spark.ariadne.largeIndexLimit": strconv.Itoa(3 + r.IntN(3))}})
	}
	steps = append(steps, sCreate(ix, randSchema, "csv", map[string]string{"header": "true"}))
	kinds := map[string]string{}
	perm := r.Perm(len(randColumns))
	nDefs := 1 + r.IntN(len(randColumns))
	for _, i := range perm[:nDefs] {
		c := randColumns[i]
		choices := []string{"regular", "regular", "bloom", "range"}
		if c.name == "k" {
			choices = append(choices, "temporal")
		}
		kind := choices[r.IntN(len(choices))]
		kinds[c.name] = kind
		switch kind {
		case "regular":
			steps = append(steps, sCall(ix, "addIndex", c.name))
		case "bloom":
			steps = append(steps, sCall(ix, "addBloomIndex", c.name, []float64{0.01, 0.05, 0.3}[r.IntN(3)]))
		case "range":
			steps = append(steps, sCall(ix, "addRangeIndex", c.name))
		case "temporal":
			steps = append(steps, sCall(ix, "addTemporalIndex", c.name, "ts"))
		}
	}
	steps = append(steps, sFiles(ix, files...), sUpdate(ix))
	var indexed []string
	for _, c := range randColumns {
		if kinds[c.name] != "" {
			indexed = append(indexed, c.name)
		}
	}
	typ := func(c string) string {
		for _, x := range randColumns {
			if x.name == c {
				return x.typ
			}
		}
		return ""
	}
	queries := func(nLoc, nJoin int) {
		for i := 0; i < nLoc; i++ {
			q := map[string][]any{}
			types := map[string]string{}
			for _, j := range r.Perm(len(indexed))[:1+r.IntN(min(2, len(indexed)))] {
				c := indexed[j]
				for n := 1 + r.IntN(3); n > 0; n-- {
					q[c] = append(q[c], randValue(r, c))
				}
				types[c] = typ(c)
			}
			steps = append(steps, sLocate(ix, q, types))
		}
		for i := 0; i < nJoin; i++ {
			var on, cols []string
			for _, j := range r.Perm(len(indexed))[:1+r.IntN(min(2, len(indexed)))] {
				on = append(on, indexed[j])
				cols = append(cols, indexed[j]+":"+typ(indexed[j]))
			}
			var rows [][]any
			for n := r.IntN(5); n > 0; n-- {
				var row []any
				for _, c := range on {
					row = append(row, randValue(r, c))
				}
				rows = append(rows, row)
			}
			steps = append(steps, sJoin(ix, on, joinTypes[r.IntN(len(joinTypes))], keysSchema(cols...), rows, r.IntN(2) == 0))
		}
	}
	queries(8, 3)
	if r.IntN(4) == 0 {
		steps = append(steps, sFiles(ix, writeFile(nFiles)), sUpdate(ix))
		queries(4, 1)
	}
	if large {
		steps = append(steps, Step{"op": "conf", "unset": []string{"spark.ariadne.largeIndexLimit"}})
	}
	return scenario{name: fmt.Sprintf("seed%d", seed), steps: steps}
}

// oracleSeeds is how many random seeds run: ARIADNE_ORACLE_SEEDS, default
// 50 (what CI runs: about 19 s of Spark per seed on an idle 2-core
// machine); ARIADNE_ORACLE_SEED_BASE shifts them (default 1).
func oracleSeeds(t *testing.T) (base, n uint64) {
	base, n = 1, 50
	if s := os.Getenv("ARIADNE_ORACLE_SEEDS"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ARIADNE_ORACLE_SEEDS: %v", err)
		}
		n = v
	}
	if s := os.Getenv("ARIADNE_ORACLE_SEED_BASE"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("ARIADNE_ORACLE_SEED_BASE: %v", err)
		}
		base = v
	}
	return base, n
}

// TestOracleDiffRandom is issue 13 item 4 (random cases): seeded random
// data files, definitions and queries through 0.1.8-beta and through us.
// A failing seed is rerun alone with ARIADNE_ORACLE_SEED_BASE=<seed>
// ARIADNE_ORACLE_SEEDS=1.
func TestOracleDiffRandom(t *testing.T) {
	o := sharedOracle(t)
	ctx := testContext(t, 6*time.Hour) // bounded per scenario and by -test.timeout
	base, n := oracleSeeds(t)
	dir := t.TempDir()
	var rep diffReport
	t0 := time.Now()
	t.Run("seeds", func(t *testing.T) {
		for seed := base; seed < base+n; seed++ {
			sc := randomScenario(t, seed, dir)
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				runScenario(t, ctx, o, sc, &rep)
			})
		}
	})
	t.Logf("random: seeds %d..%d, %v in %v", base, base+n-1, &rep, time.Since(t0).Round(time.Second))
}
