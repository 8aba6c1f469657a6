package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// dump renders statements for the datadriven tests: one block per
// statement, its kind, position and fields; AST nodes are shown restored
// by the TiDB formatter.
func dump(stmts []Statement) string {
	var b strings.Builder
	for _, s := range stmts {
		dumpStmt(&b, s, "")
	}
	return b.String()
}

func restore(n ast.Node) string {
	if n == nil {
		return "<nil>"
	}
	var sb strings.Builder
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase | format.RestoreNameBackQuotes
	if err := n.Restore(format.NewRestoreCtx(flags, &sb)); err != nil {
		return "<restore error: " + err.Error() + ">"
	}
	return sb.String()
}

func dumpType(t TypeName) string {
	s := t.Name
	if len(t.Args) > 0 {
		var a []string
		for _, x := range t.Args {
			a = append(a, fmt.Sprint(x))
		}
		s += "(" + strings.Join(a, ",") + ")"
	}
	return s
}

func dumpStmt(b *strings.Builder, s Statement, ind string) {
	w := func(format string, args ...any) {
		fmt.Fprintf(b, ind+format+"\n", args...)
	}
	switch x := s.(type) {
	case *CreateTable:
		w("create-table %s @%s name@%s if-not-exists=%v temporary=%v", x.Name, x.Pos(), x.NamePos, x.IfNotExists, x.Temporary)
		for _, c := range x.Columns {
			extra := ""
			if c.NotNull {
				extra += " NOT NULL"
			}
			if c.Metadata != "" {
				extra += fmt.Sprintf(" METADATA FROM '%s' virtual=%v", c.Metadata, c.Virtual)
			}
			if c.Unique {
				extra += " UNIQUE"
			}
			if c.Comment != "" {
				extra += fmt.Sprintf(" COMMENT '%s'", c.Comment)
			}
			if c.Expr != nil {
				w("  column %s @%s AS %s [%s]%s", c.Name, c.Pos, restore(c.Expr), c.ExprText, extra)
			} else {
				w("  column %s @%s %s @%s%s", c.Name, c.Pos, dumpType(c.Type), c.Type.Pos, extra)
			}
		}
		if x.Watermark != nil {
			w("  watermark for %s @%s: %s [%s]", x.Watermark.Column, x.Watermark.Pos, restore(x.Watermark.Expr), x.Watermark.ExprText)
		}
		if x.PrimaryKey != nil {
			w("  primary key %s", strings.Join(x.PrimaryKey, ", "))
		}
		if x.Comment != "" {
			w("  comment '%s'", x.Comment)
		}
		if x.AppendOnly {
			w("  append only")
		}
		for _, o := range x.Options {
			w("  option '%s' = '%s' @%s", o.Key, o.Value, o.Pos)
		}
		if x.OrReplace {
			w("  or replace")
		}
	case *CreateView:
		w("create-view %s @%s name@%s if-not-exists=%v temporary=%v columns=%v", x.Name, x.Pos(), x.NamePos, x.IfNotExists, x.Temporary, x.Columns)
		if x.OrReplace {
			w("  or replace")
		}
		w("  query: %s", restore(x.Query))
		w("  text: %s", x.QueryText)
		if pos, ok := EmitOnWindowClose(x); ok {
			w("  emit on window close @%s", pos)
		}
	case *AlterTable:
		dumpAlter(w, x)
	case *Drop:
		kind := map[DropKind]string{DropTable: "table", DropView: "view", DropFunction: "function"}[x.Kind]
		temp := ""
		if x.Temporary {
			temp = " temporary"
		}
		w("drop-%s %s @%s name@%s if-exists=%v%s", kind, x.Name, x.Pos(), x.NamePos, x.IfExists, temp)
	case *CreateFunction:
		w("create-function %s @%s name@%s if-not-exists=%v temporary=%v path=%q@%s", x.Name, x.Pos(), x.NamePos, x.IfNotExists, x.Temporary, x.Path, x.PathPos)
		for _, o := range x.Options {
			w("  option %q=%q @%s", o.Key, o.Value, o.Pos)
		}
	case *DescribeFunction:
		w("describe-function %s @%s name@%s", x.Name, x.Pos(), x.NamePos)
	case *Index:
		kind := map[IndexKind]string{CreateIndex: "create-index", DropIndex: "drop-index", Reindex: "reindex"}[x.Kind]
		w("%s %q @%s name@%s table=%q table@%s unique=%v if-not-exists=%v if-exists=%v", kind, x.Name, x.Pos(), x.NamePos, x.Table, x.TablePos, x.Unique, x.IfNotExists, x.IfExists)
	case *Insert:
		if x.Replace {
			w("replace %s @%s table@%s columns=%v", x.Table, x.Pos(), x.TablePos, x.Columns)
		} else {
			w("insert %s @%s table@%s columns=%v", x.Table, x.Pos(), x.TablePos, x.Columns)
		}
		if x.Query != nil {
			w("  query: %s", restore(x.Query))
		}
		for _, row := range x.Values {
			var r []string
			for _, e := range row {
				r = append(r, restore(e))
			}
			w("  values: (%s)", strings.Join(r, ", "))
		}
	case *Update:
		w("update %s @%s table@%s", x.Table, x.Pos(), x.TablePos)
		for _, a := range x.Set {
			w("  set %s@%s = %s @%s", a.Column, a.Pos, restore(a.Expr), ExprPos(x, a.Expr))
		}
		if x.Where != nil {
			w("  where: %s @%s", restore(x.Where), ExprPos(x, x.Where))
		}
	case *Delete:
		w("delete %s @%s table@%s", x.Table, x.Pos(), x.TablePos)
		if x.Where != nil {
			w("  where: %s @%s", restore(x.Where), ExprPos(x, x.Where))
		}
	case *StatementSet:
		w("statement-set @%s", x.Pos())
		for _, ins := range x.Inserts {
			dumpStmt(b, ins, ind+"  ")
		}
	case *Select:
		w("select @%s: %s", x.Pos(), restore(x.Query))
		if pos, ok := EmitOnWindowClose(x); ok {
			w("  emit on window close @%s", pos)
		}
	case *Set:
		w("set @%s key=%q value=%q", x.Pos(), x.Key, x.Value)
	case *Reset:
		w("reset @%s key=%q", x.Pos(), x.Key)
	case *Show:
		kind := map[ShowKind]string{ShowTables: "tables", ShowViews: "views", ShowJobs: "jobs",
			ShowCreateTable: "create-table", ShowCreateView: "create-view", ShowColumns: "columns",
			ShowFunctions: "functions", ShowCatalogs: "catalogs", ShowDatabases: "databases",
			ShowCurrentCatalog: "current-catalog", ShowCurrentDatabase: "current-database"}[x.Kind]
		extra := ""
		if x.User {
			extra += " user"
		}
		if x.Name != "" {
			extra += fmt.Sprintf(" name=%q@%s", x.Name, x.NamePos)
		}
		if l := x.Like; l != nil {
			extra += fmt.Sprintf(" like=%q not=%v fold=%v", l.Pattern, l.Not, l.Fold)
		}
		w("show %s @%s%s", kind, x.Pos(), extra)
	case *Use:
		w("use @%s catalog=%v name=%q@%s", x.Pos(), x.Catalog, x.Name, x.NamePos)
	case *DescribeJob:
		w("describe-job %q @%s", x.ID, x.Pos())
	case *StopJob:
		w("stop-job %q @%s savepoint=%v%s", x.ID, x.Pos(), x.WithSavepoint, formatSuffix(x.Format))
	case *Describe:
		w("describe %s @%s name@%s", x.Name, x.Pos(), x.NamePos)
	case *Explain:
		w("explain @%s", x.Pos())
		dumpStmt(b, x.Stmt, ind+"  ")
	default:
		w("unknown statement type %T", s)
	}
}

