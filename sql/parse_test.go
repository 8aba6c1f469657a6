package sql

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// TestDatadriven runs the files under testdata/. Directives:
//
//	parse            the statements of the input, or the error
//	exprs            every expression with its ExprPos and the original text there
//	tables           every table reference, join, ORDER BY item with NULLS FIRST/LAST and SELECT's STATE_TTL hints
//	fields           the text of every select field, as the TiDB AST holds it
//	complete         Complete(input)
//	find name=N [stmt=K] [after=OFF]
//	                 FindIdent / FindIdentAfter in statement K (default 1)
func TestDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if strings.Contains(path, "/fuzz/") {
			return // the fuzzer's corpus, run by FuzzParse
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "parse":
				stmts, err := Parse(d.Input)
				out := dump(stmts)
				if err != nil {
					out += errString(t, err) + "\n"
				}
				return out
			case "exprs":
				stmts, err := Parse(d.Input)
				if err != nil {
					return errString(t, err) + "\n"
				}
				var b strings.Builder
				for _, s := range stmts {
					for _, e := range exprs(s) {
						p := ExprPos(s, e)
						fmt.Fprintf(&b, "%s @%s %q", restore(e), p, excerpt(d.Input, p.Offset, 16))
						if c, ok := e.(*ast.FuncCastExpr); ok {
							if tn, ok := CastTarget(s, c); ok {
								fmt.Fprintf(&b, " cast-target=%s", dumpType(tn))
							} else {
								b.WriteString(" cast-target=?")
							}
						}
						if IsTryCast(s, asCast(e)) {
							b.WriteString(" try")
						}
						if iv, ok := IntervalOf(s, e); ok {
							d, err := iv.Duration()
							fmt.Fprintf(&b, " interval=%s @%s duration=%v err=%v", iv, iv.Pos, d, err)
						}
						b.WriteString("\n")
					}
				}
				return b.String()
			case "tables":
				stmts, err := Parse(d.Input)
				if err != nil {
					return errString(t, err) + "\n"
				}
				var b strings.Builder
				for _, s := range stmts {
					for _, n := range nodes(s) {
						switch x := n.(type) {
						case *ast.TableName:
							fmt.Fprintf(&b, "table %s", x.Name.O)
							if x.Schema.O != "" {
								fmt.Fprintf(&b, " schema %s", x.Schema.O)
							}
							if x.AsOf != nil {
								fmt.Fprintf(&b, " as-of %s @%s", restore(x.AsOf.TsExpr), ExprPos(s, x.AsOf.TsExpr))
							}
							for _, o := range TableOptions(s, x) {
								fmt.Fprintf(&b, " option '%s'='%s' @%s", o.Key, o.Value, o.Pos)
							}
							if w, ok := WindowOf(s, x); ok {
								fmt.Fprintf(&b, " window %s @%s of %s @%s descriptor %s @%s size=%q slide=%q gap=%q offset=%q partition=%v",
									w.Kind, w.Pos, w.Table, w.TablePos, w.TimeCol, w.TimeColPos, w.Size, w.Slide, w.Gap, w.Offset, w.PartitionBy)
							}
							b.WriteString("\n")
						case *ast.SelectStmt:
							if hs := StateTTLHints(s, x); len(hs) > 0 {
								b.WriteString("select")
								for _, o := range hs {
									fmt.Fprintf(&b, " state-ttl '%s'='%s' @%s", o.Key, o.Value, o.Pos)
								}
								b.WriteString("\n")
							}
						case *ast.ByItem:
							if first, ok := NullsFirst(s, x); ok {
								fmt.Fprintf(&b, "order-by %s desc=%v nulls-first=%v\n", restore(x.Expr), x.Desc, first)
							}
						case *ast.Join:
							if x.Right != nil {
								fmt.Fprintf(&b, "join %s\n", map[ast.JoinType]string{ast.CrossJoin: "inner", ast.LeftJoin: "left", ast.RightJoin: "right", FullJoin: "full"}[x.Tp])
							}
						}
					}
				}
				return b.String()
			case "fields":
				stmts, err := Parse(d.Input)
				if err != nil {
					return errString(t, err) + "\n"
				}
				var b strings.Builder
				for _, s := range stmts {
					for _, n := range nodes(s) {
						if f, ok := n.(*ast.SelectField); ok && f.WildCard == nil {
							fmt.Fprintf(&b, "%q offset %d\n", f.Text(), f.Offset)
						}
					}
				}
				return b.String()
			case "complete":
				return fmt.Sprintln(Complete(d.Input))
			case "find":
				stmts, err := Parse(d.Input)
				if err != nil {
					return errString(t, err) + "\n"
				}
				var name string
				k, after := 1, -1
				d.ScanArgs(t, "name", &name)
				d.MaybeScanArgs(t, "stmt", &k)
				d.MaybeScanArgs(t, "after", &after)
				s := stmts[k-1]
				var p Pos
				var ok bool
				if after >= 0 {
					p, ok = FindIdentAfter(s, name, after)
				} else {
					p, ok = FindIdent(s, name)
				}
				if !ok {
					return "not found\n"
				}
				return fmt.Sprintf("%s offset %d %q\n", p, p.Offset, excerpt(d.Input, p.Offset, len(name)+2))
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

// errString checks err is an *Error and formats it.
func errString(t *testing.T, err error) string {
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is a %T, not an *Error", err, err)
	}
	return "error: " + e.Error()
}

// excerpt is up to n bytes of s from off.
func excerpt(s string, off, n int) string {
	if off > len(s) {
		return ""
	}
	s = s[off:]
	if len(s) > n {
		s = s[:n]
	}
	return s
}

func asCast(e ast.ExprNode) *ast.FuncCastExpr {
	c, _ := e.(*ast.FuncCastExpr)
	return c
}
