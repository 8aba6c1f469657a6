package sql

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that its error is always an
// *Error inside the text, and that Complete and FindIdent cope with
// anything.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT a FROM t WHERE b > 1;",
		"CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('k'='v');",
		"INSERT INTO t VALUES (1, CAST('2' AS INT)), (3, 'x' || 'y');",
		"EXECUTE STATEMENT SET BEGIN INSERT INTO s SELECT 1; END;",
		"BEGIN STATEMENT SET; INSERT INTO s SELECT 1; END;",
		"SET 'k' = 'v'; RESET; SHOW JOBS; STOP JOB 'x' WITH SAVEPOINT; DESC t;",
		"EXPLAIN PLAN FOR SELECT * FROM (VALUES (1), (2)) AS v",
		"CREATE VIEW v (a) AS SELECT CAST(x AS DECIMAL(10, 2)) FROM t",
		"SELECT 'unterminated",
		"/* comment",
		"SELECT CAST(CAST(a AS INT) AS VARCHAR(3)) -- c\n;",
		"SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '1:30' MINUTE TO SECOND)) AS w",
		"SELECT * FROM o /*+ OPTIONS('k'='v') */ JOIN d FOR SYSTEM_TIME AS OF o.p AS x ON o.k = x.k FULL JOIN e ON TRUE",
		"SELECT a IS DISTINCT FROM b, TRY_CAST(c AS BOOLEAN), TUMBLE(ts, INTERVAL '5' SECONDS), key FROM t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		stmts, err := Parse(text)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is a %T", err, err)
			}
			if strings.HasPrefix(e.Msg, internalError) {
				t.Fatalf("%v", e)
			}
			if e.Pos.Offset < 0 || e.Pos.Offset > len(text) || e.Pos.Line < 1 || e.Pos.Col < 1 {
				t.Fatalf("error position %+v outside the text", e.Pos)
			}
		}
		for _, s := range stmts {
			if s.Pos().Offset+len(s.Text()) > len(text) || text[s.Pos().Offset:s.Pos().Offset+len(s.Text())] != s.Text() {
				t.Fatalf("statement text %q is not at %d", s.Text(), s.Pos().Offset)
			}
			for _, e := range exprs(s) {
				p := ExprPos(s, e)
				if p.Offset < s.Pos().Offset || p.Offset > s.Pos().Offset+len(s.Text()) {
					t.Fatalf("expression position %+v outside statement at %+v", p, s.Pos())
				}
			}
			FindIdent(s, "a")
		}
		Complete(text)
	})
}
