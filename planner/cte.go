package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/sql"
)

// Common table expressions (WITH name [(columns)] AS (query) ...): a name
// of WITH stands, in the query it opens and in the later expressions of
// the same WITH, for its query, bound again where each reference is, as a
// view is; it hides a table of the same name. WITH RECURSIVE is refused;
// an expression cannot read itself (its name there is the catalog's).

// cteScope is the expressions of one WITH clause; while the query of its
// i-th is bound, only the first i are visible.
type cteScope struct {
	ctes    []*ast.CommonTableExpression
	visible int
}

// withCTEs makes the expressions of w visible until the returned function
// is called.
func (b *binder) withCTEs(w *ast.WithClause) (func(), error) {
	if w == nil {
		return func() {}, nil
	}
	if w.IsRecursive {
		return nil, errAt(ErrUnsupported, b.identPos("RECURSIVE"), "", "WITH RECURSIVE is not supported")
	}
	seen := map[string]bool{}
	for _, c := range w.CTEs {
		name := strings.ToLower(c.Name.O)
		if seen[name] {
			pos := b.identPos(c.Name.O)
			if p, ok := sql.FindIdentAfter(b.stmt, c.Name.O, pos.Offset+1); ok {
				pos = p // the second
			}
			return nil, errAt(ErrUnsupported, pos, "", "WITH names '%s' twice", c.Name.O)
		}
		seen[name] = true
	}
	b.ctes = append(b.ctes, &cteScope{ctes: w.CTEs, visible: len(w.CTEs)})
	n := len(b.ctes)
	return func() { b.ctes = b.ctes[:n-1] }, nil
}

// bindCTE binds a reference to the visible common table expression
// called name, if there is one (ok false: none).
func (b *binder) bindCTE(name string) (n Node, ok bool, err error) {
	for level := len(b.ctes) - 1; level >= 0; level-- {
		s := b.ctes[level]
		for i, c := range s.ctes[:s.visible] {
			if !strings.EqualFold(c.Name.O, name) {
				continue
			}
			// Its query sees the scopes around its WITH and the
			// expressions before it, not those of the query reading it.
			saved, vis := b.ctes, s.visible
			b.ctes, s.visible = b.ctes[:level+1], i
			n, err = b.bindQuery(c.Query.Query)
			b.ctes, s.visible = saved, vis
			if err != nil {
				return nil, true, err
			}
			if len(c.ColNameList) > 0 {
				names := make([]string, len(c.ColNameList))
				for i, col := range c.ColNameList {
					names[i] = col.O
				}
				n, err = listedNames(n, c.Name.O, names, b.identPos(c.Name.O), "query")
			}
			return n, true, err
		}
	}
	return nil, false, nil
}

// namedByWith reports whether a WITH around the query being bound names
// name, visible or not.
func (b *binder) namedByWith(name string) bool {
	for _, s := range b.ctes {
		for _, c := range s.ctes {
			if strings.EqualFold(c.Name.O, name) {
				return true
			}
		}
	}
	return false
}
