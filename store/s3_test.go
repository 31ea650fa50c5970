package store_test

import (
	"testing"

	"github.com/ariadne-go/ariadne/internal/s3test"
	"github.com/ariadne-go/ariadne/store"
)

func init() {
	extraBackends = append(extraBackends,
		backend{"s3", func(t *testing.T) store.Store {
			return mustOpen(t, s3test.Start(t).URL("", ""))
		}, true},
		backend{"s3-prefix", func(t *testing.T) store.Store {
			return mustOpen(t, s3test.Start(t).URL("some/prefix", ""))
		}, true},
	)
}
