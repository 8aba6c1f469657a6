package state

// KeyGroup maps a key's hash to one of maxParallelism key groups.
func KeyGroup(hash uint64, maxParallelism int) int {
	return int(hash % uint64(maxParallelism))
}

// SubtaskOf returns the subtask, among parallelism, that owns key group kg
// (Flink's KeyGroupRangeAssignment: contiguous ranges of key groups).
func SubtaskOf(kg, maxParallelism, parallelism int) int {
	return kg * parallelism / maxParallelism
}

// KeyGroupRange returns the key groups [start, end] owned by subtask.
func KeyGroupRange(subtask, maxParallelism, parallelism int) (start, end int) {
	start = (subtask*maxParallelism + parallelism - 1) / parallelism
	end = ((subtask+1)*maxParallelism - 1) / parallelism
	return start, end
}
