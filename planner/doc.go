// Package planner turns statements into plans. It binds names and types
// (Binder), builds a logical plan of relational nodes, rewrites it with
// rules kept one per file (constant folding, predicate pushdown, projection
// pruning, ROW field pruning), infers each node's changelog mode (append-only or updating), and
// lays the result out as a physical DAG of operators with parallelism,
// exchanges and stable operator ids. EXPLAIN prints both plans.
//
// ROW columns: a.b is a field when a is a ROW column in scope (field.go
// says how a dotted name is read, and refuses one that could mean two
// things); a field access is a Call of functions.FieldAccess. A ROW never
// reaches an operator with keyed state (refuseRowState).
//
// RisingWave's EMIT ON WINDOW CLOSE is honoured on window aggregations over
// a time attribute and rejected elsewhere (emit.go).
//
// Computed columns (c AS expr) are bound per scan and computed in the
// source subtask; pt AS PROCTIME() is a processing-time attribute, and
// windows over it are processing-time windows (computed.go, proctime.go);
// PROCTIME() in a select list is the column of an AddProctime node
// (proctime_attr.go). FOR SYSTEM_TIME AS OF a processing-time column is a
// lookup join against a bounded table (lookup_join.go).
//
// One operator may have a second output: a window aggregate whose late
// records go to a table ('table.exec.late-records.table', late.go) feeds
// that table's sink along an Edge marked Late, which carries rows of the
// window's input rather than its results.
//
// It imports sql (statements and positions), catalog (tables, views and the
// connector registry), functions (operator and function typing) and types.
// It never imports exec or a connector: what a connector can do comes from
// catalog's registry.
package planner
