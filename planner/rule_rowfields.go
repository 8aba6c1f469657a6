package planner

import (
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/types"
)

// Rule: ROW field pruning. A scan's ROW column that the projection above
// it (through filters, and a projection that only passes columns on)
// reads only through field accesses (bid.price, bid.auction) is read as a
// ROW of those fields alone (Scan.RowFields), and the accesses are
// renumbered: the connector then builds only the fields a query reads, as
// projection pushdown does for columns. The fields its computed columns
// read are kept too.

func pruneRowFields(n Node) Node {
	// Scans that read the same fields of a table become one source
	// (physical.go), so each such group is narrowed to the union of what
	// its members read, and not at all when one of them reads a row whole.
	type group struct {
		kept  map[int]map[int]bool
		whole bool
	}
	groups := map[string]*group{}
	matched := map[*Scan]bool{}
	chosen := map[*Project]bool{}
	groupOf := func(s *Scan) *group {
		k := s.Describe()
		if groups[k] == nil {
			groups[k] = &group{kept: map[int]map[int]bool{}}
		}
		return groups[k]
	}
	_ = Inspect(n, func(x Node) error {
		p, ok := x.(*Project)
		if !ok {
			return nil
		}
		m, ok := matchScanProject(p)
		if !ok || matched[m.scan] {
			return nil
		}
		matched[m.scan], chosen[p] = true, true
		g := groupOf(m.scan)
		kept, whole := m.fieldsRead()
		for c, ks := range kept {
			if g.kept[c] == nil {
				g.kept[c] = map[int]bool{}
			}
			for k := range ks {
				g.kept[c][k] = true
			}
		}
		for c := range whole {
			g.kept[c] = map[int]bool{-1: true}
		}
		return nil
	})
	_ = Inspect(n, func(x Node) error {
		if s, ok := x.(*Scan); ok && !matched[s] {
			groupOf(s).whole = true
		}
		return nil
	})
	final := map[string]map[int][]int{}
	for k, g := range groups {
		if g.whole {
			continue
		}
		for c, ks := range g.kept {
			if ks[-1] {
				continue
			}
			var keep []int
			for i := range len(firstScanColumnType(n, k, c).Fields) {
				if ks[i] {
					keep = append(keep, i)
				}
			}
			if len(keep) == len(firstScanColumnType(n, k, c).Fields) {
				continue
			}
			if final[k] == nil {
				final[k] = map[int][]int{}
			}
			final[k][c] = keep
		}
	}
	if len(final) == 0 {
		return n
	}
	return TransformUp(n, func(x Node) Node {
		p, ok := x.(*Project)
		if !ok || !chosen[p] {
			return x
		}
		m, ok := matchScanProject(p)
		if !ok {
			return x
		}
		rf, ok := final[m.scan.Describe()]
		if !ok {
			return x
		}
		return m.narrow(rf)
	})
}

// firstScanColumnType is the type of table column c of the scans whose
// description is key.
func firstScanColumnType(n Node, key string, c int) (t types.T) {
	_ = Inspect(n, func(x Node) error {
		if s, ok := x.(*Scan); ok && s.Describe() == key {
			t = s.Table.Columns[c].Type
		}
		return nil
	})
	return t
}

// scanProject is a projection over [a projection of columns] -> Filter*
// -> Scan, with the projection's expressions over the scan's columns.
type scanProject struct {
	p       *Project
	exprs   []Expr
	filters []*Filter
	scan    *Scan
}

func matchScanProject(p *Project) (scanProject, bool) {
	m := scanProject{p: p, exprs: p.Exprs}
	in := p.Input
	if q, ok := in.(*Project); ok {
		for _, e := range q.Exprs {
			if _, ok := e.(*ColumnRef); !ok {
				return m, false
			}
		}
		m.exprs = make([]Expr, len(p.Exprs))
		for i, e := range p.Exprs {
			m.exprs[i] = mapExpr(e, func(x Expr) Expr {
				if c, ok := x.(*ColumnRef); ok {
					return q.Exprs[c.Index]
				}
				return x
			})
		}
		in = q.Input
	}
	for {
		f, ok := in.(*Filter)
		if !ok {
			break
		}
		m.filters = append(m.filters, f)
		in = f.Input
	}
	s, ok := in.(*Scan)
	if !ok {
		return m, false
	}
	m.scan = s
	c, known := catalog.LookupConnector(s.Table.Connector)
	return m, known && c.ReadsRowFields && len(s.RowFields) == 0
}

