package prepared

import (
	"context"
	"errors"
	"sync"
)

// parallel runs work(i) for i in [0, n) on up to workers goroutines, calls
// done (from the calling goroutine) as each finishes, and returns the error
// of the lowest failed i (the others are cancelled). An error is the one a
// sequential run would return first, so failures are deterministic.
func parallel(ctx context.Context, n, workers int, work func(ctx context.Context, i int) error, done func(finished, i int)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	next := make(chan int)
	finished := make(chan int)
	var wg sync.WaitGroup
	for range max(min(workers, n), 1) {
		wg.Go(func() {
			for i := range next {
				if err := work(ctx, i); err != nil {
					errs[i] = err
					cancel()
				}
				finished <- i
			}
		})
	}
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(finished) }()
	count := 0
	for i := range finished {
		if errs[i] == nil && done != nil {
			count++
			done(count, i)
		}
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}
