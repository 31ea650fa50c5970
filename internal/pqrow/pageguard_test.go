package pqrow

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/testfixture"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

const lz4RawFile = "../../testdata/parquet-testing/data/lz4_raw_compressed.parquet"

// corruptLZ4Raw is testfixture.CorruptLZ4Raw (shared with the command
// line's test).
func corruptLZ4Raw(t testing.TB) (file, body []byte) { return testfixture.CorruptLZ4Raw(t) }

// TestCorruptLZ4Body checks the crafted page really is the codec bomb (no
// buffer, however large, decodes it) and that DecompressPage refuses it
// as a *PageError without allocating more than the header's size.
func TestCorruptLZ4Body(t *testing.T) {
	_, body := corruptLZ4Raw(t)
	if _, err := lz4.UncompressBlock(body, make([]byte, 64<<20)); err == nil {
		t.Fatal("the crafted body decodes into 64 MiB: it would not make parquet-go's codec loop")
	}
	_, err := DecompressPage(format.Lz4Raw, nil, body, 1000)
	var pe *PageError
	if !errors.As(err, &pe) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("DecompressPage = %v, want a *PageError matching ErrCorrupt", err)
	}
	// A header promising more than LZ4 can expand is refused before any
	// allocation.
	if _, err := DecompressPage(format.Lz4Raw, nil, []byte{0x10, 'a'}, 1<<30); !errors.As(err, &pe) {
		t.Fatalf("1 GiB from 2 bytes: %v, want a *PageError", err)
	}
	// A sound block decodes to its size; a size that is off is refused.
	src := make([]byte, lz4.CompressBlockBound(4096))
	data := bytes.Repeat([]byte("ariadne "), 512)
	n, err := lz4.CompressBlock(data, src, nil)
	if err != nil || n == 0 {
		t.Fatal(n, err)
	}
	got, err := DecompressPage(format.Lz4Raw, nil, src[:n], len(data))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("sound block: %v", err)
	}
	if _, err := DecompressPage(format.Lz4Raw, nil, src[:n], len(data)+1); !errors.As(err, &pe) {
		t.Fatalf("size one too large: %v, want a *PageError", err)
	}
}

// childEnv marks the subprocess of TestCorruptLZ4RawBoundedMemory.
const childEnv = "ARIADNE_PQROW_LZ4_CHILD"

// TestCorruptLZ4RawBoundedMemory reads the corrupt LZ4_RAW file as update
// reads it (rows, then typed pages) and through parquet-go's own row
// reader over OpenParquet, in a subprocess whose address space is capped
// at 2 GiB: each must fail with a *PageError (ErrCorrupt). Without the
// guard parquet-go's codec allocates until the cap, and the subprocess dies
// with a fatal out-of-memory that fails this test instead of killing the
// test binary.
func TestCorruptLZ4RawBoundedMemory(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		corruptLZ4Raw(t) // skips without the data
		cmd := exec.Command(os.Args[0], "-test.run=^TestCorruptLZ4RawBoundedMemory$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("subprocess (2 GiB address space): %v\n%s", err, head(out, 2000))
		}
		return
	}
	capAddressSpace(t, 2<<30)
	file, _ := corruptLZ4Raw(t)
	ctx := context.Background()
	// parquet-go keeps only the text of a read error: what matters is
	// ErrCorrupt and the guard's reason.
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(fmt.Sprint(err), "corrupt page at offset") {
			t.Errorf("%s: %v, want ErrCorrupt from the LZ4_RAW guard", what, err)
		}
	}
	f, err := OpenFile(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	sch, err := f.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var rerr error
	for _, err := range f.Rows(ctx, sch, ReadOptions{}) {
		if err != nil {
			rerr = err
			break
		}
	}
	check("Rows", rerr)
	if cols, ok := f.PlanTyped(sch.Fields, ReadOptions{}); ok {
		check("ScanTyped", f.ScanTyped(ctx, cols, func(int, *TypedPage) error { return nil }))
	}
	pf, err := OpenParquet(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]parquet.Row, 16)
	rr := parquet.NewReader(pf)
	_, err = rr.ReadRows(rows)
	check("parquet.Reader", err)
	for _, rg := range pf.RowGroups() {
		for _, cc := range rg.ColumnChunks() {
			pages := GuardPages(cc.(*parquet.FileColumnChunk), bytes.NewReader(file))
			for {
				if _, err = pages.ReadPage(); err != nil {
					break
				}
			}
			pages.Close()
		}
	}
}

