package functions

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/types"
)

// The test files in testdata/ hold cases of three kinds:
//
//	eval
//	FUNC(arg, ...)      one call per line
//	----
//	result : TYPE       or  error: message
//
//	resolve
//	FUNC(TYPE, ...)
//	----
//	RET <- (ARG TYPES)
//
// An eval argument is a literal: 1 (INT), 10000000000 (BIGINT), 1.50
// (DECIMAL(3, 2)), 1.5e0 (DOUBLE), 'abc' (STRING), TRUE, NULL (the NULL
// type), or a type followed by a literal, cast from its text: BIGINT 7,
// DATE '2020-01-01', INT NULL, INTERVAL DAY TO SECOND 1000 (milliseconds),
// INTERVAL YEAR TO MONTH 14 (months).
//
// Each call is evaluated with all arguments constant, then with the
// arguments as (sliced, partly NULL) arrays, and with the first or last
// argument as an array and the others constant; the results must agree,
// or the case prints MISMATCH.

// testNow is the statement time of eval cases: 2024-02-29 13:45:30.123456.
var testNow = int64(1709214330123456)

func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				switch d.Cmd {
				case "eval":
					out.WriteString(evalLine(t, line))
				case "resolve":
					out.WriteString(resolveLine(line))
				default:
					t.Fatalf("unknown command %s", d.Cmd)
				}
				out.WriteString("\n")
			}
			return out.String()
		})
	})
}

