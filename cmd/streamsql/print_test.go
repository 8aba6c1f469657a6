package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/types"
)

func TestTableLines(t *testing.T) {
	idName := types.Schema{{Name: "id", Type: types.BigIntType}, {Name: "name", Type: types.StringType}}
	tests := []struct {
		name   string
		schema types.Schema
		rows   [][]types.Value
		want   string
	}{
		{
			name:   "numbers right, text left, NULL as <NULL>",
			schema: idName,
			rows:   [][]types.Value{{int64(1), "alice"}, {int64(1234), nil}, {nil, "b"}},
			want: `
+--------+--------+
|     id | name   |
+--------+--------+
|      1 | alice  |
|   1234 | <NULL> |
| <NULL> | b      |
+--------+--------+`,
		},
		{
			name:   "no rows: the header alone",
			schema: idName,
			want: `
+----+------+
| id | name |
+----+------+`,
		},
		{
			name: "types.Format for each type",
			schema: types.Schema{
				{Name: "b", Type: types.BooleanType}, {Name: "d", Type: types.DoubleType},
				{Name: "dec", Type: types.DecimalOf(10, 2)}, {Name: "day", Type: types.DateType},
			},
			rows: [][]types.Value{{true, 2.5, decimal128.FromI64(12345), int32(0)}},
			want: `
+------+-----+--------+------------+
| b    |   d |    dec | day        |
+------+-----+--------+------------+
| TRUE | 2.5 | 123.45 | 1970-01-01 |
+------+-----+--------+------------+`,
		},
		{
			name:   "wide characters and line breaks",
			schema: types.Schema{{Name: "s", Type: types.StringType}},
			rows:   [][]types.Value{{"日本"}, {"a\nb"}},
			want: `
+------+
| s    |
+------+
| 日本 |
| a\nb |
+------+`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(tableLines(tt.schema, tt.rows), "\n")
			if want := strings.TrimPrefix(tt.want, "\n"); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestPrintResult(t *testing.T) {
	tests := []struct {
		name string
		r    *session.Result
		want string
	}{
		{"message", &session.Result{Kind: session.ResultOK, Message: "[INFO] Table 't' created."},
			"[INFO] Table 't' created.\n"},
		{"job", &session.Result{Kind: session.ResultJob, JobID: "42", Message: "Job ID: 42"}, "Job ID: 42\n"},
		{"text gets a final newline", &session.Result{Kind: session.ResultText, Text: "== Plan ==\nScan"}, "== Plan ==\nScan\n"},
		{"one row", &session.Result{Kind: session.ResultRows, Columns: types.Schema{{Name: "n", Type: types.IntType}},
			Rows: [][]types.Value{{int64(7)}}}, "+---+\n| n |\n+---+\n| 7 |\n+---+\n1 row in set\n"},
		{"no rows", &session.Result{Kind: session.ResultRows, Columns: types.Schema{{Name: "n", Type: types.IntType}}},
			"+---+\n| n |\n+---+\nEmpty set\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printResult(&b, tt.r)
			if b.String() != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tt.want)
			}
		})
	}
}

func TestRowsInSet(t *testing.T) {
	for n, want := range map[int]string{0: "Empty set", 1: "1 row in set", 2: "2 rows in set", 1000: "1000 rows in set"} {
		if got := rowsInSet(n); got != want {
			t.Errorf("rowsInSet(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCellTextOfAMismatchedValue(t *testing.T) {
	// An engine handing a value of the wrong Go type must not crash the shell.
	if got := cellText(types.BigIntType, "x"); got != "x" {
		t.Errorf("got %q", got)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"much too long", 10, "much to..."},
		{"日本語の文字", 7, "日本..."},
		{"abcdef", 2, ".."},
	}
	for _, tt := range tests {
		if got := truncate(tt.s, tt.width); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
		if w := displayWidth(truncate(tt.s, tt.width)); w > tt.width {
			t.Errorf("truncate(%q, %d) is %d wide", tt.s, tt.width, w)
		}
	}
}

func TestStreamTable(t *testing.T) {
	schema := types.Schema{{Name: "name", Type: types.StringType}, {Name: "n", Type: types.BigIntType}}
	var b bytes.Buffer
	st := newStreamTable(&b, schema)
	st.begin()
	st.add(session.Change{Op: exec.Insert, Row: []types.Value{"a", int64(1)}})
	st.add(session.Change{Op: exec.UpdateBefore, Row: []types.Value{"a", int64(1)}})
	st.add(session.Change{Op: exec.UpdateAfter, Row: []types.Value{"a", int64(2)}})
	st.add(session.Change{Op: exec.Delete, Row: []types.Value{strings.Repeat("x", 40), nil}})
	st.end()
	want := `+----+--------------------------------+----------------------+
| op | name                           |                    n |
+----+--------------------------------+----------------------+
| +I | a                              |                    1 |
| -U | a                              |                    1 |
| +U | a                              |                    2 |
| -D | xxxxxxxxxxxxxxxxxxxxxxxxxxx... |               <NULL> |
+----+--------------------------------+----------------------+
Received a total of 4 rows
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestLiveLinesFitTheScreen(t *testing.T) {
	schema := types.Schema{{Name: "id", Type: types.BigIntType}, {Name: "s", Type: types.StringType}}
	var rows [][]types.Value
	for i := range 50 {
		rows = append(rows, []types.Value{int64(i), strings.Repeat("y", 100)})
	}
	lines := liveLines(schema, rows, 77, 40, 20)
	if len(lines) > 20 {
		t.Errorf("%d lines on a screen of 20", len(lines))
	}
	for _, l := range lines {
		if displayWidth(l) >= 40 {
			t.Errorf("line %q is wider than the screen", l)
		}
	}
	mustContain(t, "drawing", strings.Join(lines, "\n"), "... 36 more rows", "50 rows, 77 changes so far")
}

func TestEraseLines(t *testing.T) {
	if eraseLines(0) != "" {
		t.Error("erasing nothing wrote something")
	}
	if got := eraseLines(3); got != "\x1b[3A\r\x1b[J" {
		t.Errorf("eraseLines(3) = %q", got)
	}
}
