package store

import (
	"context"
	"fmt"
	"net/url"
)

func openBlob(ctx context.Context, u *url.URL) (Store, error) {
	return nil, fmt.Errorf("store: open %s: TODO", redact(u))
}
