package interop

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// loadEnv returns the installed harness or fails the test: the harness
// never skips silently (interop/run.sh installs it before running us).
func loadEnv(t *testing.T) *Env {
	t.Helper()
	e, err := LoadEnv()
	if err != nil {
		t.Fatalf("%v\nrun interop/run.sh (it installs the harness with interop/install.sh first)", err)
	}
	return e
}

// testContext bounds a test's external work: every Python or JVM child is
// killed when it ends, so a hung engine fails the test instead of hanging CI.
func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// openTable opens (or prepares) a local folder as a store.
func openStore(t *testing.T, ctx context.Context, dir string) store.Store {
	t.Helper()
	s, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// scanLines reads snapshot s with our reader and renders its rows canonically.
func scanLines(ctx context.Context, s *delta.Snapshot) ([]string, error) {
	var rows [][]any
	for r, err := range s.Scan(ctx, delta.ScanOptions{}) {
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return RenderRows(s.Schema(), rows)
}

// diffLines describes how got differs from want (both sorted), naming at
// most a few lines on each side; "" when they are equal.
func diffLines(want, got []string) string {
	if strings.Join(want, "\n") == strings.Join(got, "\n") && len(want) == len(got) {
		return ""
	}
	w := map[string]int{}
	for _, l := range want {
		w[l]++
	}
	var extra []string
	for _, l := range got {
		if w[l] > 0 {
			w[l]--
			continue
		}
		extra = append(extra, l)
	}
	var missing []string
	for _, l := range want {
		if w[l] > 0 {
			w[l]--
			missing = append(missing, l)
		}
	}
	const show = 4
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, want %d; %d missing, %d unexpected", len(got), len(want), len(missing), len(extra))
	for i, l := range missing {
		if i == show {
			b.WriteString("\n  missing: …")
			break
		}
		b.WriteString("\n  missing:    " + l)
	}
	for i, l := range extra {
		if i == show {
			b.WriteString("\n  unexpected: …")
			break
		}
		b.WriteString("\n  unexpected: " + l)
	}
	return b.String()
}

// sameSchema compares the schema an engine reports with ours: field names,
// types (compact JSON) and nullability, recursively through MarshalType.
// Field metadata is not compared (engines add or drop their own keys).
func sameSchema(ours *schema.Struct, engineJSON string) error {
	theirs, err := schema.Parse(engineJSON)
	if err != nil {
		return fmt.Errorf("engine schema does not parse: %w (%s)", err, engineJSON)
	}
	if len(theirs.Fields) != len(ours.Fields) {
		return fmt.Errorf("engine reports %d columns %v, we have %d %v", len(theirs.Fields), theirs.Names(), len(ours.Fields), ours.Names())
	}
	for i, f := range ours.Fields {
		g := theirs.Fields[i]
		if g.Name != f.Name || schema.MarshalType(stripMetadata(g.Type)) != schema.MarshalType(stripMetadata(f.Type)) || g.Nullable != f.Nullable {
			return fmt.Errorf("column %d: engine %s %s nullable=%v, ours %s %s nullable=%v", i,
				g.Name, schema.MarshalType(g.Type), g.Nullable, f.Name, schema.MarshalType(f.Type), f.Nullable)
		}
	}
	return nil
}

// stripMetadata returns t with every nested field's metadata removed.
func stripMetadata(t schema.Type) schema.Type {
	switch t := t.(type) {
	case *schema.Struct:
		out := &schema.Struct{Fields: make([]schema.Field, len(t.Fields))}
		for i, f := range t.Fields {
			out.Fields[i] = schema.Field{Name: f.Name, Type: stripMetadata(f.Type), Nullable: f.Nullable}
		}
		return out
	case *schema.Array:
		return &schema.Array{Element: stripMetadata(t.Element), ContainsNull: t.ContainsNull}
	case *schema.Map:
		return &schema.Map{Key: stripMetadata(t.Key), Value: stripMetadata(t.Value), ValueContainsNull: t.ValueContainsNull}
	}
	return t
}
