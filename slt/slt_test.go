package slt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// fakeDB is a test double for the engine: it answers queries from a table
// of canned results keyed by the SQL text (whitespace collapsed) and fails
// the statements it is told to fail.
type fakeDB struct {
	results map[string]fakeResult
	errs    map[string]error // Exec errors by SQL
	execs   []string
	closed  bool
}

type fakeResult struct {
	types string
	rows  [][]Value
	err   error
}

func newFakeDB() *fakeDB {
	return &fakeDB{results: map[string]fakeResult{}, errs: map[string]error{}}
}

func key(sql string) string { return strings.Join(strings.Fields(sql), " ") }

func (d *fakeDB) on(sql, types string, rows ...[]Value) *fakeDB {
	d.results[key(sql)] = fakeResult{types: types, rows: rows}
	return d
}

func (d *fakeDB) onErr(sql string, err error) *fakeDB {
	d.results[key(sql)] = fakeResult{err: err}
	d.errs[key(sql)] = err
	return d
}

func (d *fakeDB) Exec(_ context.Context, sql string) error {
	d.execs = append(d.execs, key(sql))
	return d.errs[key(sql)]
}

func (d *fakeDB) Query(_ context.Context, sql string) (string, [][]Value, error) {
	r, ok := d.results[key(sql)]
	if !ok {
		return "", nil, fmt.Errorf("fake: no result for %q", key(sql))
	}
	return r.types, r.rows, r.err
}

func (d *fakeDB) Close() error { d.closed = true; return nil }

func ints(vs ...int64) []Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		out[i] = Int(v)
	}
	return out
}

// runScript writes script to a file in a fresh directory (plus any extra
// files, by relative name) and runs it on db.
func runScript(t *testing.T, db DB, script string, extra map[string]string) FileResult {
	t.Helper()
	dir := t.TempDir()
	for name, body := range extra {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "test.slt")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return RunFile(context.Background(), path, Options{NewDB: func(string) (DB, error) { return db, nil }})
}

func expectCounts(t *testing.T, res FileResult, passed, failed, skipped int) {
	t.Helper()
	if res.Passed != passed || res.Failed != failed || res.Skipped != skipped {
		var b strings.Builder
		for _, f := range res.Failures {
			b.WriteString(f.String())
		}
		t.Fatalf("got %d passed, %d failed, %d skipped; want %d, %d, %d\n%s",
			res.Passed, res.Failed, res.Skipped, passed, failed, skipped, b.String())
	}
}

