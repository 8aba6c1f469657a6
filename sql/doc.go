// Package sql turns text into statements. It owns the dialect: the TiDB
// (MySQL) parser for queries and expressions, plus a thin layer for the
// streaming syntax MySQL lacks (WITH ('k'='v') table options, WATERMARK
// FOR, PRIMARY KEY ... NOT ENFORCED, Flink type names, SET 'k' = 'v',
// RESET, SHOW JOBS and the other SHOWs of Flink's SQL client, USE, DESCRIBE
// JOB, STOP JOB, EXECUTE STATEMENT SET, CREATE TEMPORARY VIEW).
//
// Every position reported by this package, and every *Error built by later
// stages from a Pos of this package, is a line:column of the text the user
// wrote, never of a rewritten form.
//
// Queries and expressions are left as TiDB AST nodes (ast.ResultSetNode,
// ast.ExprNode); binding them to tables is the planner's job.
//
// It imports nothing of streamsql's.
//
// # How a script is parsed
//
// A small lexer (lexer.go) splits the script into tokens with byte
// offsets, skipping comments. The script is cut into statements at ';'
// (split.go); a statement set is one statement. Statements of our own
// (CREATE TABLE, SET, SHOW, ...) are parsed directly from the tokens. Queries
// and expressions go to the TiDB parser after rewrites (rewrite.go): each
// rewrite is an edit of the text, and an offset map built with the edits
// takes every offset the TiDB parser reports (in errors and in the
// OriginTextPosition of expression nodes) back to the script. After parsing,
// OriginTextPosition of every expression node is its byte offset in the
// script (ExprPos turns it into a Pos).
//
// # Dialect decisions (Flink SQL first)
//
//   - Strings are in single quotes; inside one, two quotes in a row stand for
//     one quote, and a backslash is an ordinary character (the TiDB parser
//     runs with NO_BACKSLASH_ESCAPES).
//   - Identifiers are quoted with backticks, as in Flink; double quotes also
//     quote identifiers (ANSI_QUOTES), as in standard SQL and SQLite, since
//     Flink has no double-quoted strings. A quoted name with nothing
//     between its quotes is an error where it is written, as in Flink.
//   - A byte order mark at the start of a script is skipped (columns do
//     not count it). A statement that runs into the next one (its ';'
//     forgotten) fails where the next one starts, with a hint that the ';'
//     is missing.
//   - || concatenates strings (PIPES_AS_CONCAT); it is never OR. The TiDB
//     AST shows it as CONCAT(a, b).
//   - Comments are -- to the end of the line (no space needed after --) and
//     /* ... */. MySQL's # comments and /*! ... */ code are not recognised:
//     # is rejected (MySQL would skip the rest of the line) and /*! ... */
//     is a comment.
//   - Unquoted identifiers keep the case they were written in; matching
//     names without regard to case is the catalog's and planner's choice.
//     Qualified names (db.t) are returned joined by '.'.
//   - CAST targets: MySQL's CAST only knows SIGNED, UNSIGNED, CHAR, BINARY,
//     DATE, TIME, DATETIME, DECIMAL, FLOAT, DOUBLE and JSON. Flink types are
//     rewritten to the nearest of those for the TiDB parser, and the type as
//     written is kept aside: CastTarget returns it. The planner must use
//     CastTarget, not the FuncCastExpr's Tp.
//   - VALUES (1, 2), (3, 4) is standard VALUES; it is handed to the TiDB
//     parser as VALUES ROW(1, 2), ROW(3, 4) and comes back as a SelectStmt of
//     kind SelectStmtKindValues (in INSERT ... VALUES, as Insert.Values).
//   - A table reference of FROM or JOIN (a table, or a parenthesized query
//     such as VALUES) may name its columns after its alias:
//     FROM (VALUES (1, 'a')) AS t(id, name); the list is filed under the
//     *ast.TableSource (AliasColumns), and the planner renames the source's
//     columns, as many as it has.
//   - WITH option values must be string literals, as in Flink; keys may be
//     quoted or written bare (connector = 'kafka'). SET accepts quoted or
//     bare keys and values.
//   - Words MySQL reserves but Flink does not (KEY, INDEX, READ, ...) may be
//     written unquoted as names in queries; they are backquoted for the TiDB
//     parser. Words both reserve (ORDER, RANK, TABLE, ...) must be
//     quoted with backticks, as in Flink; the error says so. In CREATE TABLE
//     column lists any word may name a column (KEY, INDEX, UNIQUE start a
//     constraint only when no type follows them). ROWS and WINDOW (reserved
//     by both) are names wherever they are not keywords, as in Arroyo's
//     queries (count(*) AS rows, TUMBLE(...) AS window, window.start):
//     ROWS is a keyword only where a window frame starts (ROWS BETWEEN,
//     ROWS UNBOUNDED PRECEDING, ROWS 5 PRECEDING, ROWS CURRENT ROW) or
//     after a number, WINDOW only in WINDOW w AS (...).
//   - Statement sets: EXECUTE STATEMENT SET BEGIN ...; ...; END and the older
//     BEGIN STATEMENT SET; ...; END; are both one StatementSet; only INSERT
//     statements may appear inside.
//   - Interval literals: INTERVAL '5' SECONDS (plural, accepted by Flink)
//     is INTERVAL '5' SECOND. ts - INTERVAL '5' SECOND comes back as
//     DATE_SUB(ts, INTERVAL '5' SECOND) (DATE_ADD for +), as the TiDB parser
//     makes it. Where MySQL has no place for an interval (a function
//     argument: TUMBLE(ts, INTERVAL '1' MINUTE)), it becomes the call
//     INTERVAL('1', 'MINUTE'). IntervalOf reads both forms; Interval.Duration
//     gives the length of day-time intervals (DAY TO SECOND etc. included).
//     Postgres intervals, as Arroyo writes them, have the unit inside the
//     string: INTERVAL '20 seconds' is INTERVAL '20' SECOND, and several
//     parts add up in the smallest one ('1 minute 30 seconds' is
//     INTERVAL '90' SECOND); an unreadable string is an error at it.
//     Flink's older group windows (GROUP BY TUMBLE(ts, INTERVAL ...),
//     TUMBLE_START, HOP, SESSION ...) are therefore plain function calls.
//   - Window table functions, FROM TABLE(TUMBLE|HOP|CUMULATE|SESSION(...)),
//     are parsed here (WindowTVF) and stand in the TiDB AST as a placeholder
//     table name; WindowOf returns the call. The placeholder is never a real
//     table, so a planner that forgets WindowOf fails loudly.
//   - FULL [OUTER] JOIN, which MySQL lacks, is an *ast.Join with Tp FullJoin.
//   - a == b (the equality of Arroyo and DataFusion) is a = b.
//   - a IS NOT DISTINCT FROM b is MySQL's a <=> b; a IS DISTINCT FROM b is
//     NOT (a <=> b).
//   - Temporal joins, JOIN t FOR SYSTEM_TIME AS OF o.proc_time [AS] d, come
//     back as TiDB's stale-read form: TableName.AsOf.TsExpr is the time
//     attribute.
//   - Table hints: FROM t /*+ OPTIONS('k'='v') */ gives TableOptions for
//     that table reference; query hints: SELECT /*+ STATE_TTL('t' = '1d') */
//     gives StateTTLHints for that SELECT; other hints are comments.
//   - TRY_CAST is a CAST for which IsTryCast holds.
//   - FLOOR(t TO unit) and CEIL(t TO unit) are the calls FLOOR(t, 'UNIT')
//     and CEIL(t, 'UNIT'); OVERLAY(s PLACING r FROM a [FOR n]) is the call
//     OVERLAY(s, r, a[, n]).
//   - x [NOT] SIMILAR TO p [ESCAPE e] is a LIKE for which IsSimilar holds.
//   - s IS [NOT] JSON [kind] is the call "IS JSON"(s, 'KIND') (IsJSONFunc,
//     under NOT); the clauses of JSON_EXISTS, JSON_VALUE, JSON_QUERY,
//     JSON_OBJECT and JSON_ARRAY become literal string arguments (json.go
//     lists the calls); a clause that does not read is an error at it.
//   - x [NOT] BETWEEN SYMMETRIC a AND b is (x [NOT] BETWEEN a AND b) OR
//     (AND, with NOT) (x [NOT] BETWEEN b AND a); BETWEEN ASYMMETRIC is
//     BETWEEN.
//   - UPDATE t SET col = expr, ... [WHERE cond] and DELETE FROM t [WHERE
//     cond] are Update and Delete (no ORDER BY, LIMIT, alias or FROM);
//     REPLACE INTO and SQLite's INSERT OR REPLACE INTO are an Insert with
//     Replace set. Statements of other dialects (TRUNCATE, MERGE, GRANT,
//     ...) are reported as not supported rather than as syntax errors. SQLite's
//     CREATE [UNIQUE] INDEX, DROP INDEX and REINDEX are Index statements
//     (the session makes them no-ops on in-memory tables). SQLite's CREATE
//     TRIGGER and DROP TRIGGER are refused as not supported: a trigger
//     accepted and never run would change answers silently.
//     CREATE TEMP VIEW is CREATE TEMPORARY VIEW (SQLite). RisingWave's
//     CREATE/DROP MATERIALIZED VIEW is a view: its query runs when it is
//     read, which gives the same rows for the bounded inputs of its suites
//     (EMIT ON WINDOW CLOSE included: see docs/DIALECT.md).
//   - ALTER TABLE takes Flink's forms (alter.go: SET/RESET options,
//     ADD/MODIFY columns, a watermark or a primary key, DROP, RENAME) and
//     MySQL's ADD/DROP COLUMN c; CREATE OR REPLACE TABLE|VIEW sets
//     OrReplace (Flink has it for CREATE TABLE AS only; here it takes a
//     column list as CREATE TABLE does).
//   - RisingWave and PostgreSQL forms: SET name TO value is SET name =
//     value (a one-word name; which names mean something is the session's
//     call); CREATE TABLE ... APPEND ONLY sets CreateTable.AppendOnly;
//     INTERVAL '5 minutes' (numbers each followed by a unit, inside the
//     quotes, in the units of INTERVAL plus min, sec, ms, hr ...) is
//     INTERVAL '5' MINUTE, several parts in the smallest unit written
//     ('1 hour 30 minutes' is INTERVAL '90' MINUTE); year-month and
//     day-time parts cannot be mixed. A query may end with EMIT ON WINDOW
//     CLOSE (emit.go; EmitOnWindowClose reports it); other emit modes are
//     errors.
//   - agg(x) FILTER (WHERE cond) reaches the planner as the call
//     FilterFunc(agg(x), cond); FIRST_VALUE(x) and LAST_VALUE(x) without
//     OVER as calls of FirstValueFunc and LastValueFunc (MySQL has them
//     only as window functions).
//   - SQLite's and PostgreSQL's forms (rewrite_pg.go): white space between a
//     function's name and its '(' (COUNT (*); the TiDB parser's
//     IGNORE_SPACE, so a CTE named like a built-in, WITH max (a) AS ...,
//     is quoted); x IN () with an empty list (a PatternInExpr without
//     items: FALSE, NOT IN: TRUE); x::type as CAST(x AS type), with
//     PostgreSQL's int2/int4/int8/float4/float8/bytea; ORDER BY ... NULLS
//     FIRST | LAST in the ORDER BY of a query (NullsFirst; elsewhere an
//     error).
//   - Not supported yet, each with its own error: LATERAL TABLE, UNNEST, MATCH_RECOGNIZE,
//     composite types other than ROW (ARRAY<...>, MAP<...>, MULTISET<...>), INSERT OVERWRITE,
//     CREATE TABLE ... LIKE/AS. PARTITIONED BY (a, b) is parsed into
//     CreateTable.PartitionKeys; which connectors take it is the catalog's
//     business.
//   - Column types may be ROW<name TYPE [NOT NULL] ['description'], ...>
//     or ROW(...), nested (TypeName.Fields); a field reference r.f comes
//     back as the TiDB parser reads it (table r, column f), and the
//     planner tells fields from columns. ROW(a, b) in an expression is
//     the TiDB parser's RowExpr.
//   - CREATE TABLE also takes the SQLite/sqllogictest forms: PRIMARY KEY as a
//     column constraint, PRIMARY KEY (...) without NOT ENFORCED, NULL, and
//     UNIQUE (recorded in ColumnDef.Unique for the catalog to judge).
//     Computed columns (c AS expr) and metadata columns (c TYPE METADATA
//     [FROM 'k'] [VIRTUAL]) are parsed as in Flink; what a computed column
//     may compute (and PROCTIME()) is the planner's call
//     (planner/computed.go), and the session refuses metadata columns,
//     comments and TEMPORARY tables, which the catalog does not keep.
package sql
