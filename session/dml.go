package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// change runs an UPDATE or DELETE of a table created without WITH: the
// planner's query over the table (planner.Change) gives the rows WHERE
// keeps and, for UPDATE, their new values; they are committed to the table
// as one change (-U for each old row then +U for each new one, or -D), which every later read sees. The
// result counts the rows changed, as psql reports it ("UPDATE 2").
func (s *Session) change(ctx context.Context, st sql.Statement) (*Result, error) {
	p, err := s.planner(st)
	if err != nil {
		return nil, err
	}
	p.Ctx = ctx
	sink, t, err := p.Change(st)
	if err != nil {
		return nil, err
	}
	g, err := p.Physical([]*planner.Sink{sink})
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	if !g.Bounded {
		return nil, &sql.Error{Pos: st.Pos(), Msg: "the WHERE clause reads unbounded input and never ends",
			Hint: "UPDATE and DELETE read bounded tables only"}
	}
	res := NewTable()
	if err := s.run(ctx, g, res.Apply); err != nil {
		return nil, err
	}
	matched := res.Rows()
	phys, _ := t.Physical()
	n := len(phys)
	verb := "DELETE"
	var removed, added [][]types.Value
	if _, ok := st.(*sql.Update); ok {
		verb = "UPDATE"
		if err := distinctKeys(t, matched, n); err != nil {
			return nil, sql.Errorf(st.Pos(), "%v", err)
		}
		for _, r := range matched {
			removed, added = append(removed, r[:n]), append(added, r[n:])
		}
	} else {
		removed = matched
	}
	c, ok := catalog.LookupConnector(t.Connector)
	if !ok || c.Change == nil {
		return nil, sql.Errorf(st.Pos(), "table '%s' (connector '%s') cannot be changed", t.Name, t.Connector)
	}
	if err := c.Change(s.path(), t, removed, added); err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	return &Result{Message: fmt.Sprintf("%s %d", verb, len(matched)), RowsChanged: int64(len(matched))}, nil
}

// distinctKeys checks that the new rows of an UPDATE (the values from
// column n of each row) do not give two rows one primary key (of a table
// that upserts: one with a key and no watermark).
func distinctKeys(t *catalog.Table, rows [][]types.Value, n int) error {
	if len(t.PrimaryKey) == 0 || t.WatermarkColumn != "" {
		return nil // rows are a multiset, or the versions of their key
	}
	phys, _ := t.Physical()
	var key []int
	for _, k := range t.PrimaryKey {
		key = append(key, n+phys.Index(k))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		vals := make([]types.Value, len(key))
		for i, k := range key {
			vals[i] = r[k]
		}
		k := rowKey(vals)
		if seen[k] {
			var parts []string
			for i, c := range t.PrimaryKey {
				parts = append(parts, fmt.Sprintf("%s = %s", c, types.Format(phys[phys.Index(c)].Type, vals[i])))
			}
			return fmt.Errorf("UPDATE gives two rows of table '%s' the primary key (%s)", t.Name, strings.Join(parts, ", "))
		}
		seen[k] = true
	}
	return nil
}

// checkReplace refuses REPLACE INTO (INSERT OR REPLACE) of a table that is
// not one created without WITH.
func (s *Session) checkReplace(ins *sql.Insert) error {
	p, err := s.planner(ins)
	if err != nil {
		return err
	}
	return p.CheckReplace(ins)
}