func TestParse(t *testing.T) {
	src := `# a comment
hash-threshold 8

statement ok
CREATE TABLE t(a INT)

onlyif sqlite # only there
skipif mysql
statement error no such .* table
SELECT * FROM nope

statement count 3
INSERT INTO t VALUES (1), (2), (3)

query IT rowsort label-1
SELECT a, 'x'
  FROM t
----
1 x

query error division by zero
SELECT 1/0

statement error
SELECT bad
----
db error: bad
  more detail

control sortmode valuesort

control substitution on

include parts/*.slt.part

sleep 500ms

system ok
echo hi
----
hi

loop i 0 3
statement ok
INSERT INTO t VALUES ($i)
endloop

query I retry 3 backoff 1s
SELECT 1
----
1

halt
`
	recs, err := Parse(strings.NewReader(src), "x.slt")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
	}
	want := []Kind{KindHashThreshold, KindStatement, KindStatement, KindStatement, KindQuery, KindQuery,
		KindStatement, KindControl, KindControl, KindInclude, KindSleep, KindSystem, KindLoop, KindQuery, KindHalt}
	if !slices.Equal(kinds, want) {
		t.Fatalf("kinds = %v, want %v", kinds, want)
	}
	if recs[0].Threshold != 8 {
		t.Errorf("threshold = %d", recs[0].Threshold)
	}
	st := recs[2]
	if st.Line != 9 || st.Err == nil || st.Err.Regex != "no such .* table" || st.SQL != "SELECT * FROM nope" {
		t.Errorf("statement error record = %+v", st)
	}
	if !slices.Equal(st.Conditions, []Condition{{OnlyIf: true, Engine: "sqlite"}, {Engine: "mysql"}}) {
		t.Errorf("conditions = %+v", st.Conditions)
	}
	if recs[3].Count != 3 {
		t.Errorf("count = %d", recs[3].Count)
	}
	q := recs[4]
	if q.Types != "IT" || q.Sort != RowSort || q.Label != "label-1" || q.SQL != "SELECT a, 'x'\n  FROM t" ||
		!slices.Equal(q.Expected, []string{"1 x"}) || q.Line != 15 {
		t.Errorf("query record = %+v", q)
	}
	if recs[5].Err == nil || recs[5].Err.Regex != "division by zero" {
		t.Errorf("query error record = %+v", recs[5])
	}
	if recs[6].Err == nil || recs[6].Err.Message != "db error: bad\n  more detail" {
		t.Errorf("multi-line error = %+v", recs[6].Err)
	}
	if recs[8].Arg != "substitution on" {
		t.Errorf("control record = %+v", recs[8])
	}
	if recs[9].Arg != "parts/*.slt.part" || recs[10].Duration != 500*time.Millisecond {
		t.Errorf("include/sleep = %+v %+v", recs[9], recs[10])
	}
	if recs[11].SQL != "echo hi" || !slices.Equal(recs[11].Expected, []string{"hi"}) {
		t.Errorf("system = %+v", recs[11])
	}
	if l := recs[12]; l.LoopVar != "i" || l.LoopCount != 3 || len(l.Body) != 1 {
		t.Errorf("loop = %+v", l)
	}
	if q := recs[13]; q.Retry != 3 || q.Backoff != time.Second || q.Types != "I" {
		t.Errorf("retry = %+v", q)
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{
		"statement maybe\nSELECT 1\n",
		"query I\n\n",
		"hash-threshold x\n",
		"sleep forever\n",
		"loop i 0 2\nstatement ok\nSELECT 1\n",
		"endloop\n",
		"onlyif\nstatement ok\nSELECT 1\n",
	} {
		_, err := Parse(strings.NewReader(src), "bad.slt")
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want a ParseError", src, err)
		}
	}
}

// TestParseConformance parses every test file of the shared conformance
// material (read in place, beside the repository).
func TestParseConformance(t *testing.T) {
	root := testenv.ConformanceDir(t)
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("conformance files missing: %v", err)
	}
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !(strings.HasSuffix(name, ".slt") || strings.HasSuffix(name, ".test") || strings.HasSuffix(name, ".slt.part")) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		recs, err := Parse(f, path)
		if err != nil {
			t.Errorf("%v", err)
			return nil
		}
		if len(recs) == 0 {
			t.Errorf("%s: no records", path)
		}
		for _, r := range recs {
			if r.Kind == KindUnknown {
				t.Logf("%s:%d: skipped: %s", r.Path, r.Line, r.Reason)
			}
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no test files found under", root)
	}
}

// select1Rows are the rows of t1 inserted by SQLite's select1.test, as
// (a, b, c, d, e).
var select1Rows = [][5]int64{
	{104, 100, 102, 101, 103}, {107, 105, 106, 108, 109}, {111, 112, 113, 114, 110},
	{115, 118, 119, 116, 117}, {121, 124, 123, 122, 120}, {127, 129, 125, 128, 126},
	{131, 130, 134, 133, 132}, {138, 139, 137, 136, 135}, {142, 143, 141, 140, 144},
	{149, 145, 147, 148, 146}, {153, 151, 150, 154, 152}, {159, 158, 155, 156, 157},
	{163, 160, 161, 164, 162}, {168, 167, 166, 169, 165}, {174, 170, 172, 171, 173},
	{179, 175, 176, 178, 177}, {182, 181, 184, 183, 180}, {188, 186, 187, 185, 189},
	{191, 194, 193, 190, 192}, {199, 198, 195, 196, 197}, {201, 200, 202, 203, 204},
	{205, 206, 208, 207, 209}, {213, 211, 214, 212, 210}, {216, 218, 215, 217, 219},
	{220, 223, 224, 222, 221}, {229, 228, 225, 226, 227}, {234, 232, 231, 233, 230},
	{239, 236, 235, 238, 237}, {243, 240, 244, 241, 242}, {245, 249, 247, 248, 246},
}

