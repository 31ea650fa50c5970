package rowindex

import "sync"

// budgetSet holds values by key within a budget of bytes, for what Warm
// makes resident (fragment groups, resident.go; page shapes, shapes.go).
// Not an LRU: only Warm adds (never evicting), so a lookup's probe takes a
// read lock and nothing else.
type budgetSet[K comparable, V any] struct {
	mu     sync.RWMutex
	budget int64
	used   int64
	m      map[K]budgetEntry[V]
}

// budgetEntry is a value with what it was charged.
type budgetEntry[V any] struct {
	v    V
	cost int64
}

func newBudgetSet[K comparable, V any](budget int64) *budgetSet[K, V] {
	return &budgetSet[K, V]{budget: max(budget, 0), m: map[K]budgetEntry[V]{}}
}

// get returns the value under k, if any.
func (s *budgetSet[K, V]) get(k K) (V, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.m[k]
	return e.v, ok
}

// add keeps v under k, charged cost, unless k is there already; full
// reports that it did not fit what is left of the budget.
func (s *budgetSet[K, V]) add(k K, v V, cost int64) (full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; ok {
		return false
	}
	if s.used+cost > s.budget {
		return true
	}
	s.m[k] = budgetEntry[V]{v, cost}
	s.used += cost
	return false
}

// keepOnly drops the values whose keys keep rejects (a Refresh replaced
// what they belong to).
func (s *budgetSet[K, V]) keepOnly(keep func(K) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.m {
		if !keep(k) {
			delete(s.m, k)
			s.used -= e.cost
		}
	}
}

// each calls fn for every value (under the read lock: fn must not call
// the set).
func (s *budgetSet[K, V]) each(fn func(K, V)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for k, e := range s.m {
		fn(k, e.v)
	}
}

// limit returns the budget.
func (s *budgetSet[K, V]) limit() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.budget
}

// setBudget sets the budget (values already held stay).
func (s *budgetSet[K, V]) setBudget(b int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budget = max(b, 0)
}

// stats returns the bytes held and the number of values.
func (s *budgetSet[K, V]) stats() (used int64, n int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.used, len(s.m)
}

// clear drops every value.
func (s *budgetSet[K, V]) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.m)
	s.used = 0
}
