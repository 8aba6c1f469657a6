package functions

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Flink's JSON functions. The SQL syntax is rewritten into plain calls
// (package sql) whose clauses are literal strings:
//
//	s IS JSON [kind]                    "IS JSON"(s, 'VALUE'|'SCALAR'|'ARRAY'|'OBJECT')
//	JSON_EXISTS(s, p [x ON ERROR])      JSON_EXISTS(s, p[, 'FALSE'|'TRUE'|'UNKNOWN'|'ERROR'])
//	JSON_VALUE(s, p [RETURNING t] [e ON EMPTY] [e ON ERROR])
//	                                    JSON_VALUE(s, p[, 'T|EMPTY|ERROR', empty default, error default])
//	JSON_QUERY(s, p [wrapper] [e ON EMPTY] [e ON ERROR])
//	                                    JSON_QUERY(s, p[, 'WRAPPER|EMPTY|ERROR'])
//	JSON_OBJECT(KEY k VALUE v ... [x ON NULL])
//	                                    JSON_OBJECT('NULL|raw', k, v, ...)
//	JSON_ARRAY(v ... [x ON NULL])       JSON_ARRAY('ABSENT|raw', v, ...)
//
// where raw has one character a value, 1 for a value that is itself a
// JSON_OBJECT or JSON_ARRAY call (inserted as JSON, not as a string).
// A literal path is parsed once, when the call is resolved; a path that
// does not parse is then an error (ErrInvalidArgument). A path computed
// per row is parsed per row (the last one kept), and one that does not
// parse is an error of that row, handled by ON ERROR.

func init() {
	f := register("IS JSON", func(args []types.T) (Resolved, error) { return resolveIsJSON(argsOf(args)) })
	f.resolveArgs = resolveIsJSON
	f = register("JSON_EXISTS", func(args []types.T) (Resolved, error) { return resolveJSONExists(argsOf(args)) })
	f.resolveArgs = resolveJSONExists
	f = register("JSON_VALUE", func(args []types.T) (Resolved, error) { return resolveJSONValue(argsOf(args)) })
	f.resolveArgs = resolveJSONValue
	f = register("JSON_QUERY", func(args []types.T) (Resolved, error) { return resolveJSONQuery(argsOf(args)) })
	f.resolveArgs = resolveJSONQuery
	register("JSON_STRING", resolveJSONString)
	f = register("JSON_OBJECT", func(args []types.T) (Resolved, error) { return resolveJSONObject(argsOf(args)) })
	f.resolveArgs = resolveJSONObject
	f = register("JSON_ARRAY", func(args []types.T) (Resolved, error) { return resolveJSONArray(argsOf(args)) })
	f.resolveArgs = resolveJSONArray
}

// constString is a literal string argument (a clause of the syntax).
func constString(name string, a Arg, what string) (string, error) {
	s, ok := a.Value.(string)
	if !a.Const || !ok {
		return "", fmt.Errorf("%s: %s must be a literal string", name, what)
	}
	return s, nil
}

func isStringArg(t types.T) bool { return t.Kind == types.String || t.Kind == types.Null }

func resolveIsJSON(args []Arg) (Resolved, error) {
	if len(args) != 2 {
		return Resolved{}, fmt.Errorf("IS JSON takes one value")
	}
	kind, err := constString("IS JSON", args[1], "the kind")
	if err != nil {
		return Resolved{}, err
	}
	var want byte
	switch kind {
	case "VALUE":
	case "SCALAR":
		want = 's'
	case "ARRAY":
		want = 'a'
	case "OBJECT":
		want = 'o'
	default:
		return Resolved{}, fmt.Errorf("IS JSON %s: the kind is one of VALUE, SCALAR, ARRAY, OBJECT", kind)
	}
	if !isStringArg(args[0].Type) {
		return Resolved{}, fmt.Errorf("IS JSON takes a STRING, not %s", args[0].Type)
	}
	rt := types.BooleanType
	rt.NotNull = true
	k := folding(rt, func(ctx *Context, vs []Vec, n int) (Vec, error) {
		s := newStrArg(vs[0])
		b := array.NewBooleanBuilder(ctx.mem())
		defer b.Release()
		b.Reserve(n)
		for i := range n {
			if !isValid(vs[0], i) {
				b.UnsafeAppend(false)
				continue
			}
			k := jsonKind(s.at(i))
			b.UnsafeAppend(k != 0 && (want == 0 || k == want))
		}
		return Vec{Type: rt, Array: b.NewArray()}, nil
	})
	return Resolved{Ret: rt, ArgTypes: []types.T{types.StringType, types.StringType}, Kernel: k, Infallible: true}, nil
}