const (
	select1Q1 = `SELECT CASE WHEN c>(SELECT avg(c) FROM t1) THEN a*2 ELSE b*10 END
  FROM t1
 ORDER BY 1`
	select1Q2 = `SELECT a+b*2+c*3+d*4+e*5,
       (a+b+c+d+e)/5
  FROM t1
 ORDER BY 1,2`
	select1Q2Unordered = `SELECT a+b*2+c*3+d*4+e*5, (a+b+c+d+e)/5 FROM t1`
)

// select1DB answers the first two hashed queries of select1.test, computing
// their results from the table's rows.
func select1DB() *fakeDB {
	var sumC int64
	for _, r := range select1Rows {
		sumC += r[2]
	}
	avgC := float64(sumC) / float64(len(select1Rows))
	var q1 [][]Value
	var q2 [][2]int64
	for _, r := range select1Rows {
		a, b, c, d, e := r[0], r[1], r[2], r[3], r[4]
		v := b * 10
		if float64(c) > avgC {
			v = a * 2
		}
		q1 = append(q1, ints(v))
		q2 = append(q2, [2]int64{a + b*2 + c*3 + d*4 + e*5, (a + b + c + d + e) / 5})
	}
	slices.SortFunc(q1, func(x, y []Value) int {
		return strings.Compare(fmt.Sprintf("%9s", x[0].Text), fmt.Sprintf("%9s", y[0].Text))
	})
	slices.SortFunc(q2, func(x, y [2]int64) int { return slices.Compare(x[:], y[:]) })
	var q2rows [][]Value
	for _, r := range q2 {
		q2rows = append(q2rows, ints(r[0], r[1]))
	}
	reversed := slices.Clone(q2rows)
	slices.Reverse(reversed)
	return newFakeDB().on(select1Q1, "I", q1...).on(select1Q2, "II", q2rows...).on(select1Q2Unordered, "II", reversed...)
}

func TestHashSelect1(t *testing.T) {
	script := "hash-threshold 8\n\nquery I nosort\n" + select1Q1 + "\n----\n30 values hashing to 3c13dee48d9356ae19af2515e05e6b54\n\n" +
		"query II nosort\n" + select1Q2 + "\n----\n60 values hashing to 808146289313018fce25f1a280bd8c30\n\n" +
		// Same result, wrong hash: must fail.
		"query II nosort\n" + select1Q2 + "\n----\n60 values hashing to 00000000000000000000000000000000\n\n" +
		// Right hash, wrong count: must fail.
		"query II nosort\n" + select1Q2 + "\n----\n59 values hashing to 808146289313018fce25f1a280bd8c30\n\n" +
		// Without ORDER BY, under rowsort: the values sort as strings, which
		// here is the numeric order.
		"query II rowsort\n" + select1Q2Unordered + "\n----\n60 values hashing to 808146289313018fce25f1a280bd8c30\n"
	res := runScript(t, select1DB(), script, nil)
	expectCounts(t, res, 3, 2, 0)
	if res.Failures[0].Line != 18 || !strings.Contains(res.Failures[0].Got, "60 values hashing to 808146289313018fce25f1a280bd8c30") {
		t.Errorf("failure = %s", res.Failures[0])
	}
}

// TestSelect1File runs SQLite's select1.test itself on the fake engine:
// the statements succeed, the first two hashed queries must pass, the
// others (which the fake cannot answer) fail.
func TestSelect1File(t *testing.T) {
	path := filepath.Join(testenv.ConformanceDir(t), "sqlite-slt", "select1.test")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := Parse(f, path)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var hashed []int
	for _, r := range recs {
		if r.Kind == KindQuery {
			if _, _, ok := parseHashLine(r.Expected); ok {
				hashed = append(hashed, r.Line)
			}
		}
	}
	res := RunFile(context.Background(), path, Options{NewDB: func(string) (DB, error) { return select1DB(), nil }})
	failed := map[int]bool{}
	for _, f := range res.Failures {
		failed[f.Line] = true
	}
	if failed[hashed[0]] || failed[hashed[1]] {
		t.Fatalf("hashed queries at lines %d, %d failed", hashed[0], hashed[1])
	}
	if res.Failed == 0 || res.Passed < 32 {
		t.Fatalf("unexpected result %+v", res)
	}
}