// head is the start of a subprocess's output (a fatal error's first lines
// say what died; the goroutine dump after them is long).
func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// TestSoundLZ4RawPasses: the guard lets parquet-testing's small sound
// LZ4_RAW file through (every chunk checked, no error), which reads as it
// did before the guard, and refuses the larger one, whose page parquet-go
// v0.32.0 would misread, as unsupported.
func TestSoundLZ4RawPasses(t *testing.T) {
	for _, name := range []string{"lz4_raw_compressed.parquet", "lz4_raw_compressed_larger.parquet"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(lz4RawFile), name))
		if err != nil {
			t.Skip("parquet-testing data not available")
		}
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		g := GuardReader(bytes.NewReader(b), pf.Metadata())
		gr, ok := g.(*guardedReader)
		if !ok || len(gr.chunks) == 0 {
			t.Fatalf("%s: no LZ4_RAW chunk guarded", name)
		}
		err = gr.check(0, int64(len(b)))
		if name == "lz4_raw_compressed_larger.parquet" {
			// Sound, but parquet-go v0.32.0 would misread its page
			// (upstream issue 608): refused as unsupported.
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "issue 608") || !gr.chunks[0].done {
				t.Fatalf("%s: %v, want ErrUnsupported (upstream issue 608)", name, err)
			}
			continue
		}
		if err != nil || !gr.chunks[0].done {
			t.Fatalf("%s: %v", name, err)
		}
	}
	b, _ := os.ReadFile(lz4RawFile)
	f, err := OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	sch, _ := f.Schema()
	n := 0
	for _, err := range f.Rows(context.Background(), sch, ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 {
		t.Fatalf("%d rows, want 4", n)
	}
}

// TestCorruptLZ4RawSeed keeps the corrupt LZ4_RAW file among
// FuzzReadParquet's seeds (testdata/fuzz), byte for byte the file this
// test crafts (ARIADNE_UPDATE_SEEDS=1 rewrites it).
func TestCorruptLZ4RawSeed(t *testing.T) {
	file, _ := corruptLZ4Raw(t)
	want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", file)
	path := filepath.Join("testdata", "fuzz", "FuzzReadParquet", "corrupt-lz4-raw-page")
	if os.Getenv("ARIADNE_UPDATE_SEEDS") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("%s is not the crafted corrupt LZ4_RAW file (%v): rerun with ARIADNE_UPDATE_SEEDS=1", path, err)
	}
}

// TestGuardWalksFromUnknownOffsets: a read that starts inside a chunk
// where no page starts and no read ended (a seek through a lying offset
// index) is walked from there, so a corrupt page hidden inside a sound
// page's bytes is refused before parquet-go could decode it; a read that
// continues an earlier one is not walked.
func TestGuardWalksFromUnknownOffsets(t *testing.T) {
	marshal := func(h format.PageHeader) []byte {
		b, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bad := []byte{0x1f, 'a', 0xff, 0xff, 0x00, 0, 0, 0}
	hidden := append(marshal(format.PageHeader{Type: format.DataPage, CompressedPageSize: int32(len(bad)), UncompressedPageSize: 64,
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: 1, Encoding: format.Plain})}), bad...)
	// The outer page's body: one LZ4 sequence of literals only (a sound
	// block) whose literals are the hidden page.
	n := len(hidden)
	block := []byte{0xf0}
	for r := n - 15; ; r -= 255 {
		if r < 255 {
			block = append(block, byte(r))
			break
		}
		block = append(block, 255)
	}
	block = append(block, hidden...)
	outer := marshal(format.PageHeader{Type: format.DataPage, CompressedPageSize: int32(len(block)), UncompressedPageSize: int32(n),
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: 1, Encoding: format.Plain})})
	file := append(outer, block...)
	at := int64(len(file) - len(hidden))
	md := &format.FileMetaData{RowGroups: []format.RowGroup{{Columns: []format.ColumnChunk{{MetaData: format.ColumnMetaData{
		Codec: format.Lz4Raw, DataPageOffset: 0, TotalCompressedSize: int64(len(file))}}}}}}

	g := GuardReader(bytes.NewReader(file), md).(*guardedReader)
	if err := g.check(0, 16); err != nil {
		t.Fatalf("the sound outer page: %v", err)
	}
	var pe *PageError
	if err := g.check(at, at+16); !errors.As(err, &pe) || pe.Offset != at {
		t.Fatalf("a read starting at the hidden page: %v, want a *PageError at %d", err, at)
	}
	if err := g.check(at+1, at+16); err != nil {
		t.Fatalf("a read starting where no header parses: %v", err)
	}
	g = GuardReader(bytes.NewReader(file), md).(*guardedReader)
	if err := g.check(0, at); err != nil {
		t.Fatal(err)
	}
	if err := g.check(at, at+16); err != nil {
		t.Fatalf("a read continuing the previous one: %v", err)
	}
}

