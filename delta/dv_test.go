package delta

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestZ85(t *testing.T) {
	// The ZeroMQ RFC 32 test vector.
	got, err := z85Decode("HelloWorld")
	want := []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("z85Decode(HelloWorld) = %x, %v", got, err)
	}
	for _, bad := range []string{"Hell", "Hello Worl", "%%%%%"} {
		if _, err := z85Decode(bad); err == nil {
			t.Errorf("z85Decode(%q): no error", bad)
		}
	}
}

func TestDVFilePath(t *testing.T) {
	// From table-with-dv-small (written by Spark).
	d := &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDV: "vBn[lx{q8@P<9BNH/isA"}
	p, err := d.DVFilePath()
	if err != nil || p != "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin" {
		t.Fatalf("DVFilePath = %q, %v", p, err)
	}
	d.PathOrInlineDV = "ab" + d.PathOrInlineDV
	if p, _ := d.DVFilePath(); p != "ab/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin" {
		t.Fatalf("with prefix: %q", p)
	}
}

// roaringArray serialises row indexes as a RoaringBitmapArray, using array
// containers, or run containers when runs is set (an independent encoder
// following the spec, to test the decoder on both layouts).
func roaringArray(rows []uint64, runs bool) []byte {
	b := binary.LittleEndian.AppendUint32(nil, dvMagic)
	byHigh := map[uint32][]uint32{}
	var highs []uint32
	for _, r := range rows {
		h := uint32(r >> 32)
		if _, ok := byHigh[h]; !ok {
			highs = append(highs, h)
		}
		byHigh[h] = append(byHigh[h], uint32(r))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(highs)))
	for _, h := range highs {
		b = binary.LittleEndian.AppendUint32(b, h)
		vals := byHigh[h]
		// one container per 16-bit key
		type cont struct {
			key  uint16
			vals []uint16
		}
		var cs []cont
		for _, v := range vals {
			k := uint16(v >> 16)
			if len(cs) == 0 || cs[len(cs)-1].key != k {
				cs = append(cs, cont{key: k})
			}
			cs[len(cs)-1].vals = append(cs[len(cs)-1].vals, uint16(v))
		}
		if runs {
			b = binary.LittleEndian.AppendUint32(b, roaringSerialCookie|uint32(len(cs)-1)<<16)
			rb := make([]byte, (len(cs)+7)/8)
			for i := range cs {
				rb[i/8] |= 1 << (i % 8)
			}
			b = append(b, rb...)
		} else {
			b = binary.LittleEndian.AppendUint32(b, roaringSerialCookieNoRun)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(cs)))
		}
		for _, c := range cs {
			b = binary.LittleEndian.AppendUint16(b, c.key)
			b = binary.LittleEndian.AppendUint16(b, uint16(len(c.vals)-1))
		}
		if !runs || len(cs) >= roaringNoOffsetThreshold {
			for range cs {
				b = binary.LittleEndian.AppendUint32(b, 0) // offsets are not used by the decoder
			}
		}
		for _, c := range cs {
			if runs {
				// one run per maximal consecutive sequence
				var rs [][2]uint16
				for _, v := range c.vals {
					if n := len(rs); n > 0 && rs[n-1][0]+rs[n-1][1]+1 == v {
						rs[n-1][1]++
					} else {
						rs = append(rs, [2]uint16{v, 0})
					}
				}
				b = binary.LittleEndian.AppendUint16(b, uint16(len(rs)))
				for _, r := range rs {
					b = binary.LittleEndian.AppendUint16(b, r[0])
					b = binary.LittleEndian.AppendUint16(b, r[1])
				}
				continue
			}
			for _, v := range c.vals {
				b = binary.LittleEndian.AppendUint16(b, v)
			}
		}
	}
	return b
}

func TestRoaringArray(t *testing.T) {
	rows := []uint64{0, 1, 2, 3, 7, 65535, 65536, 65537, 1 << 20, 1<<32 + 5, 1<<33 + 1, 1<<33 + 2}
	for _, runs := range []bool{false, true} {
		got, err := decodeRoaringArray(roaringArray(rows, runs))
		if err != nil || !slices.Equal(got, rows) {
			t.Errorf("runs=%v: %v, %v", runs, got, err)
		}
	}
	// A bitmap container (more than 4096 values).
	var dense []uint64
	for i := uint64(0); i < 5000; i++ {
		dense = append(dense, 2*i)
	}
	b := binary.LittleEndian.AppendUint32(nil, dvMagic)
	b = binary.LittleEndian.AppendUint64(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, roaringSerialCookieNoRun)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dense)-1))
	b = binary.LittleEndian.AppendUint32(b, 0)
	bm := make([]byte, roaringBitmapBytes)
	for _, v := range dense {
		bm[v/8] |= 1 << (v % 8)
	}
	b = append(b, bm...)
	if got, err := decodeRoaringArray(b); err != nil || !slices.Equal(got, dense) {
		t.Errorf("bitmap container: %d values, %v", len(got), err)
	}
	// Damaged inputs fail, never panic.
	good := roaringArray(rows, true)
	for i := 0; i < len(good); i++ {
		if _, err := decodeRoaringArray(good[:i]); err == nil {
			t.Errorf("truncated to %d bytes: no error", i)
		}
	}
	bad := slices.Clone(good)
	bad[0] ^= 1
	if _, err := decodeRoaringArray(bad); !errors.Is(err, errBadDV) {
		t.Errorf("bad magic: %v", err)
	}
}

// TestDVFileChecks: a DV file with a wrong checksum or size is corrupt.
func TestDVFileChecks(t *testing.T) {
	ctx := context.Background()
	dir := copyTable(t, "table-with-dv-small")
	dvPath := filepath.Join(dir, "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin")
	orig, _ := os.ReadFile(dvPath)
	tbl := openDir(t, dir)
	s, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Files()[0].DeletionVector
	dv, err := LoadDeletionVector(ctx, tbl.Store(), d)
	if err != nil || dv.Cardinality() != 2 {
		t.Fatalf("LoadDeletionVector: %v, %v", dv, err)
	}
	// Sanity of the format: size prefix then CRC-32 of the data.
	data := orig[5 : 5+d.SizeInBytes]
	if binary.BigEndian.Uint32(orig[5+d.SizeInBytes:]) != crc32.ChecksumIEEE(data) {
		t.Fatal("fixture checksum")
	}
	damaged := slices.Clone(orig)
	damaged[len(damaged)-1] ^= 0xff
	os.WriteFile(dvPath, damaged, 0o644)
	if _, err := LoadDeletionVector(ctx, tbl.Store(), d); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("bad checksum: %v", err)
	}
	os.WriteFile(dvPath, orig[:10], 0o644)
	if _, err := LoadDeletionVector(ctx, tbl.Store(), d); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("truncated: %v", err)
	}
	// Scan reports it too.
	for _, err := range s.Scan(ctx, ScanOptions{}) {
		if !errors.Is(err, ErrCorruptLog) {
			t.Fatalf("Scan over a truncated DV: %v", err)
		}
		break
	}
}