func TestLayouts(t *testing.T) {
	db := newFakeDB().
		on("SELECT a, b FROM t", "IT", []Value{Int(2), Text("y z")}, []Value{Int(1), Text("x")}, []Value{Int(3), Null}).
		on("SELECT a FROM t", "I", ints(3)).on("SELECT empty", "T", []Value{Text("")}, []Value{Text("a\tb")})
	script := `
# SQLite's layout, in the engine's order
query IT nosort
SELECT a, b FROM t
----
2
y z
1
x
3
NULL

# sqllogictest-rs's layout, rowsort (expected given unsorted too)
query IT rowsort
SELECT a, b FROM t
----
3   NULL
1	x
2 y z

# value per line, rowsort
query IT rowsort
SELECT a, b FROM t
----
1
x
2
y z
3
NULL

# valuesort
query IT valuesort
SELECT a, b FROM t
----
1
2
3
NULL
x
y z

# wrong order with nosort
query IT nosort
SELECT a, b FROM t
----
1 x
2 y z
3 NULL

# empty string and control characters
query T
SELECT empty
----
(empty)
a@b

control sortmode rowsort

query IT
SELECT a, b FROM t
----
1 x
2 y z
3 NULL
`
	res := runScript(t, db, script, nil)
	expectCounts(t, res, 6, 1, 0)
	f := res.Failures[0]
	if f.Line != 44 || f.Got != "2 y z\n1 x\n3 NULL" {
		t.Errorf("failure:\n%s", f)
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    Value
		typ  byte
		want string
	}{
		{Int(42), 'I', "42"},
		{Text("2.7"), 'I', "2"},
		{Text("-2.7"), 'I', "-2"},
		{Float(1e3), 'I', "1000"},
		{Text("true"), 'I', "1"},
		// Text that is no number reads as its leading number, as SQLite's
		// sqlite3_column_int64 / sqlite3_column_double read it.
		{Text("abc"), 'I', "0"},
		{Text(""), 'I', "0"},
		{Text(" 12abc"), 'I', "12"},
		{Text("-7 apples"), 'I', "-7"},
		{Text("99999999999999999999x"), 'I', "9223372036854775807"},
		{Text("abc"), 'R', "0.000"},
		{Text("1.5e1x"), 'R', "15.000"},
		{Text("0x10"), 'R', "0.000"},
		{Text("2024-01-02"), 'I', "2024"},
		{Int(1), 'R', "1.000"},
		{Text("2.5"), 'R', "2.500"},
		{Float(1.0 / 3), 'R', "0.333"},
		{Text("-0.0001"), 'R', "-0.000"},
		{Null, 'I', "NULL"},
		{Null, 'T', "NULL"},
		{Text(""), 'T', "(empty)"},
		{Text("a\nb\x01"), 'T', "a@b@"},
		{Text("héllo"), 'T', "héllo"},
		{Text("3.0"), 'T', "3.0"},
	} {
		if got := FormatValue(c.v, c.typ); got != c.want {
			t.Errorf("FormatValue(%+v, %c) = %q, want %q", c.v, c.typ, got, c.want)
		}
	}
}

func TestTypeNormalisation(t *testing.T) {
	db := newFakeDB().
		on("SELECT avg(x)", "R", []Value{Float(2.5)}).
		on("SELECT x / 2", "R", []Value{Float(1.5)}, []Value{Float(2)})
	script := `
# C runner: an I column truncates a floating value
query I
SELECT avg(x)
----
2

query R
SELECT avg(x)
----
2.500

# sqllogictest-rs files give the engine's own text
query R
SELECT avg(x)
----
2.5

query R
SELECT x / 2
----
1.5
2

query I
SELECT avg(x)
----
3
`
	res := runScript(t, db, script, nil)
	expectCounts(t, res, 4, 1, 0)
	if res.Failures[0].Got != "2" {
		t.Errorf("got %q", res.Failures[0].Got)
	}
}

