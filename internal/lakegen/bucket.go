package lakegen

import "github.com/ariadne-go/ariadne/internal/sparkhash"

// BucketOf returns the bucket of a user id among n buckets as Spark computes
// it for bucketBy(n, user_id): pmod(murmur3_x86_32(user_id, seed 42), n)
// (sparkhash.Long). A Spark reader given the table's bucket spec therefore
// agrees with the generated layout.
func BucketOf(userID int64, n int) int {
	return sparkhash.Bucket(sparkhash.Long(userID, sparkhash.Seed), n)
}
