package planner

// CountSelects counts the SELECT blocks bound into *n until the returned
// function is called.
func CountSelects(n *int) (stop func()) {
	selectHook = func() { *n++ }
	return func() { selectHook = nil }
}

// LimitSelectBlocks makes max the limit of SELECT blocks per statement
// until the returned function is called.
func LimitSelectBlocks(max int) (restore func()) {
	maxSelectBlocks = max
	return func() { maxSelectBlocks = MaxSelectBlocks }
}
