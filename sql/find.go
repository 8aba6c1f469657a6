package sql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// FindIdent returns the position, in the original script, of the first
// occurrence of the identifier name in stmt's text: compared without case,
// as a whole token, outside strings and comments; a quoted identifier
// (`name` or "name") counts. A dotted name ("t.a") matches the same tokens
// separated by '.'. The planner uses it to point at unknown names.
func FindIdent(stmt Statement, name string) (Pos, bool) {
	return FindIdentAfter(stmt, name, stmt.Pos().Offset)
}

// FindIdentAfter is FindIdent starting at byte offset offset of the script
// (occurrences that start before it are skipped).
func FindIdentAfter(stmt Statement, name string, offset int) (Pos, bool) {
	if name == "" {
		return Pos{}, false
	}
	sp := Span{Start: stmt.Pos(), Src: stmt.Text(), meta: metaOf(stmt)}
	parts := strings.Split(name, ".")
	toks := lex(sp.Src).toks
	rel := offset - sp.Start.Offset
	for i, t := range toks {
		if t.off < rel || !t.isName() || !strings.EqualFold(t.val, parts[0]) {
			continue
		}
		if matchDotted(toks[i:], parts) {
			return spanPos(sp, sp.Start.Offset+t.off), true
		}
	}
	return Pos{}, false
}

func matchDotted(toks []token, parts []string) bool {
	if len(toks) < 2*len(parts)-1 {
		return false
	}
	for k, part := range parts {
		if k > 0 && !toks[2*k-1].isPunct(".") {
			return false
		}
		t := toks[2*k]
		if !t.isName() || !strings.EqualFold(t.val, part) {
			return false
		}
	}
	return true
}

// ExprPos returns the position of expression e of stmt in the original
// script. Expressions parsed by this package carry, as their
// OriginTextPosition, the byte offset in the script of their first token;
// for other nodes (built later, say) it falls back to the first occurrence
// of a column's name, else the statement's start.
func ExprPos(stmt Statement, e ast.ExprNode) Pos {
	sp := Span{Start: stmt.Pos(), Src: stmt.Text(), meta: metaOf(stmt)}
	if e == nil {
		return sp.Start
	}
	off := e.OriginTextPosition()
	if off > sp.Start.Offset && off < sp.Start.Offset+len(sp.Src) {
		return spanPos(sp, off)
	}
	if c, ok := e.(*ast.ColumnNameExpr); ok && c.Name != nil {
		if p, ok := FindIdent(stmt, c.Name.Name.O); ok {
			return p
		}
	}
	return sp.Start
}

// CastTarget returns the type written in a CAST of stmt (CAST(x AS
// BIGINT) gives BIGINT). The TiDB parser only knows MySQL's CAST types, so
// the type in e.Tp is a stand-in (SIGNED for every integer type and
// BOOLEAN, CHAR for VARCHAR and STRING, DATETIME for TIMESTAMP, BINARY for
// BYTES); the planner must take the target type from here. stmt may be the
// statement holding e or a statement set or EXPLAIN around it.
func CastTarget(stmt Statement, e *ast.FuncCastExpr) (TypeName, bool) {
	m := metaOf(stmt)
	if m == nil {
		return TypeName{}, false
	}
	t, ok := m.casts[e]
	return t, ok
}

// IsTryCast reports whether CAST e of stmt was written TRY_CAST (Flink: NULL
// instead of an error when the value does not convert). The TiDB AST shows
// it as a CAST.
func IsTryCast(stmt Statement, e *ast.FuncCastExpr) bool {
	m := metaOf(stmt)
	return m != nil && m.tryCasts[e]
}

// IsSimilar reports whether LIKE e of stmt was written SIMILAR TO (a SQL
// regular expression); the TiDB AST shows it as a LIKE.
func IsSimilar(stmt Statement, e *ast.PatternLikeOrIlikeExpr) bool {
	m := metaOf(stmt)
	return m != nil && m.similars[e]
}

// TableOptions returns the options of a Flink table hint on table tn of
// stmt: FROM t /*+ OPTIONS('scan.startup.mode'='earliest-offset') */. They
// override the table's WITH options for this query. Other hints are
// ignored.
func TableOptions(stmt Statement, tn *ast.TableName) []Option {
	m := metaOf(stmt)
	if m == nil || m.tables[tn] == nil {
		return nil
	}
	return m.tables[tn].options
}

// StateTTLHints returns the entries of the STATE_TTL hints of SELECT sel
// of stmt: SELECT /*+ STATE_TTL('orders' = '1d', 'o' = '12h') */ ...; each
// Option's Key names an input of the query block (a table, view or alias)
// and its Value is the TTL as written, its Pos that of the key. Nil when
// sel has none.
func StateTTLHints(stmt Statement, sel *ast.SelectStmt) []Option {
	m := metaOf(stmt)
	if m == nil || len(m.stateTTLAt) == 0 || sel.Fields == nil || len(sel.Fields.Fields) == 0 {
		return nil
	}
	return m.stateTTLAt[sel.Fields.Fields[0].Offset]
}