// pathOf parses a literal path once; for a path computed per row it
// returns nil and rowPath parses each row's.
func pathOf(name string, a Arg) (*jsonPath, error) {
	if !isStringArg(a.Type) {
		return nil, fmt.Errorf("%s: the path must be a STRING, not %s", name, a.Type)
	}
	if !a.Const || a.Value == nil {
		return nil, nil
	}
	p, err := parseJSONPath(a.Value.(string))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%w)", name, err, ErrInvalidArgument)
	}
	return p, nil
}

// rowPath gives each row's path: the literal one, or the row's parsed
// (the last one parsed kept for the next row).
type rowPath struct {
	fixed *jsonPath
	arg   strArg
	last  *jsonPath
	err   error
	text  string
}

func newRowPath(fixed *jsonPath, v Vec) *rowPath {
	return &rowPath{fixed: fixed, arg: newStrArg(v)}
}

func (r *rowPath) at(i int) (*jsonPath, error) {
	if r.fixed != nil {
		return r.fixed, nil
	}
	s := r.arg.at(i)
	if r.last == nil && r.err == nil || s != r.text {
		r.text = strings.Clone(s)
		r.last, r.err = parseJSONPath(r.text)
	}
	return r.last, r.err
}

// jsonAt applies a row's path to its JSON text: the value found (nil:
// empty) or an error, which names the function.
func jsonAt(name string, dec *jsonDecoder, doc string, p *jsonPath, perr error) (any, error) {
	if perr != nil {
		return nil, fmt.Errorf("%s: %w", name, perr)
	}
	var v any
	var err, bad error
	if p.wild {
		if v, bad = dec.parse(doc); bad == nil {
			v, err = p.eval(v)
		}
	} else {
		v, err, bad = dec.find(doc, p)
	}
	if bad != nil {
		return nil, fmt.Errorf("%s: %s is not JSON: %v", name, quoteValue(doc), bad)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

func resolveJSONExists(args []Arg) (Resolved, error) {
	const name = "JSON_EXISTS"
	if len(args) < 2 || len(args) > 3 {
		return Resolved{}, fmt.Errorf("%s takes a value and a path", name)
	}
	if !isStringArg(args[0].Type) {
		return Resolved{}, fmt.Errorf("%s takes a STRING, not %s", name, args[0].Type)
	}
	p, err := pathOf(name, args[1])
	if err != nil {
		return Resolved{}, err
	}
	onError := "FALSE"
	if len(args) == 3 {
		if onError, err = constString(name, args[2], "ON ERROR"); err != nil {
			return Resolved{}, err
		}
		switch onError {
		case "FALSE", "TRUE", "UNKNOWN", "ERROR":
		default:
			return Resolved{}, fmt.Errorf("%s: %s ON ERROR is not one of TRUE, FALSE, UNKNOWN, ERROR", name, onError)
		}
	}
	rt := types.BooleanType
	k := strict(rt, func(ctx *Context, vs []Vec, n int) (Vec, error) {
		s := newStrArg(vs[0])
		rp := newRowPath(p, vs[1])
		dec := newJSONDecoder()
		b := array.NewBooleanBuilder(ctx.mem())
		defer b.Release()
		b.Reserve(n)
		for i := range n {
			if !isValid(vs[0], i) || !isValid(vs[1], i) {
				b.UnsafeAppendBoolToBitmap(false)
				continue
			}
			path, perr := rp.at(i)
			v, err := jsonAt(name, dec, s.at(i), path, perr)
			if err != nil {
				switch onError {
				case "FALSE":
					b.UnsafeAppend(false)
				case "TRUE":
					b.UnsafeAppend(true)
				case "UNKNOWN":
					b.UnsafeAppendBoolToBitmap(false)
				default:
					return Vec{}, err
				}
				continue
			}
			b.UnsafeAppend(v != nil)
		}
		return Vec{Type: rt, Array: b.NewArray()}, nil
	})
	return Resolved{Ret: rt, ArgTypes: argTypesOf(args, types.StringType, types.StringType, types.StringType), Kernel: k}, nil
}

// argTypesOf is want[:len(args)].
func argTypesOf(args []Arg, want ...types.T) []types.T { return want[:len(args)] }

// behavior is an ON EMPTY or ON ERROR clause.
type behavior string

// fallbackRow is a row whose value is that of a clause: empty, or an error.
type fallbackRow struct {
	i     int
	empty bool
	err   error
}

func resolveJSONValue(args []Arg) (Resolved, error) {
	const name = "JSON_VALUE"
	if len(args) != 2 && len(args) != 5 {
		return Resolved{}, fmt.Errorf("%s takes a value and a path", name)
	}
	if !isStringArg(args[0].Type) {
		return Resolved{}, fmt.Errorf("%s takes a STRING, not %s", name, args[0].Type)
	}
	p, err := pathOf(name, args[1])
	if err != nil {
		return Resolved{}, err
	}
	rt := types.StringType
	onEmpty, onError := behavior("NULL"), behavior("NULL")
	argTypes := []types.T{types.StringType, types.StringType}
	if len(args) == 5 {
		spec, err := constString(name, args[2], "the clauses")
		if err != nil {
			return Resolved{}, err
		}
		parts := strings.Split(spec, "|")
		if len(parts) != 3 {
			return Resolved{}, fmt.Errorf("%s: bad clauses %q", name, spec)
		}
		if parts[0] != "" {
			if rt, err = types.Parse(parts[0]); err != nil {
				return Resolved{}, fmt.Errorf("%s: RETURNING %s: %v", name, parts[0], err)
			}
			rt.NotNull = false
			switch {
			case rt.Kind == types.String, rt.Kind == types.Boolean, rt.IsInteger(),
				rt.Kind == types.Float, rt.Kind == types.Double, rt.Kind == types.Decimal:
			default:
				return Resolved{}, fmt.Errorf("%s: RETURNING %s is not supported (STRING, BOOLEAN and the numeric types are)", name, rt)
			}
		}
		onEmpty, onError = behavior(parts[1]), behavior(parts[2])
		for _, b := range []behavior{onEmpty, onError} {
			if b != "NULL" && b != "ERROR" && b != "DEFAULT" {
				return Resolved{}, fmt.Errorf("%s: bad clause %s", name, b)
			}
		}
		// A default keeps its type: it is cast to the result's only on
		// the rows that take it (a cast that fails there is an error of
		// ON EMPTY's fallback, or the error of ON ERROR).
		argTypes = append(argTypes, types.StringType, args[3].Type, args[4].Type)
		for slot := 3; slot <= 4; slot++ {
			if t := args[slot].Type; t.Kind != types.Null && !CanCast(t, rt) {
				return Resolved{}, fmt.Errorf("%s: a DEFAULT of type %s cannot be RETURNING %s", name, t, rt)
			}
		}
	}
	var toRet Kernel
	if rt.Kind != types.String {
		if toRet, err = TryCast(types.StringType, rt); err != nil {
			return Resolved{}, fmt.Errorf("%s: RETURNING %s: %v", name, rt, err)
		}
	}
	k := func(ctx *Context, vs []Vec, n int) (Vec, error) {
		if vs[0].IsNull() || vs[1].IsNull() {
			return nullResult(ctx, rt, vs[:2], n), nil
		}
		s := newStrArg(vs[0])
		rp := newRowPath(p, vs[1])
		dec := newJSONDecoder()
		o := newStrOut(ctx.mem(), types.StringType, n, n*8)
		o.withValidity(andValidity(ctx.mem(), vs[:2], n))
		var fb []fallbackRow
		var dst []byte
		for i := range n {
			if !isValid(vs[0], i) || !isValid(vs[1], i) {
				o.endRow()
				continue
			}
			path, perr := rp.at(i)
			v, err := jsonAt(name, dec, s.at(i), path, perr)
			switch {
			case err != nil:
				fb = append(fb, fallbackRow{i: i, err: err})
			case v == nil || (!path.strict && !isJSONScalar(v)):
				fb = append(fb, fallbackRow{i: i, empty: true})
			case !isJSONScalar(v):
				dst = appendJSON(dst[:0], v)
				fb = append(fb, fallbackRow{i: i, err: fmt.Errorf("%s: %s requires a scalar value, and the value is %s", name, path.describe(), quoteValue(string(dst)))})
			default:
				o.buf = appendScalarText(o.buf, v)
				o.endRow()
				continue
			}
			o.setNullRow(i, n)
			o.endRow()
		}
		sv := o.finish()
		out := sv
		if toRet != nil {
			cv, err := toRet(ctx, []Vec{sv}, n)
			if err != nil {
				sv.Release()
				return Vec{}, err
			}
			// A value that does not cast is an error of its row.
			for i := range n {
				if sv.Array.IsValid(i) && cv.Array.IsNull(i) {
					fb = append(fb, fallbackRow{i: i, err: fmt.Errorf("%s: cannot cast %s to %s", name, quoteValue(sv.Array.(*array.String).Value(i)), rt)})
				}
			}
			sv.Release()
			out = cv
		}
		if len(fb) == 0 {
			return out, nil
		}
		defer out.Release()
		// Rows of the clauses: the first error that ERROR asks for fails
		// the batch, the others take NULL or their default.
		byRow := make(map[int]fallbackRow, len(fb))
		for _, f := range fb {
			if _, seen := byRow[f.i]; !seen {
				byRow[f.i] = f
			}
		}
		b := array.NewBuilder(ctx.mem(), rt.ArrowType())
		defer b.Release()
		b.Reserve(n)
		for i := range n {
			f, ok := byRow[i]
			if !ok {
				types.AppendValue(b, out.ValueAt(i))
				continue
			}
			bh, slot := onError, 4
			if f.empty {
				bh, slot = onEmpty, 3
			}
			if bh == "DEFAULT" {
				d, err := defaultAs(ctx, vs[slot], i, rt)
				if err == nil {
					types.AppendValue(b, d)
					continue
				}
				if !f.empty {
					return Vec{}, fmt.Errorf("%s: the DEFAULT of ON ERROR: %w", name, err)
				}
				// A default of ON EMPTY that fails is an error: ON ERROR's.
				f, bh, slot = fallbackRow{i: i, err: fmt.Errorf("%s: the DEFAULT of ON EMPTY: %w", name, err)}, onError, 4
				if bh == "DEFAULT" {
					d, err := defaultAs(ctx, vs[slot], i, rt)
					if err != nil {
						return Vec{}, fmt.Errorf("%s: the DEFAULT of ON ERROR: %w", name, err)
					}
					types.AppendValue(b, d)
					continue
				}
			}
			switch bh {
			case "NULL":
				b.AppendNull()
			default:
				if f.empty {
					return Vec{}, fmt.Errorf("%s: the path %s found nothing in %s (ERROR ON EMPTY)", name, quoteValue(pathText(rp, i)), quoteValue(s.at(i)))
				}
				return Vec{}, f.err
			}
		}
		return Vec{Type: rt, Array: b.NewArray()}, nil
	}
	return Resolved{Ret: rt, ArgTypes: argTypes, Kernel: folding(rt, k)}, nil
}

// defaultAs is row i of a DEFAULT cast to the result type t.
func defaultAs(ctx *Context, v Vec, i int, t types.T) (types.Value, error) {
	x := v.ValueAt(i)
	if x == nil || v.Type.Equal(t) || v.Type.Kind == types.Null {
		return x, nil
	}
	k, err := Cast(v.Type, t)
	if err != nil {
		return nil, err
	}
	r, err := k(ctx, []Vec{ConstVec(v.Type, x)}, 1)
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.ValueAt(0), nil
}

func pathText(rp *rowPath, i int) string {
	if rp.fixed != nil {
		return rp.fixed.text
	}
	return rp.arg.at(i)
}

func resolveJSONQuery(args []Arg) (Resolved, error) {
	const name = "JSON_QUERY"
	if len(args) != 2 && len(args) != 3 {
		return Resolved{}, fmt.Errorf("%s takes a value and a path", name)
	}
	if !isStringArg(args[0].Type) {
		return Resolved{}, fmt.Errorf("%s takes a STRING, not %s", name, args[0].Type)
	}
	p, err := pathOf(name, args[1])
	if err != nil {
		return Resolved{}, err
	}
	wrapper, onEmpty, onError := "WITHOUT", behavior("NULL"), behavior("NULL")
	if len(args) == 3 {
		spec, err := constString(name, args[2], "the clauses")
		if err != nil {
			return Resolved{}, err
		}
		parts := strings.Split(spec, "|")
		if len(parts) != 3 {
			return Resolved{}, fmt.Errorf("%s: bad clauses %q", name, spec)
		}
		wrapper, onEmpty, onError = parts[0], behavior(parts[1]), behavior(parts[2])
		switch wrapper {
		case "WITHOUT", "CONDITIONAL", "UNCONDITIONAL":
		default:
			return Resolved{}, fmt.Errorf("%s: bad wrapper %s", name, wrapper)
		}
		for _, b := range []behavior{onEmpty, onError} {
			switch b {
			case "NULL", "ERROR", "EMPTY ARRAY", "EMPTY OBJECT":
			default:
				return Resolved{}, fmt.Errorf("%s: bad clause %s", name, b)
			}
		}
	}
	rt := types.StringType
	k := strict(rt, func(ctx *Context, vs []Vec, n int) (Vec, error) {
		s := newStrArg(vs[0])
		rp := newRowPath(p, vs[1])
		dec := newJSONDecoder()
		o := newStrOut(ctx.mem(), rt, n, n*16)
		o.withValidity(andValidity(ctx.mem(), vs, n))
		for i := range n {
			if !isValid(vs[0], i) || !isValid(vs[1], i) {
				o.endRow()
				continue
			}
			path, perr := rp.at(i)
			v, err := jsonAt(name, dec, s.at(i), path, perr)
			var bh behavior
			if err == nil && v != nil {
				switch wrapper {
				case "UNCONDITIONAL":
					v = []any{v}
				case "CONDITIONAL":
					if _, arr := v.([]any); !arr {
						v = []any{v}
					}
				}
			}
			switch {
			case err != nil:
				bh = onError
			case v == nil || (!path.strict && isJSONScalar(v)):
				bh = onEmpty
				err = fmt.Errorf("%s: the path %s found nothing in %s (ERROR ON EMPTY)", name, quoteValue(path.text), quoteValue(s.at(i)))
			case isJSONScalar(v):
				bh = onError
				err = fmt.Errorf("%s: %s requires an array or object value, and the value is %s", name, path.describe(), quoteValue(string(appendJSON(nil, v))))
			default:
				o.buf = appendJSON(o.buf, v)
				o.endRow()
				continue
			}
			switch bh {
			case "NULL":
				o.setNullRow(i, n)
			case "EMPTY ARRAY":
				o.buf = append(o.buf, "[]"...)
			case "EMPTY OBJECT":
				o.buf = append(o.buf, "{}"...)
			default:
				o.release()
				return Vec{}, err
			}
			o.endRow()
		}
		return o.finish(), nil
	})
	return Resolved{Ret: rt, ArgTypes: argTypesOf(args, types.StringType, types.StringType, types.StringType), Kernel: k}, nil
}

// jsonArgKind is how a value becomes JSON: 's' a quoted string, 'n' a
// number's text, 'b' a boolean, 'j' JSON text inserted as it is, '0' NULL.
func jsonArgKind(name string, t types.T, raw bool) (byte, error) {
	switch {
	case raw:
		return 'j', nil
	case t.Kind == types.Null:
		return '0', nil
	case t.Kind == types.String:
		return 's', nil
	case t.Kind == types.Boolean:
		return 'b', nil
	case t.IsInteger(), t.Kind == types.Float, t.Kind == types.Double, t.Kind == types.Decimal:
		return 'n', nil
	}
	return 0, fmt.Errorf("%s: a value of type %s is not supported (strings, numbers and booleans are): %w", name, t, ErrUnsupportedType)
}

// jsonArgTypes is the STRING each value is cast to (a BOOLEAN stays).
func jsonArgType(kind byte, t types.T) types.T {
	switch kind {
	case 'b', '0':
		return t
	}
	return types.StringType
}

// appendJSONArg appends row i of a value as JSON; false when it is NULL.
func appendJSONArg(dst []byte, kind byte, v Vec, s *strArg, i int) ([]byte, bool) {
	if kind == '0' || !isValid(v, i) {
		return dst, false
	}
	switch kind {
	case 's':
		return appendJSONString(dst, s.at(i)), true
	case 'b':
		return fmt.Append(dst, boolAt(v, i)), true
	}
	return append(dst, s.at(i)...), true
}

func resolveJSONString(args []types.T) (Resolved, error) {
	if err := nargs("JSON_STRING", args, 1, 1); err != nil {
		return Resolved{}, err
	}
	kind, err := jsonArgKind("JSON_STRING", args[0], false)
	if err != nil {
		return Resolved{}, err
	}
	rt := types.StringType
	k := strict(rt, func(ctx *Context, vs []Vec, n int) (Vec, error) {
		var s strArg
		if kind != 'b' && kind != '0' {
			s = newStrArg(vs[0])
		}
		o := newStrOut(ctx.mem(), rt, n, n*8)
		o.withValidity(andValidity(ctx.mem(), vs, n))
		for i := range n {
			if isValid(vs[0], i) {
				o.buf, _ = appendJSONArg(o.buf, kind, vs[0], &s, i)
			}
			o.endRow()
		}
		return o.finish(), nil
	})
	return Resolved{Ret: rt, ArgTypes: []types.T{jsonArgType(kind, args[0])}, Kernel: k}, nil
}

// constructorMode reads the first argument of JSON_OBJECT and JSON_ARRAY:
// the ON NULL behavior and which values are JSON.
func constructorMode(name string, args []Arg, values int) (absent bool, raw string, err error) {
	if len(args) == 0 {
		return false, "", fmt.Errorf("%s: missing its ON NULL clause", name)
	}
	mode, err := constString(name, args[0], "ON NULL")
	if err != nil {
		return false, "", err
	}
	on, raw, _ := strings.Cut(mode, "|")
	if on != "NULL" && on != "ABSENT" {
		return false, "", fmt.Errorf("%s: %s ON NULL is not NULL or ABSENT", name, on)
	}
	if len(raw) != values {
		raw = strings.Repeat("0", values)
	}
	return on == "ABSENT", raw, nil
}

func resolveJSONObject(args []Arg) (Resolved, error) {
	const name = "JSON_OBJECT"
	if len(args)%2 != 1 {
		return Resolved{}, fmt.Errorf("%s takes KEY k VALUE v pairs", name)
	}
	absent, raw, err := constructorMode(name, args, (len(args)-1)/2)
	if err != nil {
		return Resolved{}, err
	}
	kinds := make([]byte, len(args))
	argTypes := make([]types.T, len(args))
	argTypes[0] = types.StringType
	for j := 1; j < len(args); j += 2 {
		if !isStringArg(args[j].Type) {
			return Resolved{}, fmt.Errorf("%s: a key must be a STRING, not %s", name, args[j].Type)
		}
		if !args[j].Type.NotNull {
			// As Flink's: a key that may be NULL is refused.
			return Resolved{}, fmt.Errorf("%s: the key at position %d must be a STRING NOT NULL, but is %s", name, j/2+1, args[j].Type)
		}
		argTypes[j] = types.StringType
		if kinds[j+1], err = jsonArgKind(name, args[j+1].Type, raw[j/2] == '1'); err != nil {
			return Resolved{}, err
		}
		argTypes[j+1] = jsonArgType(kinds[j+1], args[j+1].Type)
	}
	rt := types.StringType
	rt.NotNull = true
	k := folding(rt, func(ctx *Context, vs []Vec, n int) (Vec, error) {
		ss := make([]strArg, len(vs))
		for j := 1; j < len(vs); j++ {
			if kinds[j] != 'b' && kinds[j] != '0' {
				ss[j] = newStrArg(vs[j])
			}
		}
		o := newStrOut(ctx.mem(), rt, n, n*32)
		for i := range n {
			o.buf = append(o.buf, '{')
			first := true
			for j := 1; j < len(vs); j += 2 {
				if !isValid(vs[j], i) {
					o.release()
					return Vec{}, fmt.Errorf("%s: a key is NULL", name)
				}
				start := len(o.buf)
				if !first {
					o.buf = append(o.buf, ',')
				}
				o.buf = appendJSONString(o.buf, ss[j].at(i))
				o.buf = append(o.buf, ':')
				var ok bool
				if o.buf, ok = appendJSONArg(o.buf, kinds[j+1], vs[j+1], &ss[j+1], i); !ok {
					if absent {
						o.buf = o.buf[:start]
						continue
					}
					o.buf = append(o.buf, "null"...)
				}
				first = false
			}
			o.buf = append(o.buf, '}')
			o.endRow()
		}
		return o.finish(), nil
	})
	return Resolved{Ret: rt, ArgTypes: argTypes, Kernel: k}, nil
}

func resolveJSONArray(args []Arg) (Resolved, error) {
	const name = "JSON_ARRAY"
	absent, raw, err := constructorMode(name, args, len(args)-1)
	if err != nil {
		return Resolved{}, err
	}
	kinds := make([]byte, len(args))
	argTypes := make([]types.T, len(args))
	argTypes[0] = types.StringType
	for j := 1; j < len(args); j++ {
		if kinds[j], err = jsonArgKind(name, args[j].Type, raw[j-1] == '1'); err != nil {
			return Resolved{}, err
		}
		argTypes[j] = jsonArgType(kinds[j], args[j].Type)
	}
	rt := types.StringType
	rt.NotNull = true
	k := folding(rt, func(ctx *Context, vs []Vec, n int) (Vec, error) {
		ss := make([]strArg, len(vs))
		for j := 1; j < len(vs); j++ {
			if kinds[j] != 'b' && kinds[j] != '0' {
				ss[j] = newStrArg(vs[j])
			}
		}
		o := newStrOut(ctx.mem(), rt, n, n*16)
		for i := range n {
			o.buf = append(o.buf, '[')
			first := true
			for j := 1; j < len(vs); j++ {
				start := len(o.buf)
				if !first {
					o.buf = append(o.buf, ',')
				}
				var ok bool
				if o.buf, ok = appendJSONArg(o.buf, kinds[j], vs[j], &ss[j], i); !ok {
					if absent {
						o.buf = o.buf[:start]
						continue
					}
					o.buf = append(o.buf, "null"...)
				}
				first = false
			}
			o.buf = append(o.buf, ']')
			o.endRow()
		}
		return o.finish(), nil
	})
	return Resolved{Ret: rt, ArgTypes: argTypes, Kernel: k}, nil
}
