// Package sql turns text into statements. It owns the dialect: the TiDB
// (MySQL) parser for queries and expressions, plus a thin layer for the
// streaming syntax MySQL lacks (WITH ('k'='v') table options, WATERMARK
// FOR, PRIMARY KEY ... NOT ENFORCED, Flink type names, SET 'k' = 'v',
// RESET, SHOW JOBS, STOP JOB, EXECUTE STATEMENT SET, CREATE TEMPORARY VIEW).
//
// Every position reported by this package, and every *Error built by later
// stages from a Pos of this package, is a line:column of the text the user
// wrote, never of a rewritten form.
//
// Queries and expressions are left as TiDB AST nodes (ast.ResultSetNode,
// ast.ExprNode); binding them to tables is the planner's job.
//
// It imports nothing of streamsql's.
package sql
