package prepared

import (
	"errors"
	"fmt"
)

// ErrMemoryBudget is the kind of a *BudgetError: the rows of one key, which
// the writer holds at once to cut its pages, do not fit in half of
// Options.MemoryBytes (the rest of the input is sorted externally).
var ErrMemoryBudget = errors.New("prepared: memory budget exceeded")

// BudgetError reports input that does not fit in the sort budget. Nothing
// was written for it.
type BudgetError struct {
	What   string // the rows held: one key's rows in a file
	Need   int64  // bytes the rows read so far take (a lower bound)
	Budget int64  // the limit: half of Options.MemoryBytes
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("prepared: %s: rows need more than %d bytes in memory (budget %d, half of it for rows held); raise the budget",
		e.What, e.Need, e.Budget)
}

// Is makes errors.Is(err, ErrMemoryBudget) true.
func (e *BudgetError) Is(target error) bool { return target == ErrMemoryBudget }