func TestErrors(t *testing.T) {
	db := newFakeDB().
		onErr("DROP TABLE nope", errors.New(`table "nope" does not exist`)).
		onErr("SELECT 1/0", errors.New("division by zero\nat column 8"))
	db.on("SELECT 1", "I", ints(1))
	script := `
statement error does not exist
DROP TABLE nope

statement error ^table "\w+" does
DROP TABLE nope

statement error
DROP TABLE nope

statement error already exists
DROP TABLE nope

statement error
CREATE TABLE fine(a INT)

statement ok
DROP TABLE nope

query error division
SELECT 1/0

query I
SELECT 1/0
----
1

query error
SELECT 1
----
oops

statement error
DROP TABLE nope
----
table "nope" does not exist

query error
SELECT 1/0
----
division by zero
at column 8

statement error
DROP TABLE nope
----
table "nope" is missing

statement count 2
INSERT INTO t VALUES (1), (2)
`
	res := runScript(t, db, script, nil)
	expectCounts(t, res, 7, 6, 0)
	var lines []int
	for _, f := range res.Failures {
		lines = append(lines, f.Line)
	}
	if !slices.Equal(lines, []int{11, 14, 17, 23, 28, 44}) {
		t.Errorf("failed lines %v", lines)
	}
	if f := res.Failures[2]; f.Err == nil || !strings.Contains(f.String(), "test.slt:17: statement failed: table \"nope\" does not exist\n    DROP TABLE nope\n") {
		t.Errorf("failure text:\n%s", f)
	}
}

func TestConditionsAndHalt(t *testing.T) {
	db := newFakeDB()
	script := `
statement ok
CREATE TABLE a(x INT)

skipif streamsql
statement ok
CREATE TABLE b(x INT)

onlyif sqlite
statement ok
CREATE TABLE c(x INT)

onlyif streamsql
statement ok
CREATE TABLE d(x INT)

skipif sqlite
skipif mysql
statement ok
CREATE TABLE e(x INT)

onlyif mssql
halt

skipif streamsql
halt

statement ok
CREATE TABLE f(x INT)

onlyif StreamSQL
halt

statement ok
CREATE TABLE g(x INT)

query I
SELECT 1
----
1
`
	res := runScript(t, db, script, nil)
	expectCounts(t, res, 4, 0, 4)
	want := []string{"CREATE TABLE a(x INT)", "CREATE TABLE d(x INT)", "CREATE TABLE e(x INT)", "CREATE TABLE f(x INT)"}
	if !slices.Equal(db.execs, want) {
		t.Errorf("execs = %q", db.execs)
	}
	if !db.closed {
		t.Error("DB not closed")
	}
}

func TestEngineOption(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.test")
	os.WriteFile(path, []byte("onlyif sqlite\nstatement ok\nCREATE TABLE x(a INT)\n\nskipif sqlite\nhalt\n\nstatement ok\nSELECT 2\n"), 0o644)
	db := newFakeDB()
	res := RunFile(context.Background(), path, Options{Engine: "sqlite", NewDB: func(string) (DB, error) { return db, nil }})
	expectCounts(t, res, 2, 0, 0)
}