// exprs lists the expressions of a statement in the order they are visited.
func exprs(s Statement) []ast.ExprNode {
	var out []ast.ExprNode
	for _, n := range nodes(s) {
		if e, ok := n.(ast.ExprNode); ok {
			out = append(out, e)
		}
	}
	return out
}

// nodes lists the AST nodes of a statement in the order they are visited.
func nodes(s Statement) []ast.Node {
	var out []ast.Node
	c := &collector{f: func(n ast.Node) { out = append(out, n) }}
	visit := func(n ast.Node) {
		if n != nil {
			n.Accept(c)
		}
	}
	var walk func(s Statement)
	walk = func(s Statement) {
		switch x := s.(type) {
		case *CreateTable:
			for _, col := range x.Columns {
				if col.Expr != nil {
					visit(col.Expr)
				}
			}
			if x.Watermark != nil {
				visit(x.Watermark.Expr)
			}
		case *CreateView:
			visit(x.Query)
		case *Insert:
			if x.Query != nil {
				visit(x.Query)
			}
			for _, row := range x.Values {
				for _, e := range row {
					visit(e)
				}
			}
		case *StatementSet:
			for _, ins := range x.Inserts {
				walk(ins)
			}
		case *Update:
			for _, a := range x.Set {
				visit(a.Expr)
			}
			if x.Where != nil {
				visit(x.Where)
			}
		case *Delete:
			if x.Where != nil {
				visit(x.Where)
			}
		case *Select:
			visit(x.Query)
		case *Explain:
			walk(x.Stmt)
		}
	}
	walk(s)
	return out
}

