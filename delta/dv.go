package delta

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/ariadne-go/ariadne/store"
)

// Deletion vectors (PROTOCOL.md, "Deletion Vectors" and "Deletion Vector
// Format"). A vector is a RoaringBitmapArray: the magic number, then 64-bit
// row indexes split into a 32-bit high key and a 32-bit Roaring bitmap (in
// the portable serialisation) per key. Inline vectors store it z85-encoded
// in the descriptor; "u" and "p" vectors store it in a file at Offset as
// <size uint32 BE><data><CRC-32 of data, uint32 BE>, the file starting with
// a one-byte format version.

// Errors specific to deletion vectors wrap ErrCorruptLog.
var errBadDV = errors.New("invalid deletion vector")

const (
	// dvMagic is the RoaringBitmapArray magic number (little-endian int32).
	dvMagic = 1681511377
	// roaringSerialCookieNoRun and roaringSerialCookie are the cookies of
	// the portable Roaring format, without and with run containers.
	roaringSerialCookieNoRun = 12346
	roaringSerialCookie      = 12347
	// roaringNoOffsetThreshold: with run containers, the offset header is
	// present only from this many containers on.
	roaringNoOffsetThreshold = 4
	// roaringMaxArray is the largest array container; larger containers are
	// bitmaps of 2^16 bits = 8 192 bytes.
	roaringMaxArray    = 4096
	roaringBitmapBytes = 1 << 16 / 8
	// maxDVBytes bounds a vector we are willing to load: a bitmap of every
	// row of a 2^31-row file is at most 2^31/8 = 256 MiB (bitmap containers
	// are densest); anything larger is corrupt.
	maxDVBytes = 256 << 20
)

// DeletionVector is a decoded deletion vector: the sorted row indexes
// deleted from a data file.
type DeletionVector struct {
	rows []uint64 // sorted ascending
}

// Cardinality returns the number of deleted rows.
func (d *DeletionVector) Cardinality() int { return len(d.rows) }

// Contains reports whether row index i is deleted.
func (d *DeletionVector) Contains(i uint64) bool {
	j := sort.Search(len(d.rows), func(k int) bool { return d.rows[k] >= i })
	return j < len(d.rows) && d.rows[j] == i
}

// Rows returns the deleted row indexes in ascending order.
func (d *DeletionVector) Rows() []uint64 { return append([]uint64(nil), d.rows...) }

// z85Alphabet is the Z85 alphabet (ZeroMQ RFC 32).
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

var z85Index = func() [256]int16 {
	var t [256]int16
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = int16(i)
	}
	return t
}()

