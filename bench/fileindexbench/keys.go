package fileindexbench

import (
	"math/rand/v2"

	"github.com/ariadne-go/ariadne/internal/lakegen"
)

// keyGen draws users: present ones by activity (lakegen's Zipf law, so
// hot users come up as often as they play) and absent ones (ids above
// lakegen.UserID's range, which ends at 4,294,967,291).
type keyGen struct {
	rng  *rand.Rand
	zipf *rand.Zipf
}

func newKeyGen(c lakegen.Config) *keyGen {
	rng := rand.New(rand.NewPCG(c.Seed+7, 3))
	d := lakegen.DefaultConfig()
	users := max(c.Users, 2)
	s, v := c.ZipfS, c.ZipfV
	if s <= 1 {
		s = d.ZipfS
	}
	if v < 1 {
		v = d.ZipfV
	}
	return &keyGen{rng: rng, zipf: rand.NewZipf(rng, s, v, uint64(users-1))}
}

// query returns n keys for a locate: even positions present, odd absent.
func (b *keyGen) query(n int) []any {
	out := make([]any, n)
	for i := range out {
		if i%2 == 0 {
			out[i] = lakegen.UserID(b.zipf.Uint64())
		} else {
			out[i] = int64(5_000_000_000 + b.rng.Int64N(1<<40))
		}
	}
	return out
}

// present returns n distinct present users drawn by activity, for a join.
func (b *keyGen) present(n int) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for len(out) < n {
		u := lakegen.UserID(b.zipf.Uint64())
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}
