package prepared

import (
	"errors"
	"fmt"
)

// ErrMemoryBudget is the kind of a *BudgetError: the rows to sort do not fit
// in Options.MemoryBytes.
var ErrMemoryBudget = errors.New("prepared: memory budget exceeded")

// BudgetError reports input that does not fit in the sort budget. Nothing
// was written for it.
type BudgetError struct {
	What   string // the input being sorted: a file key or a partition
	Need   int64  // bytes the rows read so far take (a lower bound)
	Budget int64  // Options.MemoryBytes
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("prepared: %s: rows need more than %d bytes to sort in memory (budget %d); raise the budget or prepare fewer rows at once",
		e.What, e.Need, e.Budget)
}

// Is makes errors.Is(err, ErrMemoryBudget) true.
func (e *BudgetError) Is(target error) bool { return target == ErrMemoryBudget }