// z85Decode decodes Z85 text (a multiple of 5 characters) into 4 bytes per
// 5 characters.
func z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("%w: z85 text of length %d is not a multiple of 5", errBadDV, len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := 0; j < 5; j++ {
			d := z85Index[s[i+j]]
			if d < 0 {
				return nil, fmt.Errorf("%w: invalid z85 character %q", errBadDV, s[i+j])
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("%w: z85 group %q overflows", errBadDV, s[i:i+5])
		}
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out, nil
}

// DVFilePath returns the path of a "u" or "p" deletion vector's file: for
// "u", relative to the table root, "<prefix>/deletion_vector_<uuid>.bin"
// where PathOrInlineDV is the prefix followed by the 20-character z85 UUID;
// for "p", the absolute path as given.
func (d *DeletionVectorDescriptor) DVFilePath() (string, error) {
	switch d.StorageType {
	case "u":
		s := d.PathOrInlineDV
		if len(s) < 20 {
			return "", fmt.Errorf("%w: relative path %q is shorter than a z85 UUID", errBadDV, s)
		}
		prefix, enc := s[:len(s)-20], s[len(s)-20:]
		raw, err := z85Decode(enc)
		if err != nil {
			return "", err
		}
		id, err := uuid.FromBytes(raw)
		if err != nil {
			return "", fmt.Errorf("%w: %v", errBadDV, err)
		}
		name := "deletion_vector_" + id.String() + ".bin"
		if prefix != "" {
			return prefix + "/" + name, nil
		}
		return name, nil
	case "p":
		return DecodePath(d.PathOrInlineDV)
	}
	return "", fmt.Errorf("%w: storage type %q has no file", errBadDV, d.StorageType)
}

// LoadDeletionVector reads and decodes the deletion vector of a data file of
// the table rooted at st. A nil descriptor yields an empty vector. Errors
// match ErrCorruptLog (a bad checksum, size or encoding) or are the store's.
func LoadDeletionVector(ctx context.Context, st store.Store, d *DeletionVectorDescriptor) (*DeletionVector, error) {
	if d == nil {
		return &DeletionVector{}, nil
	}
	where := "deletion vector " + d.UniqueID()
	var data []byte
	switch d.StorageType {
	case "i":
		raw, err := z85Decode(d.PathOrInlineDV)
		if err != nil {
			return nil, corrupt(where, 0, err)
		}
		if int(d.SizeInBytes) > len(raw) || d.SizeInBytes < 0 {
			return nil, corrupt(where, 0, fmt.Errorf("%w: inline size %d exceeds %d decoded bytes", errBadDV, d.SizeInBytes, len(raw)))
		}
		data = raw[:d.SizeInBytes]
	case "u", "p":
		p, err := d.DVFilePath()
		if err != nil {
			return nil, corrupt(where, 0, err)
		}
		key, err := tableKey(st, p)
		if err != nil {
			return nil, corrupt(where, 0, err)
		}
		where = key
		if d.SizeInBytes < 0 || d.SizeInBytes > maxDVBytes {
			return nil, corrupt(where, 0, fmt.Errorf("%w: size %d", errBadDV, d.SizeInBytes))
		}
		off := int64(1) // after the format version byte
		if d.Offset != nil {
			off = int64(*d.Offset)
		}
		// <size:4><data:size><crc:4>, one ranged read.
		rc, err := st.NewRangeReader(ctx, key, off, int64(d.SizeInBytes)+8)
		if err != nil {
			return nil, corrupt(where, 0, err)
		}
		buf, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, corrupt(where, 0, err)
		}
		if len(buf) != int(d.SizeInBytes)+8 {
			return nil, corrupt(where, 0, fmt.Errorf("%w: read %d bytes at offset %d, want %d", errBadDV, len(buf), off, int(d.SizeInBytes)+8))
		}
		if n := binary.BigEndian.Uint32(buf); n != uint32(d.SizeInBytes) {
			return nil, corrupt(where, 0, fmt.Errorf("%w: stored size %d, descriptor says %d", errBadDV, n, d.SizeInBytes))
		}
		data = buf[4 : 4+d.SizeInBytes]
		if want, got := binary.BigEndian.Uint32(buf[4+d.SizeInBytes:]), crc32.ChecksumIEEE(data); want != got {
			return nil, corrupt(where, 0, fmt.Errorf("%w: checksum %08x, stored %08x", errBadDV, got, want))
		}
	default:
		return nil, corrupt(where, 0, fmt.Errorf("%w: unknown storage type %q", errBadDV, d.StorageType))
	}
	rows, err := decodeRoaringArray(data)
	if err != nil {
		return nil, corrupt(where, 0, err)
	}
	if int64(len(rows)) != d.Cardinality {
		return nil, corrupt(where, 0, fmt.Errorf("%w: %d rows, descriptor cardinality %d", errBadDV, len(rows), d.Cardinality))
	}
	return &DeletionVector{rows: rows}, nil
}

// tableKey turns a decoded file path of the table into a store key: a
// relative path as is, an absolute URI only when it lies under the store's
// root.
func tableKey(st store.Store, p string) (string, error) {
	if !isAbsoluteURI(p) && !strings.HasPrefix(p, "/") {
		return p, nil
	}
	root := strings.TrimSuffix(st.URL(), "/") + "/"
	for _, cand := range []string{p, strings.Replace(p, "file:/", "file:///", 1), "file://" + p} {
		if k, ok := strings.CutPrefix(cand, root); ok {
			return k, nil
		}
	}
	return "", fmt.Errorf("absolute path %s is outside the table root %s", p, root)
}

