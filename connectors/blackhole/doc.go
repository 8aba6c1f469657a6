// Package blackhole is Flink's blackhole sink: it accepts every row
// (updates included) and discards it. It takes no options, allocates
// nothing per batch, and is what benchmarks write to.
package blackhole
