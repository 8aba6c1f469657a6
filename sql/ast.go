package sql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Pos is a place in the original text: 1-based line and column (in
// characters, tabs count one), and the 0-based byte offset.
type Pos struct {
	Line, Col int
	Offset    int
}

// Statement is one parsed statement.
type Statement interface {
	// Pos is where the statement starts.
	Pos() Pos
	// Text is the statement's original text, without the trailing ';'.
	Text() string
}

// Span is embedded in every statement; it carries its position and text.
type Span struct {
	Start Pos
	Src   string

	// meta holds what the parser learnt about the statement beyond the AST
	// (CAST target types); statements nested in a statement set or EXPLAIN
	// share their parent's.
	meta *stmtMeta
}

func (s Span) Pos() Pos     { return s.Start }
func (s Span) Text() string { return s.Src }

// TypeName is a column type as written: Name upper-cased without arguments
// ("VARCHAR", "DECIMAL", "TIMESTAMP", "STRING"), and its arguments.
// Multi-word types keep their words, one space apart ("DOUBLE PRECISION",
// "TIMESTAMP WITH LOCAL TIME ZONE" for TIMESTAMP(3) WITH LOCAL TIME ZONE,
// "BIGINT UNSIGNED"). Pos is where the type starts. A ROW<...> or ROW(...)
// has Name "ROW" and its Fields.
type TypeName struct {
	Name   string
	Args   []int
	Pos    Pos
	Fields []FieldDef
}

// FieldDef is one field of a ROW type: name TYPE [NOT NULL] ['description'].
type FieldDef struct {
	Name        string
	Type        TypeName
	NotNull     bool
	Description string
	Pos         Pos
}

// ColumnDef is one column of CREATE TABLE.
type ColumnDef struct {
	Name    string
	Type    TypeName
	NotNull bool
	Pos     Pos
	// Expr is set for a computed column, "name AS expr" (Flink); Type is
	// then empty and ExprText is the expression's original text.
	Expr     ast.ExprNode
	ExprText string
	// Metadata is set for a metadata column, "name TYPE METADATA [FROM
	// 'key'] [VIRTUAL]": the key (the column name when FROM is absent).
	Metadata string
	Virtual  bool
	// Comment is the COMMENT 'text' of the column, if any.
	Comment string
	// Unique is set for the SQLite-style column constraint UNIQUE (written
	// by sqllogictest scripts); whether to accept it is the catalog's call.
	Unique bool
}

// Watermark is WATERMARK FOR <Column> AS <Expr>.
type Watermark struct {
	Column string
	Expr   ast.ExprNode
	// ExprText is the expression's original text.
	ExprText string
	Pos      Pos
}

// Option is one 'key' = 'value' pair of a WITH clause or SET.
type Option struct {
	Key, Value string
	Pos        Pos // of the key
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] t (cols, [WATERMARK], [PRIMARY
// KEY (..) NOT ENFORCED]) [APPEND ONLY] [WITH (...)].
type CreateTable struct {
	Span
	Name        string
	NamePos     Pos
	IfNotExists bool
	// Temporary is set for CREATE TEMPORARY TABLE.
	Temporary  bool
	Columns    []ColumnDef
	Watermark  *Watermark
	PrimaryKey []string
	// PartitionKeys are the columns of PARTITIONED BY (a, b), if any.
	PartitionKeys []string
	PartitionPos  Pos
	Options       []Option
	// Comment is the table's COMMENT 'text', if any.
	Comment string
	// AppendOnly is set by RisingWave's APPEND ONLY after the column list:
	// the table takes inserts only.
	AppendOnly bool
	// OrReplace is set by CREATE OR REPLACE TABLE: an existing table of
	// that name is replaced.
	OrReplace bool
}

// CreateView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] v [(cols)] AS query.
type CreateView struct {
	Span
	Name        string
	NamePos     Pos
	IfNotExists bool
	Temporary   bool
	Columns     []string
	Query       ast.ResultSetNode
	// QueryText is the original text of the query after AS.
	QueryText string
	// OrReplace is set by CREATE OR REPLACE VIEW: an existing view of that
	// name is replaced.
	OrReplace bool
}

// DropKind says what a DROP statement drops.
type DropKind int

const (
	DropTable DropKind = iota
	DropView
	DropFunction
)

// Drop is DROP [TEMPORARY] TABLE|VIEW|FUNCTION [IF EXISTS] name.
type Drop struct {
	Span
	Kind DropKind
	// Temporary is set for DROP TEMPORARY ...: a function must then be a
	// temporary one (tables and views take it as written without it).
	Temporary bool
	Name      string
	NamePos   Pos
	IfExists  bool
}

// IndexKind says which index statement an Index is.
type IndexKind int

const (
	CreateIndex IndexKind = iota
	DropIndex
	Reindex
)

// Index is one of SQLite's index statements, which tables here accept as
// no-ops (they have no indexes; the session says so):
//
//	CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON table (column [ASC|DESC], ...)
//	DROP INDEX [IF EXISTS] name
//	REINDEX [name]
//
// Table is set for CREATE INDEX only; Name is empty for a bare REINDEX.
type Index struct {
	Span
	Kind        IndexKind
	Name        string
	NamePos     Pos
	Table       string
	TablePos    Pos
	Unique      bool
	IfNotExists bool
	IfExists    bool
}

// Insert is INSERT INTO t [(cols)] SELECT ... | VALUES (...), (...).
// Exactly one of Query and Values is set. Replace is set for REPLACE INTO
// and INSERT OR REPLACE INTO (SQLite's spellings of an upsert).
type Insert struct {
	Span
	Table    string
	TablePos Pos
	Columns  []string
	Query    ast.ResultSetNode
	Values   [][]ast.ExprNode
	Replace  bool
}

// StatementSet is EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END:
// one job writing several sinks.
type StatementSet struct {
	Span
	Inserts []*Insert
}

// Select is a query statement (SELECT, a set operation, VALUES ...).
type Select struct {
	Span
	Query ast.ResultSetNode
}

// Set is SET 'k' = 'v'; with an empty Key it is the bare SET that lists
// every option.
type Set struct {
	Span
	Key, Value string
}

// Reset is RESET 'k'; with an empty Key it resets every option.
type Reset struct {
	Span
	Key string
}

// ShowKind says what a SHOW statement lists.
type ShowKind int

const (
	ShowTables ShowKind = iota
	ShowViews
	ShowJobs
	ShowCreateTable     // SHOW CREATE TABLE name
	ShowCreateView      // SHOW CREATE VIEW name
	ShowColumns         // SHOW COLUMNS FROM|IN name
	ShowFunctions       // SHOW [USER] FUNCTIONS
	ShowCatalogs        // SHOW CATALOGS
	ShowDatabases       // SHOW DATABASES
	ShowCurrentCatalog  // SHOW CURRENT CATALOG
	ShowCurrentDatabase // SHOW CURRENT DATABASE
)

// Show is SHOW TABLES | VIEWS | JOBS | CREATE TABLE t | CREATE VIEW v |
// COLUMNS FROM t | FUNCTIONS | CATALOGS | DATABASES | CURRENT CATALOG |
// CURRENT DATABASE (see show.go).
type Show struct {
	Span
	Kind ShowKind
	// Name is the table or view of SHOW CREATE and SHOW COLUMNS, as
	// written (a qualified name keeps its parts joined by '.'), and
	// NamePos where it starts.
	Name    string
	NamePos Pos
	// User is set for SHOW USER FUNCTIONS: the user's functions only.
	User bool
	// Like is the pattern of [NOT] LIKE | ILIKE 'pattern' (SHOW TABLES,
	// FUNCTIONS, COLUMNS, CATALOGS, DATABASES), nil without one.
	Like *LikePattern
}

// StopJob is STOP JOB 'id' [WITH SAVEPOINT [FORMAT CANONICAL | NATIVE]].
type StopJob struct {
	Span
	ID            string
	WithSavepoint bool
	// Format is the savepoint's format as written, CANONICAL or NATIVE in
	// upper case; "" when not given (the default, CANONICAL).
	Format string
}

// Describe is DESCRIBE t (also DESC t).
type Describe struct {
	Span
	Name    string
	NamePos Pos
}

// Explain is EXPLAIN <statement>; Stmt is a *Select, *Insert or *StatementSet.
type Explain struct {
	Span
	Stmt Statement
}

// Assignment is one column = expr of UPDATE ... SET.
type Assignment struct {
	Column string
	Pos    Pos // of the column name
	Expr   ast.ExprNode
}

// Update is UPDATE t SET col = expr, ... [WHERE cond]. A column assigned
// more than once takes its rightmost value (as SQLite does).
type Update struct {
	Span
	Table    string
	TablePos Pos
	Set      []Assignment
	Where    ast.ExprNode // nil: every row
}

// Delete is DELETE FROM t [WHERE cond].
type Delete struct {
	Span
	Table    string
	TablePos Pos
	Where    ast.ExprNode // nil: every row
}