// fieldsRead lists, by table column, the fields of the scan's ROW columns
// that the projection, the filters and the scan's computed columns read;
// whole lists the ROW columns read whole somewhere.
func (m scanProject) fieldsRead() (kept map[int]map[int]bool, whole map[int]bool) {
	s := m.scan
	all := append([]Expr(nil), m.exprs...)
	for _, f := range m.filters {
		all = append(all, f.Cond)
	}
	refs, viaField := map[int]int{}, map[int]int{}
	kept, whole = map[int]map[int]bool{}, map[int]bool{}
	note := func(refs, viaField map[int]int, col func(int) int) func(Expr) {
		return func(x Expr) {
			switch x := x.(type) {
			case *ColumnRef:
				refs[col(x.Index)]++
			case *Call:
				if c, i, ok := fieldAccessOf(x); ok {
					viaField[col(c.Index)]++
					if kept[col(c.Index)] == nil {
						kept[col(c.Index)] = map[int]bool{}
					}
					kept[col(c.Index)][i] = true
				}
			}
		}
	}
	for _, e := range all {
		walkExpr(e, note(refs, viaField, func(i int) int { return s.Fields[i] }))
	}
	for _, f := range s.Fields {
		if s.Computed != nil && s.Computed[f] != nil {
			walkExpr(s.Computed[f], note(refs, viaField, func(i int) int { return i }))
		}
	}
	for c, n := range refs {
		if s.Table.Columns[c].Type.Kind != types.Row {
			delete(kept, c)
			continue
		}
		if viaField[c] != n {
			whole[c] = true
			delete(kept, c)
		}
	}
	return kept, whole
}

// narrow rebuilds the matched plan with the scan reading the ROW columns
// of rf (table column -> fields kept) narrowed.
func (m scanProject) narrow(rf map[int][]int) Node {
	ns := *m.scan
	ns.RowFields = rf
	byOut := func(idx int) ([]int, bool) {
		keep, ok := rf[m.scan.Fields[idx]]
		return keep, ok
	}
	var out Node = &ns
	for k := len(m.filters) - 1; k >= 0; k-- {
		out = &Filter{Input: out, Cond: narrowFieldsBy(m.filters[k].Cond, byOut)}
	}
	np := &Project{Input: out, Names: m.p.Names, Exprs: make([]Expr, len(m.exprs))}
	for i, e := range m.exprs {
		np.Exprs[i] = narrowFieldsBy(e, byOut)
	}
	return np
}

// fieldAccessOf returns the column and field position of x when x is a
// field access to a column.
func fieldAccessOf(x *Call) (*ColumnRef, int, bool) {
	if x.Func != functions.FieldAccess || len(x.Args) != 2 {
		return nil, 0, false
	}
	c, ok := x.Args[0].(*ColumnRef)
	l, ok2 := x.Args[1].(*Literal)
	if !ok || !ok2 {
		return nil, 0, false
	}
	i, ok := l.Value.(int64)
	return c, int(i), ok
}

// narrowFieldsBy rewrites the field accesses of e to the columns keep
// narrows (the fields kept, by position in the column's full ROW type).
func narrowFieldsBy(e Expr, keep func(idx int) ([]int, bool)) Expr {
	return mapExpr(e, func(x Expr) Expr {
		c, ok := x.(*Call)
		if !ok {
			return x
		}
		ref, old, ok := fieldAccessOf(c)
		if !ok {
			return x
		}
		k, ok := keep(ref.Index)
		if !ok {
			return x
		}
		i := slices.Index(k, old)
		nref := *ref
		nref.T = narrowType(ref.T, k)
		r, err := functions.ResolveField(nref.T, i)
		if err != nil {
			return x // cannot happen: k lists every field e reads
		}
		return &Call{Func: functions.FieldAccess, Args: []Expr{&nref, &Literal{Value: int64(i), T: c.Args[1].Type()}}, Resolved: r, Pos: c.Pos}
	})
}