type collector struct{ f func(ast.Node) }

func (c *collector) Enter(n ast.Node) (ast.Node, bool) { c.f(n); return n, false }
func (c *collector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func dumpAlter(w func(string, ...any), x *AlterTable) {
	kind := map[AlterKind]string{AlterSet: "set", AlterReset: "reset", AlterAdd: "add", AlterModify: "modify",
		AlterDrop: "drop", AlterRenameColumn: "rename-column", AlterRenameTable: "rename-table"}[x.Kind]
	w("alter-table %s @%s name@%s if-exists=%v %s", x.Name, x.Pos(), x.NamePos, x.IfExists, kind)
	for _, o := range x.Options {
		w("  option '%s' = '%s' @%s", o.Key, o.Value, o.Pos)
	}
	for _, k := range x.Keys {
		w("  key '%s' @%s", k.Name, k.Pos)
	}
	for _, it := range x.Items {
		place := ""
		switch {
		case it.First:
			place = " FIRST"
		case it.After != "":
			place = fmt.Sprintf(" AFTER %s @%s", it.After, it.AfterPos)
		}
		switch {
		case it.Column != nil:
			c := it.Column
			if c.Expr != nil {
				w("  column %s @%s AS %s [%s]%s", c.Name, c.Pos, restore(c.Expr), c.ExprText, place)
			} else {
				nn := ""
				if c.NotNull {
					nn = " NOT NULL"
				}
				w("  column %s @%s %s @%s%s%s", c.Name, c.Pos, dumpType(c.Type), c.Type.Pos, nn, place)
			}
		case it.Watermark != nil:
			w("  watermark for %s @%s: %s [%s]", it.Watermark.Column, it.Watermark.Pos, restore(it.Watermark.Expr), it.Watermark.ExprText)
		default:
			w("  primary key %s @%s", strings.Join(it.PrimaryKey, ", "), it.Pos)
		}
	}
	for _, c := range x.Columns {
		w("  column %s @%s", c.Name, c.Pos)
	}
	if x.DropPrimaryKey {
		w("  primary key")
	}
	if x.DropWatermark {
		w("  watermark")
	}
	if x.From.Name != "" {
		w("  from %s @%s", x.From.Name, x.From.Pos)
	}
	if x.To.Name != "" {
		w("  to %s @%s", x.To.Name, x.To.Pos)
	}
}

// formatSuffix is " format=F" for a STOP JOB that names its savepoint's format.
func formatSuffix(f string) string {
	if f == "" {
		return ""
	}
	return " format=" + f
}