// splitCall splits "NAME(a, b)" into the name and top-level arguments.
func splitCall(line string) (string, []string, error) {
	open := strings.IndexByte(line, '(')
	if open < 0 || !strings.HasSuffix(line, ")") {
		return "", nil, fmt.Errorf("bad call %q", line)
	}
	name := strings.TrimSpace(line[:open])
	body := line[open+1 : len(line)-1]
	var args []string
	depth, inq, start := 0, false, 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\'':
			inq = !inq
		case inq:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			args = append(args, strings.TrimSpace(body[start:i]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(body[start:]); rest != "" || len(args) > 0 {
		args = append(args, rest)
	}
	return name, args, nil
}

func unquote(s string) string {
	return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
}

// parseLiteral turns one eval argument into a constant.
func parseLiteral(s string) (Vec, error) {
	up := strings.ToUpper(s)
	switch {
	case up == "NULL":
		return ConstVec(types.NullType, nil), nil
	case up == "TRUE" || up == "FALSE":
		return ConstVec(types.BooleanType, up == "TRUE"), nil
	case strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2:
		return ConstVec(types.StringType, unquote(s)), nil
	}
	for _, iv := range []struct {
		prefix string
		t      types.T
	}{{"INTERVAL DAY TO SECOND ", types.IntervalDayTimeType}, {"INTERVAL YEAR TO MONTH ", types.IntervalYearMonthType}} {
		if rest, ok := strings.CutPrefix(up, iv.prefix); ok {
			if rest == "NULL" {
				return ConstVec(iv.t, nil), nil
			}
			v, err := strconv.ParseInt(rest, 10, 64)
			return ConstVec(iv.t, v), err
		}
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if v >= -1<<31 && v < 1<<31 {
			return ConstVec(types.IntType, v), nil
		}
		return ConstVec(types.BigIntType, v), nil
	}
	if strings.ContainsAny(up, "E") {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return ConstVec(types.DoubleType, f), nil
		}
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && strings.Contains(s, ".") {
		digits := strings.TrimLeft(strings.TrimPrefix(strings.ReplaceAll(s, ".", ""), "-"), "0")
		scale := len(s) - strings.IndexByte(s, '.') - 1
		p := max(len(digits), scale, 1)
		n, err := types.ParseDecimal(s, p, scale)
		return ConstVec(types.DecimalOf(p, scale), n), err
	}
	// TYPE literal
	var typ, lit string
	if strings.HasSuffix(s, "'") {
		i := strings.IndexByte(s, '\'')
		typ, lit = strings.TrimSpace(s[:i]), s[i:]
	} else {
		i := strings.LastIndexByte(s, ' ')
		if i < 0 {
			return Vec{}, fmt.Errorf("bad literal %q", s)
		}
		typ, lit = s[:i], s[i+1:]
	}
	t, err := types.Parse(typ)
	if err != nil {
		return Vec{}, err
	}
	if strings.ToUpper(lit) == "NULL" {
		return ConstVec(t, nil), nil
	}
	if strings.HasPrefix(lit, "'") {
		lit = unquote(lit)
	}
	ctx := &Context{Mem: memory.DefaultAllocator}
	k, err := Cast(types.StringType, t)
	if err != nil {
		return Vec{}, err
	}
	v, err := k(ctx, []Vec{ConstVec(types.StringType, lit)}, 1)
	if err != nil {
		return Vec{}, err
	}
	return ConstVec(t, v.Value), nil
}

func formatValue(t types.T, v types.Value) string {
	if v == nil {
		return "NULL"
	}
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	return types.Format(t, v)
}

func evalLine(t *testing.T, line string) string {
	name, argText, err := splitCall(line)
	if err != nil {
		return "error: " + err.Error()
	}
	if name == "CAST" || name == "TRY_CAST" {
		// CAST(x AS type)
		body := line[len(name)+1 : len(line)-1]
		i := strings.LastIndex(body, " AS ")
		if i < 0 {
			return "error: CAST needs AS"
		}
		name, argText = name+" AS "+body[i+4:], []string{strings.TrimSpace(body[:i])}
	}
	args := make([]Vec, len(argText))
	for i, a := range argText {
		if args[i], err = parseLiteral(a); err != nil {
			return "bad literal: " + err.Error()
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := &Context{Mem: mem, Now: testNow}
	res, err := callTest(ctx, name, args, args, 1)
	var want string
	if err != nil {
		want = "error: " + err.Error()
	} else {
		if !res.Const {
			res.Release()
			return "kernel returned an array for constant arguments"
		}
		want = formatValue(res.Type, res.Value) + " : " + res.Type.Nullable().String()
	}
	if len(args) == 0 {
		return want
	}
	// Array modes: all arrays; first array; last array.
	modes := [][]bool{make([]bool, len(args)), make([]bool, len(args)), make([]bool, len(args))}
	for i := range args {
		modes[0][i] = true
	}
	modes[1][0] = true
	modes[2][len(args)-1] = true
	for m, asArray := range modes {
		if got := evalArrays(ctx, name, args, asArray); got != want {
			return fmt.Sprintf("MISMATCH in mode %d: const gives %s, arrays give %s", m, want, got)
		}
	}
	return want
}

// evalArrays evaluates with the chosen args as arrays [NULL, v, v] (a
// slice of a longer array) and checks rows 1 and 2.
func evalArrays(ctx *Context, name string, args []Vec, asArray []bool) string {
	mem := ctx.Mem
	in := make([]Vec, len(args))
	for i, a := range args {
		if !asArray[i] {
			in[i] = a
			continue
		}
		b := array.NewBuilder(mem, a.Type.ArrowType())
		types.AppendValue(b, a.Value)
		b.AppendNull()
		types.AppendValue(b, a.Value)
		types.AppendValue(b, a.Value)
		full := b.NewArray()
		b.Release()
		in[i] = Vec{Type: a.Type, Array: array.NewSlice(full, 1, 4)}
		full.Release()
	}
	defer releaseAll(in)
	res, err := callTest(ctx, name, args, in, 3)
	if err != nil {
		return "error: " + err.Error()
	}
	defer res.Release()
	if res.Const {
		return "kernel returned a constant for array arguments"
	}
	if res.Array.Len() != 3 {
		return fmt.Sprintf("result has %d rows, want 3", res.Array.Len())
	}
	if !arrow.TypeEqual(res.Array.DataType(), res.Type.ArrowType()) {
		return fmt.Sprintf("result array type %s does not match %s", res.Array.DataType(), res.Type)
	}
	v1 := formatValue(res.Type, types.ValueAt(res.Array, 1))
	v2 := formatValue(res.Type, types.ValueAt(res.Array, 2))
	if v1 != v2 {
		return fmt.Sprintf("rows differ: %s, %s", v1, v2)
	}
	return v1 + " : " + res.Type.Nullable().String()
}

func resolveLine(line string) string {
	name, argText, err := splitCall(line)
	if err != nil {
		return "error: " + err.Error()
	}
	ts := make([]types.T, len(argText))
	for i, a := range argText {
		if ts[i], err = types.Parse(a); err != nil {
			return "bad type: " + err.Error()
		}
	}
	f, ok := Lookup(name)
	if !ok {
		return "error: no function " + name
	}
	r, err := f.Resolve(ts)
	if err != nil {
		return "error: " + err.Error()
	}
	as := make([]string, len(r.ArgTypes))
	for i, a := range r.ArgTypes {
		as[i] = a.String()
	}
	return fmt.Sprintf("%s <- (%s)", r.Ret, strings.Join(as, ", "))
}

// callTest resolves name against the constant arguments lits (as the
// planner sees literals) and evaluates it over args; it also does "CAST AS
// type" and "TRY_CAST AS type".
func callTest(ctx *Context, name string, lits, args []Vec, n int) (Vec, error) {
	cast := Cast
	to, ok := strings.CutPrefix(name, "CAST AS ")
	if !ok {
		if to, ok = strings.CutPrefix(name, "TRY_CAST AS "); !ok {
			f, ok := Lookup(name)
			if !ok {
				return Vec{}, fmt.Errorf("no function %s", name)
			}
			r, err := f.ResolveArgs(ArgsOf(lits))
			if err != nil {
				return Vec{}, err
			}
			return Eval(ctx, r, args, n)
		}
		cast = TryCast
	}
	t, err := types.Parse(to)
	if err != nil {
		return Vec{}, err
	}
	k, err := cast(args[0].Type, t)
	if err != nil {
		return Vec{}, err
	}
	return k(ctx, args, n)
}