func TestInclude(t *testing.T) {
	db := newFakeDB().on("SELECT 1", "I", ints(1))
	extra := map[string]string{
		"parts/a.slt.part":     "statement ok\nCREATE TABLE a(x INT)\n",
		"parts/b.slt.part":     "statement ok\nCREATE TABLE b(x INT)\n\ninclude ../sub/c.slt.part\n",
		"sub/c.slt.part":       "query I\nSELECT 2\n----\n2\n",
		"loop/self.slt.part":   "statement ok\nCREATE TABLE s(x INT)\n\ninclude self.slt.part\n",
		"parts/ignored.txt":    "not a test",
		"other/standalone.slt": "statement ok\nSELECT 1\n",
	}
	script := `include parts/*.slt.part

query I
SELECT 1
----
1

include loop/self.slt.part

include nothing/*.slt
`
	res := runScript(t, db, script, extra)
	expectCounts(t, res, 4, 3, 0)
	got := []string{}
	for _, f := range res.Failures {
		got = append(got, fmt.Sprintf("%s:%d", filepath.Base(f.Path), f.Line))
	}
	// c.slt.part's query fails (the fake has no result for SELECT 2) and is
	// reported at its own file and line; the self-include is refused once.
	want := []string{"c.slt.part:1", "self.slt.part:4", "test.slt:10"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("failures at %v, want %v", got, want)
	}
	wantExecs := []string{"CREATE TABLE a(x INT)", "CREATE TABLE b(x INT)", "CREATE TABLE s(x INT)"}
	if !slices.Equal(db.execs, wantExecs) {
		t.Errorf("execs = %q", db.execs)
	}

	// Walking a directory runs .slt and .test files but not .slt.part.
	files, err := CollectFiles([]string{filepath.Dir(res.Path)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if !slices.Equal(names, []string{"standalone.slt", "test.slt"}) {
		t.Errorf("collected %v", names)
	}
}

func TestLabels(t *testing.T) {
	db := newFakeDB().
		on("SELECT x FROM t WHERE x>0", "I", ints(1)).
		on("SELECT x FROM v", "I", ints(1)).
		on("SELECT y FROM t", "T", []Value{Text("1")}).
		on("SELECT x FROM w", "I", ints(2))
	script := `
query I rowsort label-0
SELECT x FROM t WHERE x>0
----
1

query I rowsort label-0
SELECT x FROM v
----
1

query I rowsort label-0
SELECT y FROM t
----
1

query I rowsort label-0
SELECT x FROM w
----
2
`
	res := runScript(t, db, script, nil)
	expectCounts(t, res, 3, 1, 0)
	if f := res.Failures[0]; f.Line != 17 || !strings.Contains(f.Message, "label-0") || !strings.Contains(f.Message, "test.slt:2") {
		t.Errorf("failure:\n%s", f)
	}
}

func TestSleep(t *testing.T) {
	start := time.Now()
	res := runScript(t, newFakeDB(), "sleep 60ms\n\nstatement ok\nSELECT 1\n", nil)
	expectCounts(t, res, 1, 0, 0)
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("slept %v", d)
	}
	if d, err := parseDuration("2min"); err != nil || d != 2*time.Minute {
		t.Errorf("parseDuration(2min) = %v, %v", d, err)
	}
}

func TestSystem(t *testing.T) {
	script := `
system ok
echo hello > out.txt

system ok
cat out.txt
----
hello

system ok
echo one; echo two
----
one
three

system ok
exit 3
`
	res := runScript(t, newFakeDB(), script, nil)
	expectCounts(t, res, 2, 2, 0)
	if _, err := os.Stat(filepath.Join(filepath.Dir(res.Path), "out.txt")); err != nil {
		t.Errorf("command did not run in the file's directory: %v", err)
	}
	if f := res.Failures[0]; f.Line != 10 || f.Got != "one\ntwo" {
		t.Errorf("failure:\n%s", f)
	}
	if f := res.Failures[1]; f.Line != 16 || f.Err == nil {
		t.Errorf("failure:\n%s", f)
	}
}

func TestLoop(t *testing.T) {
	db := newFakeDB()
	script := "loop i 1 3\nstatement ok\nINSERT INTO t VALUES ($i, ${i}0)\nendloop\n"
	res := runScript(t, db, script, nil)
	expectCounts(t, res, 3, 0, 0)
	want := []string{"INSERT INTO t VALUES (1, 10)", "INSERT INTO t VALUES (2, 20)", "INSERT INTO t VALUES (3, 30)"}
	if !slices.Equal(db.execs, want) {
		t.Errorf("execs = %q", db.execs)
	}
}

func TestUnknownDirectives(t *testing.T) {
	script := `control pager on

connection other
statement ok
SELECT 1

statement ok
SELECT 2
`
	res := runScript(t, newFakeDB(), script, nil)
	expectCounts(t, res, 2, 0, 2)
	if len(res.Skips) != 2 || !strings.Contains(res.Skips[0], "test.slt:1:") || !strings.Contains(res.Skips[1], "connection") {
		t.Errorf("skips = %q", res.Skips)
	}
}

// TestSubstitution: "control substitution on" replaces $NAME and ${NAME}
// from Options.Vars, then the environment; unknown names stay; off stops.
func TestSubstitution(t *testing.T) {
	t.Setenv("SLT_TEST_ENV", "from-env")
	db := newFakeDB()
	script := `statement ok
SELECT '$BROKER'

control substitution on

statement ok
SELECT '$BROKER', '${BROKER}x', '$SLT_TEST_ENV', '$NOT_SET'

statement ok
SELECT '$__TEST_DIR__'

control substitution off

statement ok
SELECT '$BROKER'
`
	path := filepath.Join(t.TempDir(), "test.slt")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	res := RunFile(context.Background(), path, Options{NewDB: func(string) (DB, error) { return db, nil },
		Vars: map[string]string{"BROKER": "127.0.0.1:9092"}})
	expectCounts(t, res, 4, 0, 0)
	if len(db.execs) != 4 {
		t.Fatalf("execs = %q", db.execs)
	}
	want := []string{"SELECT '$BROKER'", "SELECT '127.0.0.1:9092', '127.0.0.1:9092x', 'from-env', '$NOT_SET'", "", "SELECT '$BROKER'"}
	for i, w := range want {
		if w != "" && db.execs[i] != w {
			t.Errorf("exec %d = %q, want %q", i, db.execs[i], w)
		}
	}
	dir := strings.Trim(strings.TrimPrefix(db.execs[2], "SELECT "), "'")
	if dir == "$__TEST_DIR__" || !filepath.IsAbs(dir) {
		t.Errorf("$__TEST_DIR__ became %q", dir)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the test directory %s outlived the file: %v", dir, err)
	}
}

func TestRunFilesAndReport(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.slt"), []byte("statement ok\nSELECT 1\n\nquery I\nSELECT 1\n----\n2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.test"), []byte("statement ok\nSELECT 1\n\nonlyif sqlite\nstatement ok\nSELECT 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.slt"), []byte("statement what\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "x.slt.part"), []byte("statement ok\nSELECT 1\n"), 0o644)
	var opened []string
	opt := Options{NewDB: func(p string) (DB, error) {
		opened = append(opened, filepath.Base(p))
		return newFakeDB().on("SELECT 1", "I", ints(1)), nil
	}}
	res, err := RunFiles(context.Background(), []string{dir}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opened, []string{"a.slt", "b.test"}) {
		t.Errorf("opened %v", opened)
	}
	var out bytes.Buffer
	if !Report(&out, res, true) {
		t.Error("Report says nothing failed")
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "2 passed, 2 failed" {
		t.Errorf("last line %q\n%s", last, out.String())
	}
	for _, want := range []string{
		filepath.Join(dir, "a.slt") + ": 1 passed, 1 failed, 0 skipped",
		filepath.Join(dir, "a.slt") + ":4: query result mismatch",
		filepath.Join(dir, "b.test") + ": 1 passed, 0 failed, 1 skipped",
		filepath.Join(dir, "c.slt") + ":1: parse error",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}

	// Run writes the same report to Options.Out.
	out.Reset()
	opt.Out = &out
	failed, err := Run(context.Background(), []string{filepath.Join(dir, "b.test")}, opt)
	if err != nil || failed || !strings.HasSuffix(out.String(), "\n1 passed, 0 failed\n") {
		t.Errorf("Run = %v, %v:\n%s", failed, err, out.String())
	}

	if _, err := RunFiles(context.Background(), []string{filepath.Join(dir, "missing")}, opt); err == nil {
		t.Error("no error for a missing path")
	}
}

