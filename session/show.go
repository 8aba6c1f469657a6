package session

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// The session has one catalog holding one database, named as Flink names
// its defaults: SHOW CATALOGS, SHOW DATABASES and USE know only these.
const (
	DefaultCatalog  = "default_catalog"
	DefaultDatabase = "default_database"
)

// showCatalog answers the SHOW statements of Flink's SQL client beyond
// TABLES, VIEWS and JOBS.
func (s *Session) showCatalog(st *sql.Show) (*Result, error) {
	switch st.Kind {
	case sql.ShowTables:
		return names("table name", append(s.cat.Tables(), s.cat.Views()...), st.Like), nil
	case sql.ShowCreateTable:
		t, ok := s.cat.Table(st.Name)
		if !ok {
			if _, view := s.cat.View(st.Name); view {
				return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("'%s' is a view", st.Name), Hint: "SHOW CREATE VIEW " + st.Name}
			}
			return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("%v: '%s'", catalog.ErrTableNotFound, st.Name), Hint: "SHOW TABLES lists them"}
		}
		return &Result{Kind: ResultText, Text: CreateTableText(t)}, nil
	case sql.ShowCreateView:
		v, ok := s.cat.View(st.Name)
		if !ok {
			if _, table := s.cat.Table(st.Name); table {
				return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("'%s' is a table", st.Name), Hint: "SHOW CREATE TABLE " + st.Name}
			}
			return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("view '%s' does not exist", st.Name), Hint: "SHOW VIEWS lists them"}
		}
		return &Result{Kind: ResultText, Text: CreateViewText(v)}, nil
	case sql.ShowColumns:
		r, err := s.describe(&sql.Describe{Span: st.Span, Name: st.Name, NamePos: st.NamePos})
		if err != nil {
			return nil, err
		}
		rows := r.Rows[:0]
		for _, row := range r.Rows {
			if st.Like.Match(row[0].(string)) {
				rows = append(rows, row)
			}
		}
		r.Rows = rows
		return r, nil
	case sql.ShowFunctions:
		var fs []string
		if !st.User {
			fs = planner.FunctionNames()
			for i := range fs {
				fs[i] = strings.ToLower(fs[i])
			}
		}
		for _, f := range s.cat.Functions() {
			fs = append(fs, f.Name)
		}
		sort.Strings(fs)
		return names("function name", fs, st.Like), nil
	case sql.ShowCatalogs:
		return names("catalog name", []string{DefaultCatalog}, st.Like), nil
	case sql.ShowDatabases:
		return names("database name", []string{DefaultDatabase}, st.Like), nil
	case sql.ShowCurrentCatalog:
		return names("current catalog name", []string{DefaultCatalog}, nil), nil
	case sql.ShowCurrentDatabase:
		return names("current database name", []string{DefaultDatabase}, nil), nil
	}
	return nil, sql.Errorf(st.Pos(), "unsupported SHOW")
}

// names is a one-column result of the names that match like.
func names(column string, list []string, like *sql.LikePattern) *Result {
	r := &Result{Kind: ResultRows, Columns: types.Schema{{Name: column, Type: types.StringType}}}
	for _, n := range list {
		if like.Match(n) {
			r.Rows = append(r.Rows, []types.Value{n})
		}
	}
	return r
}

// use is USE CATALOG name and USE [catalog.]database: only the default
// catalog and database exist, so USE of them changes nothing and USE of
// any other is an error.
func (s *Session) use(st *sql.Use) (*Result, error) {
	only := fmt.Sprintf("there is one catalog, '%s', holding one database, '%s'", DefaultCatalog, DefaultDatabase)
	if st.Catalog {
		if st.Name != DefaultCatalog {
			return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("catalog '%s' does not exist", st.Name), Hint: only}
		}
		return &Result{Message: fmt.Sprintf("[INFO] Using catalog '%s'.", DefaultCatalog)}, nil
	}
	db := st.Name
	if c, d, ok := strings.Cut(st.Name, "."); ok {
		if c != DefaultCatalog {
			return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("catalog '%s' does not exist", c), Hint: only}
		}
		db = d
	}
	if db != DefaultDatabase {
		return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("database '%s' does not exist", db), Hint: only}
	}
	return &Result{Message: fmt.Sprintf("[INFO] Using database '%s'.", DefaultDatabase)}, nil
}

