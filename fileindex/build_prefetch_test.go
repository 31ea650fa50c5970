package fileindex

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// countingSource yields n one-row batches holding 0..n-1, then err.
type countingSource struct {
	n, next int
	err     error
}

func (c *countingSource) Schema() *schema.Struct {
	return &schema.Struct{Fields: []schema.Field{{Name: "i", Type: schema.Long, Nullable: true}}}
}

func (c *countingSource) Next(ctx context.Context) ([]pqrow.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.next == c.n {
		return nil, c.err
	}
	c.next++
	return []pqrow.Row{{int64(c.next - 1)}}, nil
}

func TestPrefetchSource(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		n    int
		err  error
	}{
		{"empty", 0, io.EOF},
		{"fewer than the read-ahead", loadPrefetchBatches / 2, io.EOF},
		{"many times the read-ahead", 10 * loadPrefetchBatches, io.EOF},
		{"error after rows", 3 * loadPrefetchBatches, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p := newPrefetch(ctx, &countingSource{n: tc.n, err: tc.err})
			defer p.close()
			for want := range tc.n {
				rows, err := p.Next(ctx)
				if err != nil {
					t.Fatalf("batch %d: %v", want, err)
				}
				if len(rows) != 1 || rows[0][0] != int64(want) {
					t.Fatalf("batch %d: got %v", want, rows)
				}
			}
			// The terminal error comes after every batch, and stays.
			for range 2 {
				if _, err := p.Next(ctx); !errors.Is(err, tc.err) {
					t.Fatalf("after %d batches: %v, want %v", tc.n, err, tc.err)
				}
			}
		})
	}
}

// TestPrefetchSourceCloseEarly stops a reader blocked on a full read-ahead:
// close returns (the goroutine ended) and the source was not read further
// than the read-ahead allows.
func TestPrefetchSourceCloseEarly(t *testing.T) {
	src := &countingSource{n: 100 * loadPrefetchBatches, err: io.EOF}
	p := newPrefetch(context.Background(), src)
	if _, err := p.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.close()
	// One taken, loadPrefetchBatches buffered, one blocked in the send.
	if src.next > loadPrefetchBatches+2 {
		t.Fatalf("source read %d batches ahead of a closed consumer", src.next)
	}
	if src.next == src.n {
		t.Fatal("source read to the end")
	}
}
