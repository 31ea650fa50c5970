package delta

import (
	"context"
	"errors"

	"github.com/ariadne-go/ariadne/store"
)

// errIncompleteCheckpoint: a checkpoint refers to a sidecar that is not in
// the listing; replay skips it like a multi-part checkpoint missing a part.
var errIncompleteCheckpoint = errors.New("delta: incomplete checkpoint")

// missingKey names the first missing object of an incomplete checkpoint.
func (c *checkpoint) missingKey(l *logListing) string {
	if k := c.missing(); k != "" {
		return k
	}
	return c.keys[0]
}

// readCheckpoint reads every action of a checkpoint (all parts, and for v2
// checkpoints, all sidecars).
func readCheckpoint(ctx context.Context, st store.Store, l *logListing, c *checkpoint) ([]Action, error) {
	return nil, errors.New("TODO")
}