// quoteName quotes an identifier with backquotes, doubling those in it.
func quoteName(n string) string { return "`" + strings.ReplaceAll(n, "`", "``") + "`" }

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// CreateTableText is the CREATE TABLE statement of t (SHOW CREATE TABLE):
// run on another data directory it creates a table of the same
// definition. The options are in the order of their keys.
func CreateTableText(t *catalog.Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n", quoteName(t.Name))
	var elems []string
	for _, c := range t.Columns {
		if e, ok := t.ComputedExpr(c.Name); ok {
			elems = append(elems, fmt.Sprintf("%s AS %s", quoteName(c.Name), e))
			continue
		}
		elems = append(elems, fmt.Sprintf("%s %s", quoteName(c.Name), c.Type))
	}
	if t.WatermarkColumn != "" {
		elems = append(elems, fmt.Sprintf("WATERMARK FOR %s AS %s", quoteName(t.WatermarkColumn), t.WatermarkExpr))
	}
	if len(t.PrimaryKey) > 0 {
		elems = append(elems, fmt.Sprintf("PRIMARY KEY (%s) NOT ENFORCED", quoteNames(t.PrimaryKey)))
	}
	b.WriteString("  " + strings.Join(elems, ",\n  ") + "\n)")
	if len(t.PartitionKeys) > 0 {
		fmt.Fprintf(&b, "\nPARTITIONED BY (%s)", quoteNames(t.PartitionKeys))
	}
	if t.AppendOnly {
		b.WriteString("\nAPPEND ONLY")
	}
	if t.Connector != "" || len(t.Options) > 0 {
		var opts []string
		if t.Connector != "" {
			opts = append(opts, fmt.Sprintf("'connector' = %s", sqlString(t.Connector)))
		}
		keys := make([]string, 0, len(t.Options))
		for k := range t.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			opts = append(opts, fmt.Sprintf("%s = %s", sqlString(k), sqlString(t.Options[k])))
		}
		b.WriteString("\nWITH (\n  " + strings.Join(opts, ",\n  ") + "\n)")
	}
	return b.String() + ";\n"
}

// CreateViewText is the CREATE VIEW statement of v (SHOW CREATE VIEW).
func CreateViewText(v *catalog.View) string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if v.Temporary {
		b.WriteString("TEMPORARY ")
	}
	fmt.Fprintf(&b, "VIEW %s", quoteName(v.Name))
	if len(v.Columns) > 0 {
		fmt.Fprintf(&b, " (%s)", quoteNames(v.Columns))
	}
	fmt.Fprintf(&b, " AS\n%s;\n", strings.TrimSpace(v.Query))
	return b.String()
}

func quoteNames(ns []string) string {
	q := make([]string, len(ns))
	for i, n := range ns {
		q[i] = quoteName(n)
	}
	return strings.Join(q, ", ")
}

// msgSessionPropertySet is what SET 'key' = 'value' answers, as Flink's
// SQL client does.
const msgSessionPropertySet = "[INFO] Session property has been set."

// exists reports whether the catalog holds a table or view name.
func (s *Session) exists(name string) bool {
	_, t := s.cat.Table(name)
	_, v := s.cat.View(name)
	return t || v
}

// created is the answer to a CREATE TABLE or VIEW (kind "Table" or
// "View") that succeeded: it created name, or (IF NOT EXISTS) found it.
func created(kind, name string, existed bool) *Result {
	if existed {
		return &Result{Message: fmt.Sprintf("[INFO] '%s' already exists: nothing created.", brief(name))}
	}
	return &Result{Message: fmt.Sprintf("[INFO] %s '%s' created.", kind, brief(name))}
}

// brief is a name as an answer repeats it: whole up to 100 characters,
// else its first 60 and how long it is (a statement's answer does not
// echo a name of megabytes back).
func brief(name string) string {
	if len(name) <= 100 {
		return name
	}
	cut := 60
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", name[:cut], len(name))
}
