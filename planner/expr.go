package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/udf"
)

// Expr is a bound, typed scalar expression over the columns of its input.
// Exprs are immutable once built.
type Expr interface {
	Type() types.T
	String() string
}

// ColumnRef reads column Index of the input row.
type ColumnRef struct {
	Index int
	Name  string
	T     types.T
}

// Literal is a constant.
type Literal struct {
	Value types.Value
	T     types.T
}

// Call applies a function or operator resolved by package functions. The
// arguments already have the types the function asked for (implicit casts
// are explicit Cast nodes).
//
// CASE, IF, COALESCE, AND and OR are Calls too; the executor evaluates their
// arguments lazily, row subset by row subset, so that a guarded branch
// (CASE WHEN b <> 0 THEN a / b END) never fails on the rows it does not take.
type Call struct {
	Func     string
	Args     []Expr
	Resolved functions.Resolved
	// Pos is where the call is written in the statement, for errors found
	// after binding; zero for calls made by rules or read from a view.
	Pos sql.Pos
	// UDF is set for a call of a user function: its module, which each
	// subtask calls through an instance of its own; Resolved has no
	// Kernel then (the call is never folded at planning).
	UDF *udf.Module
}

// Cast converts its argument to T. Implicit widenings are Casts too.
type Cast struct {
	Arg    Expr
	T      types.T
	Try    bool // TRY_CAST: NULL instead of an error
	Kernel functions.Kernel
}

func (c *ColumnRef) Type() types.T { return c.T }
func (l *Literal) Type() types.T   { return l.T }
func (c *Call) Type() types.T      { return c.Resolved.Ret }
func (c *Cast) Type() types.T      { return c.T }

func (c *ColumnRef) String() string { return fmt.Sprintf("$%d:%s", c.Index, c.Name) }

func (l *Literal) String() string {
	if l.Value == nil {
		return "NULL"
	}
	s := types.Format(l.T, l.Value)
	if l.T.Kind == types.String {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

func (c *Call) String() string {
	var sb strings.Builder
	writeExpr(&sb, c)
	return sb.String()
}

func (c *Cast) String() string {
	var sb strings.Builder
	writeExpr(&sb, c)
	return sb.String()
}

// writeExpr prints e into sb, in time linear in the size of e (a String
// made of the children's Strings would copy a deep chain's text once per
// level).
func writeExpr(sb *strings.Builder, e Expr) {
	switch x := e.(type) {
	case *Call:
		if name, ok := fieldName(x); ok {
			writeExpr(sb, x.Args[0])
			sb.WriteByte('.')
			sb.WriteString(name)
			return
		}
		if isInfix(x.Func) && len(x.Args) == 2 {
			sb.WriteByte('(')
			writeExpr(sb, x.Args[0])
			sb.WriteByte(' ')
			sb.WriteString(x.Func)
			sb.WriteByte(' ')
			writeExpr(sb, x.Args[1])
			sb.WriteByte(')')
			return
		}
		sb.WriteString(x.Func)
		sb.WriteByte('(')
		for i, a := range x.Args {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeExpr(sb, a)
		}
		sb.WriteByte(')')
	case *Cast:
		if x.Try {
			sb.WriteString("TRY_CAST(")
		} else {
			sb.WriteString("CAST(")
		}
		writeExpr(sb, x.Arg)
		sb.WriteString(" AS ")
		sb.WriteString(x.T.String())
		sb.WriteByte(')')
	default:
		sb.WriteString(e.String())
	}
}

func isInfix(name string) bool {
	switch name {
	case "+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "||", "LIKE", "NOT LIKE",
		"IS DISTINCT FROM", "IS NOT DISTINCT FROM":
		return true
	}
	return false
}

// walkExpr calls fn on e and its descendants, parents first.
func walkExpr(e Expr, fn func(Expr)) {
	fn(e)
	switch e := e.(type) {
	case *Call:
		for _, a := range e.Args {
			walkExpr(a, fn)
		}
	case *Cast:
		walkExpr(e.Arg, fn)
	}
}

// mapExpr rebuilds e bottom-up, replacing each node by fn's result.
func mapExpr(e Expr, fn func(Expr) Expr) Expr {
	switch x := e.(type) {
	case *Call:
		args := make([]Expr, len(x.Args))
		for i, a := range x.Args {
			args[i] = mapExpr(a, fn)
		}
		c := *x
		c.Args = args
		return fn(&c)
	case *Cast:
		c := *x
		c.Arg = mapExpr(x.Arg, fn)
		return fn(&c)
	}
	return fn(e)
}

// columnsUsed returns the set of input columns e reads.
func columnsUsed(e Expr, into map[int]bool) {
	walkExpr(e, func(x Expr) {
		if c, ok := x.(*ColumnRef); ok {
			into[c.Index] = true
		}
	})
}

// remapColumns rewrites column indexes through m (old index -> new index).
func remapColumns(e Expr, m map[int]int) Expr {
	return mapExpr(e, func(x Expr) Expr {
		if c, ok := x.(*ColumnRef); ok {
			n := *c
			n.Index = m[c.Index]
			return &n
		}
		return x
	})
}

// isConst reports whether e reads no column.
func isConst(e Expr) bool {
	c := true
	walkExpr(e, func(x Expr) {
		if _, ok := x.(*ColumnRef); ok {
			c = false
		}
		if call, ok := x.(*Call); ok && nonDeterministic(call.Func) {
			c = false
		}
	})
	return c
}

// nonDeterministic reports whether a call to name may give different
// results for the same arguments (the statement time, random numbers), so
// it is neither folded at plan time nor moved by rewrites.
func nonDeterministic(name string) bool {
	if f, ok := functions.Lookup(name); ok && f.Volatile {
		return true
	}
	switch name {
	case "RAND", "RANDOM", "UUID", "PROCTIME":
		return true
	}
	return false
}