// TestGuardPagesArmsItsChunk: GuardPages arms only the column chunk it
// reads (found in the footer by identity, in every row group and column),
// and still refuses that chunk's lying page while a sound chunk of the same
// file reads through.
func TestGuardPagesArmsItsChunk(t *testing.T) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[testfixture.InflatedRow](&buf, parquet.Compression(&parquet.Zstd), parquet.PageBufferSize(4<<10))
	for g := range 3 {
		rows := make([]testfixture.InflatedRow, 1000)
		for i := range rows {
			rows[i] = testfixture.InflatedRow{ID: int64(g*1000 + i), Name: fmt.Sprint("ariadne-", i%7)}
		}
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil { // a row group per batch
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// readAll reads a chunk's pages through GuardPages; spanned: through a
	// reader that gives the file's ChunkSpans.
	readAll := func(b []byte, rg, col int, spanned bool) (int64, error) {
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		fcc := f.RowGroups()[rg].ColumnChunks()[col].(*parquet.FileColumnChunk)
		var r io.ReaderAt = bytes.NewReader(b)
		if spanned {
			r = spannedReader{r, NewChunkSpans(f.Metadata())}
		}
		pages := GuardPages(fcc, r)
		defer pages.Close()
		var n int64
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n += p.NumValues()
			parquet.Release(p)
		}
	}
	sound := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(sound), int64(len(sound)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata()
	if len(md.RowGroups) != 3 {
		t.Fatalf("%d row groups, want 3", len(md.RowGroups))
	}
	for rg := range 3 {
		for col := range 2 {
			fcc := f.RowGroups()[rg].ColumnChunks()[col].(*parquet.FileColumnChunk)
			if m := chunkMeta(fcc); m != &md.RowGroups[rg].Columns[col].MetaData {
				t.Fatalf("chunkMeta of row group %d column %d is not its footer entry", rg, col)
			}
			off, end := chunkRange(&md.RowGroups[rg].Columns[col].MetaData)
			g, ok := guardRange(bytes.NewReader(sound), md, off, end).(*guardedReader)
			if !ok || len(g.watch) != 1 || g.watch[0].off != off || g.watch[0].end != end {
				t.Fatalf("row group %d column %d: guard armed %v, want its chunk [%d, %d) alone", rg, col, g, off, end)
			}
			for _, spanned := range []bool{false, true} {
				if n, err := readAll(sound, rg, col, spanned); err != nil || n != 1000 {
					t.Fatalf("row group %d column %d (spanned %t): %d values, %v", rg, col, spanned, n, err)
				}
			}
			if ms := NewChunkSpans(md).overlapping(off, end); len(ms) != 1 || ms[0] != &md.RowGroups[rg].Columns[col].MetaData {
				t.Fatalf("row group %d column %d: spans overlapping its range %v, want its chunk alone", rg, col, ms)
			}
		}
	}
	// The spans find the chunks arm's walk finds, for any range.
	cs := NewChunkSpans(md)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		lo := rng.Int64N(int64(len(sound))+10) - 5
		hi := lo + rng.Int64N(int64(len(sound))/2+1)
		var walk []*format.ColumnMetaData
		for i := range md.RowGroups {
			for j := range md.RowGroups[i].Columns {
				m := &md.RowGroups[i].Columns[j].MetaData
				if off, end := chunkRange(m); end > lo && off < hi {
					walk = append(walk, m)
				}
			}
		}
		got := cs.overlapping(lo, hi)
		slices.SortFunc(got, func(a, b *format.ColumnMetaData) int { return cmp.Compare(a.DataPageOffset, b.DataPageOffset) })
		slices.SortFunc(walk, func(a, b *format.ColumnMetaData) int { return cmp.Compare(a.DataPageOffset, b.DataPageOffset) })
		if !slices.Equal(got, walk) {
			t.Fatalf("[%d, %d): spans give %d chunks, the walk %d", lo, hi, len(got), len(walk))
		}
	}
	// The whole file is still armed by GuardReader.
	if g := GuardReader(bytes.NewReader(sound), md).(*guardedReader); len(g.watch) != 6 {
		t.Fatalf("GuardReader armed %d chunks, want 6", len(g.watch))
	}
	lying := testfixture.InflatedPage(t, sound, 1<<30) // row group 0, column 0
	for _, spanned := range []bool{false, true} {
		if _, err := readAll(lying, 0, 0, spanned); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("lying chunk (spanned %t): %v, want a corrupt page", spanned, err)
		}
		if n, err := readAll(lying, 1, 0, spanned); err != nil || n != 1000 {
			t.Fatalf("sound chunk of the lying file (spanned %t): %d values, %v", spanned, n, err)
		}
	}
}

// spannedReader is a reader that gives its file's ChunkSpans.
type spannedReader struct {
	io.ReaderAt
	cs *ChunkSpans
}

func (r spannedReader) ChunkSpans() *ChunkSpans { return r.cs }