// decodeRoaringArray decodes a RoaringBitmapArray (with its magic number)
// into sorted row indexes.
func decodeRoaringArray(b []byte) ([]uint64, error) {
	if len(b) < 12 {
		return nil, fmt.Errorf("%w: %d bytes is too short", errBadDV, len(b))
	}
	if m := binary.LittleEndian.Uint32(b); m != dvMagic {
		return nil, fmt.Errorf("%w: magic number %d, want %d", errBadDV, m, dvMagic)
	}
	n := binary.LittleEndian.Uint64(b[4:])
	b = b[12:]
	var rows []uint64
	for i := uint64(0); i < n; i++ {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: truncated before bitmap %d", errBadDV, i)
		}
		high := uint64(binary.LittleEndian.Uint32(b)) << 32
		used, err := decodeRoaring32(b[4:], func(v uint32) { rows = append(rows, high|uint64(v)) })
		if err != nil {
			return nil, err
		}
		b = b[4+used:]
	}
	if !sort.SliceIsSorted(rows, func(i, j int) bool { return rows[i] < rows[j] }) {
		return nil, fmt.Errorf("%w: bitmap keys out of order", errBadDV)
	}
	return rows, nil
}

// decodeRoaring32 decodes one 32-bit Roaring bitmap in the portable format
// (github.com/RoaringBitmap/RoaringFormatSpec), calling add for each value in
// ascending order, and returns the number of bytes consumed.
func decodeRoaring32(b []byte, add func(uint32)) (int, error) {
	short := fmt.Errorf("%w: truncated roaring bitmap", errBadDV)
	pos := 0
	u16 := func() (uint16, bool) {
		if pos+2 > len(b) {
			return 0, false
		}
		v := binary.LittleEndian.Uint16(b[pos:])
		pos += 2
		return v, true
	}
	u32 := func() (uint32, bool) {
		if pos+4 > len(b) {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(b[pos:])
		pos += 4
		return v, true
	}
	cookie, ok := u32()
	if !ok {
		return 0, short
	}
	var size int
	var runs []byte
	hasOffsets := true
	switch {
	case cookie&0xFFFF == roaringSerialCookie:
		size = int(cookie>>16) + 1
		nb := (size + 7) / 8
		if pos+nb > len(b) {
			return 0, short
		}
		runs = b[pos : pos+nb]
		pos += nb
		hasOffsets = size >= roaringNoOffsetThreshold
	case cookie == roaringSerialCookieNoRun:
		s, ok := u32()
		if !ok {
			return 0, short
		}
		size = int(s)
	default:
		return 0, fmt.Errorf("%w: roaring cookie %d", errBadDV, cookie)
	}
	if size > 1<<16 {
		return 0, fmt.Errorf("%w: %d containers", errBadDV, size)
	}
	keys := make([]uint16, size)
	cards := make([]int, size)
	for i := 0; i < size; i++ {
		k, ok1 := u16()
		c, ok2 := u16()
		if !ok1 || !ok2 {
			return 0, short
		}
		keys[i], cards[i] = k, int(c)+1
	}
	if hasOffsets {
		if pos+4*size > len(b) {
			return 0, short
		}
		pos += 4 * size // offsets: containers follow in order anyway
	}
	for i := 0; i < size; i++ {
		high := uint32(keys[i]) << 16
		switch {
		case runs != nil && runs[i/8]&(1<<(i%8)) != 0:
			nr, ok := u16()
			if !ok {
				return 0, short
			}
			for r := 0; r < int(nr); r++ {
				start, ok1 := u16()
				length, ok2 := u16()
				if !ok1 || !ok2 {
					return 0, short
				}
				for v := int(start); v <= int(start)+int(length); v++ {
					add(high | uint32(v))
				}
			}
		case cards[i] <= roaringMaxArray:
			for j := 0; j < cards[i]; j++ {
				v, ok := u16()
				if !ok {
					return 0, short
				}
				add(high | uint32(v))
			}
		default:
			if pos+roaringBitmapBytes > len(b) {
				return 0, short
			}
			for w := 0; w < roaringBitmapBytes/8; w++ {
				word := binary.LittleEndian.Uint64(b[pos+8*w:])
				for word != 0 {
					bit := uint32(bits.TrailingZeros64(word))
					add(high | uint32(w*64) | bit)
					word &= word - 1
				}
			}
			pos += roaringBitmapBytes
		}
	}
	return pos, nil
}
