// Package rowfmt prints rows of a batch the way Flink's print connector and
// the tests show them: +I[1, a, NULL], each value as types.Format prints it.
// It is for output and tests, not for a per-row hot path (it allocates).
package rowfmt
