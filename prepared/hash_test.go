package prepared

import (
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestHashValueIsSparks: a key value hashes as Spark hashes the value it
// reads from the column (values of SELECT hash(...) in Spark 3.5).
func TestHashValueIsSparks(t *testing.T) {
	for _, c := range []struct {
		name string
		typ  parquet.Type
		v    parquet.Value
		want int32
	}{
		{"int 1", parquet.Int32Type, parquet.Int32Value(1), -559580957},
		{"bigint 1", parquet.Int64Type, parquet.Int64Value(1), -1712319331},
		{"date 2024-06-01", parquet.Date().Type(), parquet.Int32Value(19875), 2074417381},
		{"timestamp(millis) 2024-06-01", parquet.Timestamp(parquet.Millisecond).Type(), parquet.Int64Value(1717200000000), 644546173},
		{"timestamp(micros) 2024-06-01", parquet.Timestamp(parquet.Microsecond).Type(), parquet.Int64Value(1717200000000000), 644546173},
		{"timestamp(nanos) 2024-06-01", parquet.Timestamp(parquet.Nanosecond).Type(), parquet.Int64Value(1717200000000000000), 644546173},
		{"string abc", parquet.String().Type(), parquet.ByteArrayValue([]byte("abc")), 1322437556},
		{"double 1.5", parquet.DoubleType, parquet.DoubleValue(1.5), 1290763749},
		{"float 2.5", parquet.FloatType, parquet.FloatValue(2.5), 204117216},
		{"boolean true", parquet.BooleanType, parquet.BooleanValue(true), -559580957},
		{"null", parquet.Int64Type, parquet.NullValue(), 42},
	} {
		if got := hashValue(c.typ, c.v); got != c.want {
			t.Errorf("%s: %d, Spark gives %d", c.name, got, c.want)
		}
	}
}
