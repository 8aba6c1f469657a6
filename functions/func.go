package functions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Vec is a kernel argument or result: a column of n values, or one constant.
type Vec struct {
	Type  types.T
	Array arrow.Array // set when !Const; length n
	Const bool
	Value types.Value // when Const: the value of every row (nil = NULL)
}

// ConstVec returns a constant Vec of type t holding v (nil = NULL).
func ConstVec(t types.T, v types.Value) Vec { return Vec{Type: t, Const: true, Value: v} }

// ArrayVec returns a column Vec of type t over arr.
func ArrayVec(t types.T, arr arrow.Array) Vec { return Vec{Type: t, Array: arr} }

// IsNull reports whether v is the constant NULL.
func (v Vec) IsNull() bool { return v.Const && v.Value == nil }

// Release releases v's array, if any.
func (v Vec) Release() {
	if !v.Const && v.Array != nil {
		v.Array.Release()
	}
}

// ValueAt returns row i of v as a types.Value (allocating for strings); it
// is for tests and the control plane.
func (v Vec) ValueAt(i int) types.Value {
	if v.Const {
		return v.Value
	}
	return types.ValueAt(v.Array, i)
}

// Context carries what kernels need besides their arguments.
type Context struct {
	Mem memory.Allocator // allocator for results
	// Now is the statement's current time (CURRENT_TIMESTAMP etc.), micros since epoch.
	Now int64
	// Watermark is the current watermark of the operator evaluating the
	// expression (CURRENT_WATERMARK), micros since epoch, when HasWatermark.
	Watermark    int64
	HasWatermark bool
}

func (c *Context) mem() memory.Allocator {
	if c == nil || c.Mem == nil {
		return memory.DefaultAllocator
	}
	return c.Mem
}

// Kernel computes n results from args. Args are already of the resolved
// argument types. It returns a non-const Vec of length n (or a Const Vec
// when all args are Const). The caller releases the result's Array. Errors
// (overflow, division by zero, bad cast) are returned, naming the offending
// value.
type Kernel func(ctx *Context, args []Vec, n int) (Vec, error)

// Resolved is the outcome of resolving a function call against argument types.
type Resolved struct {
	Ret types.T
	// ArgTypes is the type each argument must be cast to first (== the input
	// type when no cast is needed). Casts are implicit ones (ImplicitCast).
	ArgTypes []types.T
	Kernel   Kernel
	// Infallible says Kernel never returns an error, whatever the values
	// of its arguments: evaluating it on rows a CASE, IF, COALESCE, AND or
	// OR does not let through can only cost time, never fail (comparisons,
	// logic, field access, the conditionals themselves).
	Infallible bool
}

// Arg describes one argument of a call at resolve time: its type, and its
// value when it is a literal (Const). Some functions' result types depend on
// a literal argument (ROUND(decimal, d)); see Func.ResolveArgs.
type Arg struct {
	Type  types.T
	Const bool
	Value types.Value
}

// Func is a scalar function or operator.
type Func struct {
	Name    string // upper case, e.g. "+", "=", "AND", "UPPER"
	Resolve func(args []types.T) (Resolved, error)
	// Volatile is set for functions of the statement time (Context.Now):
	// CURRENT_TIMESTAMP and friends, UNIX_TIMESTAMP(). They must not be
	// folded at plan time.
	Volatile bool
	// Refused is set for Flink's functions that are known but refused
	// (their types do not exist here): Resolve always fails, saying why;
	// SHOW FUNCTIONS does not list them.
	Refused bool
	// resolveArgs, when set, resolves knowing the literal arguments.
	resolveArgs func(args []Arg) (Resolved, error)
}

// ResolveArgs resolves f knowing which arguments are literals and their
// values. Planners should prefer it over Resolve: it gives Flink's result type
// where that depends on a literal (ROUND(DECIMAL(p, s), d)), and is the
// same as Resolve otherwise.
func (f *Func) ResolveArgs(args []Arg) (Resolved, error) {
	if f.resolveArgs != nil {
		return f.resolveArgs(args)
	}
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	return f.Resolve(ts)
}

var registry = map[string]*Func{}

func register(name string, resolve func(args []types.T) (Resolved, error)) *Func {
	if _, dup := registry[name]; dup {
		panic("functions: duplicate " + name)
	}
	f := &Func{Name: name, Resolve: resolve}
	registry[name] = f
	return f
}

// alias makes name resolve exactly as target does.
func alias(name, target string) {
	f, ok := registry[target]
	if !ok {
		panic("functions: alias of unknown " + target)
	}
	g := *f
	g.Name = name
	registry[name] = &g
}

// Lookup finds a function by name, case-insensitively.
func Lookup(name string) (*Func, bool) {
	f, ok := registry[strings.ToUpper(name)]
	return f, ok
}

// Names returns the names of all functions, sorted (for "did you mean" hints).
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Call resolves name against args (knowing which are constants) and
// evaluates it over n rows. It is a convenience for constant folding and
// tests; the executor resolves once and calls Eval or the kernel itself.
func Call(ctx *Context, name string, args []Vec, n int) (Vec, error) {
	f, ok := Lookup(name)
	if !ok {
		return Vec{}, fmt.Errorf("no function %s", name)
	}
	r, err := f.ResolveArgs(ArgsOf(args))
	if err != nil {
		return Vec{}, err
	}
	return Eval(ctx, r, args, n)
}

