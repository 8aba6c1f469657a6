package conntest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/connectors/internal/textparse"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// ParseSchema parses "a BIGINT, b DECIMAL(10, 2) NOT NULL, c STRING".
func ParseSchema(s string) (types.Schema, error) {
	var out types.Schema
	depth, start := 0, 0
	var parts []string
	for i, c := range s {
		switch c {
		case '(', '<':
			depth++
		case ')', '>':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, s[start:])
	for _, p := range parts {
		p = strings.TrimSpace(p)
		name, typ, ok := strings.Cut(p, " ")
		if !ok {
			return nil, fmt.Errorf("column %q has no type", p)
		}
		t, err := types.Parse(typ)
		if err != nil {
			return nil, err
		}
		out = append(out, types.Column{Name: name, Type: t})
	}
	return out, nil
}

// ParseOptions parses key=value lines; blank lines are skipped.
func ParseOptions(lines []string) (map[string]string, error) {
	opts := map[string]string{}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("option line %q is not key=value", l)
		}
		opts[strings.TrimSpace(k)] = v
	}
	return opts, nil
}

// ParseBatch builds a batch of schema from lines "+I[1, a, NULL]" (or
// without the op and brackets: "1, a, NULL", an insert). Values are
// separated by ", "; NULL is NULL.
func ParseBatch(schema types.Schema, lines []string) (exec.Batch, error) {
	var rows [][]types.Value
	var ops []exec.RowKind
	updating := false
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		op := exec.Insert
		for _, k := range []exec.RowKind{exec.Insert, exec.UpdateBefore, exec.UpdateAfter, exec.Delete} {
			if rest, ok := strings.CutPrefix(l, k.String()+"["); ok && strings.HasSuffix(rest, "]") {
				op, l = k, rest[:len(rest)-1]
				break
			}
		}
		updating = updating || op != exec.Insert
		ops = append(ops, op)
		row, err := parseRow(schema, l)
		if err != nil {
			return exec.Batch{}, fmt.Errorf("row %q %v", l, err)
		}
		rows = append(rows, row)
	}
	b := exec.Batch{Rec: arrowutil.FromRows(memory.DefaultAllocator, schema, rows)}
	if updating {
		b.Ops = ops
	}
	return b, nil
}

// Next calls src.Next until it returns a batch, io.EOF or another error,
// waiting through exec.ErrNoData for at most a minute.
func Next(ctx context.Context, src exec.Source) (exec.Batch, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := src.Next(ctx)
		if !errors.Is(err, exec.ErrNoData) || time.Now().After(deadline) {
			return b, err
		}
	}
}

// Drain reads src to its end and returns its rows as rowfmt prints them
// (columns of schema) and the number of batches.
func Drain(ctx context.Context, src exec.Source, schema types.Schema) ([]string, int, error) {
	var lines []string
	n := 0
	for {
		b, err := Next(ctx, src)
		if err == io.EOF {
			return lines, n, nil
		}
		if err != nil {
			return lines, n, err
		}
		n++
		lines = append(lines, rowfmt.Lines(schema, b)...)
		b.Rec.Release()
	}
}

// Reopen builds a new source of connector for spec, hands it to restore
// (which calls Restore or RestoreRescaled with earlier snapshots) and opens
// it. The caller closes the source; on error it is closed already.
func Reopen(ctx context.Context, connector string, spec exec.TableSpec, restore func(exec.Source) error) (exec.Source, error) {
	src, err := registry.Source(connector, spec)
	if err != nil {
		return nil, err
	}
	if err := restore(src); err != nil {
		src.Close()
		return nil, err
	}
	if err := src.Open(ctx); err != nil {
		src.Close()
		return nil, err
	}
	return src, nil
}

// parseRow parses the values of a row, "v1, v2, ...", a ROW value written
// as the row prints: (v1, v2, ...).
func parseRow(schema types.Schema, l string) ([]types.Value, error) {
	vals := splitValues(l)
	if len(vals) != len(schema) {
		return nil, fmt.Errorf("has %d values, the schema %d", len(vals), len(schema))
	}
	row := make([]types.Value, len(vals))
	for i, v := range vals {
		if v == "NULL" {
			continue
		}
		t := schema[i].Type
		if t.Kind == types.Row {
			inner, ok := strings.CutPrefix(v, "(")
			if inner, ok2 := strings.CutSuffix(inner, ")"); ok && ok2 {
				x, err := parseRow(types.Schema(t.Fields), inner)
				if err != nil {
					return nil, fmt.Errorf("column %s: %v", schema[i].Name, err)
				}
				row[i] = x
				continue
			}
			return nil, fmt.Errorf("column %s: a ROW is written (v1, v2, ...)", schema[i].Name)
		}
		x, err := textparse.Value(t, []byte(v))
		if err != nil {
			return nil, fmt.Errorf("column %s: %v", schema[i].Name, err)
		}
		row[i] = x
	}
	return row, nil
}

// splitValues splits l at the ", " outside parentheses.
func splitValues(l string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '(':
			depth++
		case l[i] == ')':
			depth--
		case depth == 0 && strings.HasPrefix(l[i:], ", "):
			out = append(out, l[from:i])
			from = i + 2
			i++
		}
	}
	return append(out, l[from:])
}
