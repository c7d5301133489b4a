package history

// SetPruneBatch makes Prune delete n rows at a time, so that tests cross
// batch boundaries with few rows.
func (h *History) SetPruneBatch(n int) { h.pruneBatch = n }
