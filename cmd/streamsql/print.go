package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/chzyer/readline/runes"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/types"
)

// preformatted is a value as the server already formatted it (types.Format):
// a row of `streamsql --server` shows it as it is, under its column's type.
type preformatted string

// nullText is how a NULL shows in a table cell, as in Flink's SQL client.
const nullText = "<NULL>"

// maxStreamWidth caps the width of a column in a streamed table, whose
// widths are fixed before any row is seen (Flink's default
// 'sql-client.display.max-column-width'). Longer values are cut with "...".
const maxStreamWidth = 30

// printResult writes the result of a statement other than a streamed
// SELECT: a message, a boxed table or preformatted text.
func printResult(w io.Writer, r *session.Result) {
	switch r.Kind {
	case session.ResultRows:
		writeTable(w, r.Columns, r.Rows)
		fmt.Fprintln(w, rowsInSet(len(r.Rows)))
	case session.ResultText:
		fmt.Fprint(w, r.Text)
		if !strings.HasSuffix(r.Text, "\n") {
			fmt.Fprintln(w)
		}
	default:
		if r.Message != "" {
			fmt.Fprintln(w, r.Message)
		}
	}
}

// rowsInSet is the line after a table: "Empty set", "1 row in set" or
// "N rows in set".
func rowsInSet(n int) string {
	switch n {
	case 0:
		return "Empty set"
	case 1:
		return "1 row in set"
	}
	return fmt.Sprintf("%d rows in set", n)
}

// cellText is how a value shows in a table cell: NULL as <NULL>, others as
// types.Format prints them, with line breaks and tabs escaped so a row stays
// on one line.
func cellText(t types.T, v types.Value) (s string) {
	if v == nil {
		return nullText
	}
	if p, ok := v.(preformatted); ok {
		return escapeControl(string(p))
	}
	defer func() {
		// A value of an unexpected Go type is an engine bug; show it rather
		// than take the shell down.
		if recover() != nil {
			s = fmt.Sprint(v)
		}
	}()
	return escapeControl(types.Format(t, v))
}

var controlEscaper = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

func escapeControl(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return controlEscaper.Replace(s)
}

// displayWidth is the number of terminal cells s takes (wide characters
// count two).
func displayWidth(s string) int { return runes.WidthAll([]rune(s)) }

// truncate cuts s to at most width cells, ending it with "..." when cut.
func truncate(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	if width <= 3 {
		return strings.Repeat(".", width)
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := runes.Width(r)
		if w+rw > width-3 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	b.WriteString("...")
	return b.String()
}

// column is how one column of a table is laid out.
type column struct {
	name  string
	width int
	right bool // numbers align right
}

// layout sizes the columns to fit their names and the given cells.
func layout(schema types.Schema, cells [][]string) []column {
	cols := make([]column, len(schema))
	for i, c := range schema {
		cols[i] = column{name: c.Name, width: displayWidth(c.Name), right: c.Type.IsNumeric()}
	}
	for _, row := range cells {
		for i, s := range row {
			if w := displayWidth(s); w > cols[i].width {
				cols[i].width = w
			}
		}
	}
	return cols
}

// formatRows turns rows into cell texts.
func formatRows(schema types.Schema, rows [][]types.Value) [][]string {
	out := make([][]string, len(rows))
	for i, row := range rows {
		out[i] = formatRow(schema, row)
	}
	return out
}

func formatRow(schema types.Schema, row []types.Value) []string {
	cells := make([]string, len(schema))
	for j, c := range schema {
		var v types.Value
		if j < len(row) {
			v = row[j]
		}
		cells[j] = cellText(c.Type, v)
	}
	return cells
}

// border is a table's horizontal rule: +------+----+.
func border(cols []column) string {
	var b strings.Builder
	b.WriteByte('+')
	for _, c := range cols {
		b.WriteString(strings.Repeat("-", c.width+2))
		b.WriteByte('+')
	}
	return b.String()
}

// line is one row of a table: | a    |  1 |. Names in the header align as
// their column's values do.
func line(cols []column, cells []string) string {
	var b strings.Builder
	b.WriteByte('|')
	for i, c := range cols {
		s := truncate(cells[i], c.width)
		pad := strings.Repeat(" ", c.width-displayWidth(s))
		b.WriteByte(' ')
		if c.right {
			b.WriteString(pad + s)
		} else {
			b.WriteString(s + pad)
		}
		b.WriteString(" |")
	}
	return b.String()
}

func header(cols []column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return names
}

// tableLines renders a whole table as lines, without the trailing count.
// An empty result still shows its header, as Flink's tableau does.
func tableLines(schema types.Schema, rows [][]types.Value) []string {
	cells := formatRows(schema, rows)
	cols := layout(schema, cells)
	rule := border(cols)
	out := []string{rule, line(cols, header(cols)), rule}
	for _, r := range cells {
		out = append(out, line(cols, r))
	}
	if len(cells) > 0 {
		out = append(out, rule)
	}
	return out
}

// writeTable writes a boxed table.
func writeTable(w io.Writer, schema types.Schema, rows [][]types.Value) {
	for _, l := range tableLines(schema, rows) {
		fmt.Fprintln(w, l)
	}
}

// typeWidth is the widest text a value of t prints as, capped at
// maxStreamWidth: the column width of a streamed table.
func typeWidth(t types.T) int {
	w := maxStreamWidth
	switch t.Kind {
	case types.Boolean:
		w = 5
	case types.TinyInt:
		w = 4
	case types.SmallInt:
		w = 6
	case types.Int:
		w = 11
	case types.BigInt, types.Float, types.Double:
		w = 20
	case types.Decimal:
		w = t.Precision + 2
	case types.Date:
		w = 10
	case types.Time:
		w = 8 + fraction(t.Precision)
	case types.Timestamp:
		w = 19 + fraction(t.Precision)
	}
	return max(min(w, maxStreamWidth), len(nullText))
}

func fraction(p int) int {
	if p == 0 {
		return 0
	}
	return p + 1
}

// streamTable prints a changelog as it arrives (result modes tableau and
// changelog): a header, then one line per change with its op (+I, -U, +U,
// -D). Column widths come from the types, as nothing is known of the rows
// yet. It is not safe for concurrent use.
type streamTable struct {
	w      io.Writer
	schema types.Schema
	cols   []column
	n      int
}

func newStreamTable(w io.Writer, schema types.Schema) *streamTable {
	cols := []column{{name: "op", width: 2}}
	for _, c := range schema {
		cols = append(cols, column{name: c.Name, width: max(displayWidth(c.Name), typeWidth(c.Type)), right: c.Type.IsNumeric()})
	}
	return &streamTable{w: w, schema: schema, cols: cols}
}

// begin prints the header.
func (s *streamTable) begin() {
	rule := border(s.cols)
	fmt.Fprintf(s.w, "%s\n%s\n%s\n", rule, line(s.cols, header(s.cols)), rule)
}

// add prints one change.
func (s *streamTable) add(c session.Change) {
	cells := append([]string{c.Op.String()}, formatRow(s.schema, c.Row)...)
	fmt.Fprintln(s.w, line(s.cols, cells))
	s.n++
}

// end closes the table and says how many changes it showed.
func (s *streamTable) end() {
	if s.n > 0 {
		fmt.Fprintln(s.w, border(s.cols))
	}
	switch s.n {
	case 0:
		fmt.Fprintln(s.w, "Received a total of 0 rows")
	case 1:
		fmt.Fprintln(s.w, "Received a total of 1 row")
	default:
		fmt.Fprintf(s.w, "Received a total of %d rows\n", s.n)
	}
}
