// Package exec runs a physical plan: one goroutine per operator subtask,
// bounded channels between them (backpressure), and the operators
// themselves, which consume and produce Arrow batches with an optional
// changelog-op column. Watermarks, checkpoint barriers and end-of-input
// travel the same channels as data (see Element).
//
// A source subtask computes its table's computed columns and stamps
// processing time over each batch, and emits the clock as the watermark of
// a processing-time table (proctime.go); PROCTIME() in a select list is
// stamped by its own operator, which sends its clock as the watermark
// (proctime_attr.go). A lookup join reads its bounded table through the
// table's connector source when it opens (lookup_join.go).
//
// It also defines the contracts connectors implement (Source, Sink) and
// RegisterConnector, which puts a connector's factories with its
// capabilities into the one connector registry (catalog's), so that exec
// never imports a connector.
package exec