// blockingDB never answers until its context ends.
type blockingDB struct{}

func (blockingDB) Exec(ctx context.Context, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

func (blockingDB) Query(ctx context.Context, _ string) (string, [][]Value, error) {
	<-ctx.Done()
	return "", nil, ctx.Err()
}

func TestTimeout(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.slt")
	os.WriteFile(path, []byte("statement ok\nSELECT 1\n\nquery I\nSELECT 1\n----\n1\n"), 0o644)
	res := RunFile(context.Background(), path, Options{Timeout: 20 * time.Millisecond,
		NewDB: func(string) (DB, error) { return blockingDB{}, nil }})
	expectCounts(t, res, 0, 2, 0)
	if !errors.Is(res.Failures[0].Err, context.DeadlineExceeded) {
		t.Errorf("err = %v", res.Failures[0].Err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunFiles(ctx, []string{path}, Options{NewDB: func(string) (DB, error) { return blockingDB{}, nil }}); !errors.Is(err, context.Canceled) {
		t.Errorf("RunFiles on a cancelled context: %v", err)
	}
}

// emptyDB succeeds at every statement and returns no rows for every query.
type emptyDB struct{}

func (emptyDB) Exec(context.Context, string) error { return nil }
func (emptyDB) Query(context.Context, string) (string, [][]Value, error) {
	return "", nil, nil
}

// TestRunConformance runs every conformance file on an engine that returns
// nothing, to check the runner copes with all of them (includes, halts,
// hashes, unknown directives) and accounts for every record.
func TestRunConformance(t *testing.T) {
	root := testenv.ConformanceDir(t)
	res, err := RunFiles(context.Background(), []string{root}, Options{NewDB: func(string) (DB, error) { return emptyDB{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 {
		t.Fatal("no files run")
	}
	for _, r := range res {
		for _, f := range r.Failures {
			if strings.Contains(f.Message, "parse error") || strings.HasPrefix(f.Message, "include") {
				t.Errorf("%s", f)
			}
		}
		if r.Passed+r.Failed+r.Skipped == 0 {
			t.Errorf("%s: no records counted", r.Path)
		}
	}
	var out bytes.Buffer
	Report(&out, res, false)
	t.Log("\n" + out.String())
}

// TestDialect checks how the file's name picks the rendering of 'R'
// columns: a *.slt file (sqllogictest-rs, as RisingWave writes it) expects
// a whole double as 6, not the engine's 6.0; a *.test file (SQLite) does
// not take that form; both take the C runner's "%.3f".
func TestDialect(t *testing.T) {
	db := newFakeDB().
		on("SELECT d", "R", []Value{Text("6.0")}, []Value{Text("1.0E7")}, []Value{Text("1.5")}, []Value{Text("1.0E-5")}, []Value{Null}).
		on("SELECT m", "R", []Value{Text("12.30")}, []Value{Text("18446744073709551615")})
	script := `
query R
SELECT d
----
6
10000000
1.5
1e-05
NULL

query R
SELECT d
----
6.000
10000000.000
1.500
0.000
NULL

# decimals and integers keep their text
query R
SELECT m
----
12.30
18446744073709551615
`
	for _, c := range []struct {
		name           string
		dialect        Dialect
		passed, failed int
	}{
		{"suite.slt", DialectRS, 3, 0},
		{"suite.slt.part", DialectRS, 3, 0},
		{"suite.test", DialectSQLite, 2, 1},
	} {
		if d := DialectOf(c.name); d != c.dialect {
			t.Errorf("DialectOf(%s) = %v, want %v", c.name, d, c.dialect)
		}
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		res := RunFile(context.Background(), path, Options{NewDB: func(string) (DB, error) { return db, nil }})
		if res.Passed != c.passed || res.Failed != c.failed {
			t.Errorf("%s: %d passed, %d failed; want %d, %d", c.name, res.Passed, res.Failed, c.passed, c.failed)
		}
	}
}

// countingDB is a fakeDB that reports the number of rows each statement
// changed (Counter): its length in characters.
type countingDB struct{ *fakeDB }

func (d countingDB) ExecCount(ctx context.Context, sql string) (int64, error) {
	return int64(len(key(sql))), d.Exec(ctx, sql)
}

// TestStatementCount checks that "statement count N" compares N with the
// rows a Counter reports, and is "statement ok" with a DB that is none.
func TestStatementCount(t *testing.T) {
	script := "statement count 5\nABCDE\n\nstatement count 2\nABC\n\nstatement ok\nXY\n"
	res := runScript(t, countingDB{newFakeDB()}, script, nil)
	expectCounts(t, res, 2, 1, 0)
	if f := res.Failures[0]; f.Line != 4 || f.Message != "statement changed 3 rows, expected 2" {
		t.Errorf("failure %+v", f)
	}
	expectCounts(t, runScript(t, newFakeDB(), script, nil), 3, 0, 0)
}
