package sparkhash

import (
	"math"
	"testing"
	"time"
)

// TestMatchesSpark pins every hash against the value Spark 3.5 returns for
// SELECT hash(...) (run with pyspark from the interop harness; the query is
// in the comment of each case).
func TestMatchesSpark(t *testing.T) {
	day := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		sql  string
		got  int32
		want int32
	}{
		{"hash(1)", Int(1, Seed), -559580957},
		{"hash(true)", Int(1, Seed), -559580957},
		{"hash(CAST(1 AS BIGINT))", Long(1, Seed), -1712319331},
		{"hash(CAST(-7 AS BIGINT))", Long(-7, Seed), 222034016},
		{"hash(DATE'2024-06-01')", Int(int32(day.Unix()/86400), Seed), 2074417381},
		{"hash(TIMESTAMP'2024-06-01 00:00:00 UTC')", Long(day.UnixMicro(), Seed), 644546173},
		{"hash(CAST(1.5 AS DOUBLE))", Double(1.5, Seed), 1290763749},
		{"hash(CAST(0.0 AS DOUBLE))", Double(0, Seed), -1670924195},
		{"hash(CAST(-0.0 AS DOUBLE))", Double(math.Copysign(0, -1), Seed), -1670924195},
		{"hash(CAST(2.5 AS FLOAT))", Float(2.5, Seed), 204117216},
		{"hash('')", Bytes(nil, Seed), 142593372},
		{"hash('a')", Bytes([]byte("a"), Seed), 1485273170},
		{"hash('ab')", Bytes([]byte("ab"), Seed), -97053317},
		{"hash('abc')", Bytes([]byte("abc"), Seed), 1322437556},
		{"hash('abcd')", Bytes([]byte("abcd"), Seed), -396302900},
		{"hash('abcde')", Bytes([]byte("abcde"), Seed), 814637928},
		{"hash('héllo wörld')", Bytes([]byte("héllo wörld"), Seed), -281075962},
		{"hash(CAST('ÿ' AS BINARY))", Bytes([]byte("ÿ"), Seed), 1533202516},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, Spark gives %d", c.sql, c.got, c.want)
		}
	}
	// pmod(hash(CAST(123456789 AS BIGINT)), 4) = 1 in Spark.
	if b := Bucket(Long(123456789, Seed), 4); b != 1 {
		t.Errorf("bucket of 123456789 among 4 = %d, Spark gives 1", b)
	}
}

func TestBucketIsPmod(t *testing.T) {
	for _, c := range []struct {
		h    int32
		n    int
		want int
	}{{7, 4, 3}, {-7, 4, 1}, {-8, 4, 0}, {math.MinInt32, 3, 1}, {math.MaxInt32, 1, 0}} {
		if got := Bucket(c.h, c.n); got != c.want {
			t.Errorf("Bucket(%d, %d) = %d, want %d", c.h, c.n, got, c.want)
		}
	}
}
