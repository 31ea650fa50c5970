package fileindex

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// updSchemaFilename has a data column named filename, which the relation
// replaces in place with each row's file URI (§5.9), so kept tables keep
// it. (It cannot be indexed: the main table has a filename column.)
const updSchemaFilename = `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"filename","type":"string","nullable":true,"metadata":{}},{"name":"Category","type":"string","nullable":true,"metadata":{}}]}`

// TestUpdateReadCacheSameIndex: the index an update builds from the files
// the analysis kept is exactly the one it builds reading every file twice,
// whatever shape src takes: a view over kept tables that leave out the
// filename column, a copy of more than unionGroup tables, kept and
// uncached files in one batch, and tables that keep a data column named
// filename.
func TestUpdateReadCacheSameIndex(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema string
		header string
		files  int
		budget int64 // of the cached run
	}{
		{"view over kept tables", updSchemaIDs, "Id,Version,Category,Value", 5, 0},
		{"copy of many tables", updSchemaIDs, "Id,Version,Category,Value", unionGroup + 6, 0},
		{"kept and read again", updSchemaIDs, "Id,Version,Category,Value", analysisChunkFiles + 6, 1},
		{"data column named filename", updSchemaFilename, "Id,filename,Category", 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			var size int64
			for i := range tc.files {
				var b strings.Builder
				b.WriteString(tc.header + "\n")
				for j := 1; j <= 3+i%4; j++ {
					// Rows of file i: ids i*10+1 …, so every file differs.
					switch tc.schema {
					case updSchemaFilename:
						fmt.Fprintf(&b, "%d,own-%d,cat%d\n", i*10+j, j, j%3)
					default:
						fmt.Fprintf(&b, "%d,%d,cat%d,%d.5\n", i*10+j, j%3, (i+j)%5, j)
					}
				}
				size += int64(b.Len())
				files = append(files, updWriteFile(t, dir, fmt.Sprintf("f%03d.csv", i), b.String()))
			}
			budget := tc.budget
			if budget == 1 {
				// Room for the first analysis chunk (analysisChunkFiles
				// files) only: the files of the second are read again by
				// their batch, which holds both kinds.
				budget = size - 1
			}
			state := func(budget int64) string {
				e := newUpdEnv(t)
				ix := e.open("cache", tc.schema, "csv", map[string]string{"header": "true"})
				updAddFiles(t, ix, files...)
				ctx := context.Background()
				must(t, ix.AddIndex(ctx, "Id"))
				must(t, ix.AddBloomIndex(ctx, "Category", 0.01))
				if tc.schema == updSchemaIDs {
					must(t, ix.AddRangeIndex(ctx, "Value"))
				} else {
					// A computed index reads every column, filename
					// included: the file's URI, in place.
					must(t, ix.AddComputedIndex(ctx, "name_tail", "substring(filename, length(filename) - 7, 8)"))
				}
				if _, err := e.fi(ix).Update(ctx, UpdateOptions{ReadCacheBytes: budget}); err != nil {
					t.Fatal(err)
				}
				return indexState(t, ix)
			}
			want, got := state(-1), state(budget)
			if got != want {
				t.Fatalf("cached\n%s\nuncached\n%s", got, want)
			}
		})
	}
}