// ArgsOf describes Vecs as resolve-time arguments.
func ArgsOf(args []Vec) []Arg {
	as := make([]Arg, len(args))
	for i, a := range args {
		as[i] = Arg{Type: a.Type, Const: a.Const, Value: a.Value}
	}
	return as
}

// Eval casts args to r.ArgTypes where they differ and runs r's kernel.
func Eval(ctx *Context, r Resolved, args []Vec, n int) (Vec, error) {
	cast := make([]Vec, len(args))
	for i, a := range args {
		if a.Type.Equal(r.ArgTypes[i]) {
			cast[i] = a
			continue
		}
		k, err := Cast(a.Type, r.ArgTypes[i])
		if err != nil {
			releaseCasts(cast[:i], args)
			return Vec{}, err
		}
		c, err := k(ctx, []Vec{a}, n)
		if err != nil {
			releaseCasts(cast[:i], args)
			return Vec{}, err
		}
		cast[i] = c
	}
	res, err := r.Kernel(ctx, cast, n)
	releaseCasts(cast, args)
	return res, err
}

func releaseCasts(cast, args []Vec) {
	for i := range cast {
		if !cast[i].Const && cast[i].Array != args[i].Array {
			cast[i].Release()
		}
	}
}

func releaseAll(vs []Vec) {
	for _, v := range vs {
		v.Release()
	}
}

// allConst reports whether every arg is Const (true for no args).
func allConst(args []Vec) bool {
	for _, a := range args {
		if !a.Const {
			return false
		}
	}
	return true
}

// anyNullConst reports whether some arg is the constant NULL.
func anyNullConst(args []Vec) bool {
	for _, a := range args {
		if a.IsNull() {
			return true
		}
	}
	return false
}

// toArray expands a Const to an array of n rows (control plane only).
func toArray(mem memory.Allocator, v Vec, n int) arrow.Array {
	if !v.Const {
		v.Array.Retain()
		return v.Array
	}
	if v.Value == nil {
		return array.MakeArrayOfNull(mem, v.Type.ArrowType(), n)
	}
	b := array.NewBuilder(mem, v.Type.ArrowType())
	defer b.Release()
	b.Reserve(n)
	for range n {
		types.AppendValue(b, v.Value)
	}
	return b.NewArray()
}

// folding wraps a kernel that only handles the general case (some arg an
// array) so that all-Const calls are evaluated once and return a Const.
func folding(ret types.T, k Kernel) Kernel {
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		if !allConst(args) {
			return k(ctx, args, n)
		}
		mem := ctx.mem()
		arrs := make([]Vec, len(args))
		for i, a := range args {
			arrs[i] = Vec{Type: a.Type, Array: toArray(mem, a, 1)}
		}
		defer releaseAll(arrs)
		r, err := k(ctx, arrs, 1)
		if err != nil {
			return Vec{}, err
		}
		if r.Const {
			return r, nil
		}
		defer r.Release()
		return ConstVec(ret, types.ValueAt(r.Array, 0)), nil
	}
}

// strict wraps k for a function that returns NULL when any argument is
// NULL: a constant NULL argument short-circuits to an all-NULL result, and
// all-Const calls fold.
func strict(ret types.T, k Kernel) Kernel {
	f := folding(ret, k)
	return func(ctx *Context, args []Vec, n int) (Vec, error) {
		if anyNullConst(args) {
			return nullResult(ctx, ret, args, n), nil
		}
		return f(ctx, args, n)
	}
}

// nullResult is an all-NULL result of type t: Const when all args are.
func nullResult(ctx *Context, t types.T, args []Vec, n int) Vec {
	if allConst(args) {
		return ConstVec(t, nil)
	}
	return Vec{Type: t, Array: array.MakeArrayOfNull(ctx.mem(), t.ArrowType(), n)}
}

func errArgs(name string, args []types.T) error {
	ss := make([]string, len(args))
	for i, a := range args {
		ss[i] = a.String()
	}
	return fmt.Errorf("cannot apply %s to arguments of type (%s)", name, strings.Join(ss, ", "))
}

func nargs(name string, args []types.T, lo, hi int) error {
	if len(args) < lo || (hi >= 0 && len(args) > hi) {
		switch {
		case lo == hi:
			return fmt.Errorf("%s takes %d argument(s), got %d", name, lo, len(args))
		case hi < 0:
			return fmt.Errorf("%s takes at least %d argument(s), got %d", name, lo, len(args))
		default:
			return fmt.Errorf("%s takes %d to %d arguments, got %d", name, lo, hi, len(args))
		}
	}
	return nil
}

func repeatT(t types.T, n int) []types.T {
	out := make([]types.T, n)
	for i := range out {
		out[i] = t
	}
	return out
}

// nullable returns t with NotNull cleared unless all args are NOT NULL.
func nullableFrom(t types.T, args []types.T) types.T {
	t.NotNull = true
	for _, a := range args {
		if !a.NotNull {
			t.NotNull = false
		}
	}
	return t
}
