package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/udf"
)

// IsBuiltinFunction reports whether name (any case) calls a built-in
// function or operator: a user function may not take such a name.
func IsBuiltinFunction(name string) bool {
	up := strings.ToUpper(name)
	if _, ok := functions.Lookup(up); ok {
		return true
	}
	if _, ok := funcAliases[strings.ToLower(name)]; ok {
		return true
	}
	switch strings.ToLower(name) {
	case "date_add", "date_sub", "adddate", "subdate", "trim", "extract", "interval", "string_agg":
		return true
	}
	for _, n := range FunctionNames() {
		if n == up {
			return true
		}
	}
	return false
}

// userFunction returns the user function called name, if any.
func (b *binder) userFunction(name string) (*catalog.Function, bool) {
	if b.p.Catalog == nil {
		return nil, false
	}
	return b.p.Catalog.Function(name)
}

// LoadFunction compiles (once per process) the module of f, checking that
// it is the module CREATE FUNCTION read.
func LoadFunction(f *catalog.Function) (*udf.Module, error) {
	wasm, err := udf.ReadModule(f.Path)
	if err != nil {
		return nil, fmt.Errorf("function %s: its module: %w", f.Name, err)
	}
	sum := sha256.Sum256(wasm)
	if hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("function %s: its module %s changed since CREATE FUNCTION", f.Name, f.Path)
	}
	opts, err := udf.ParseOptions(f.Options)
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", f.Name, err)
	}
	return udf.Load(f.Name, wasm, opts)
}

// userCall binds a call of the user function f: the arguments are
// implicitly cast to the types the module declares, as a built-in's are.
func (b *binder) userCall(f *catalog.Function, pos sql.Pos, args []Expr) (Expr, error) {
	sig := func() string {
		ts := make([]string, len(f.Args))
		for i, t := range f.Args {
			ts[i] = t.String()
		}
		return f.Name + "(" + strings.Join(ts, ", ") + ")"
	}
	if len(args) != len(f.Args) {
		return nil, errAt(ErrTypeMismatch, pos, "DESCRIBE FUNCTION "+f.Name+" shows its signature",
			"function %s takes %d argument(s), %s, not %d", f.Name, len(f.Args), sig(), len(args))
	}
	for i, a := range args {
		want := f.Args[i]
		if a.Type().Equal(want) {
			continue
		}
		if l, ok := a.(*Literal); ok && l.Value == nil {
			args[i] = &Literal{T: want.Nullable()}
			continue
		}
		if !functions.ImplicitCast(a.Type(), want) {
			return nil, errAt(ErrTypeMismatch, pos, "CAST the argument to "+want.String(),
				"function %s: argument %d is %s, the function takes %s", sig(), i+1, a.Type().Nullable(), want)
		}
		x, err := implicitCast(a, want)
		if err != nil {
			return nil, errAt(ErrTypeMismatch, pos, "", "function %s: %v", f.Name, err)
		}
		args[i] = x
	}
	m, err := LoadFunction(f)
	if err != nil {
		return nil, errAt(ErrUnsupported, pos, "DROP FUNCTION "+f.Name+" and CREATE FUNCTION it again to take the new module", "%v", err)
	}
	c := &Call{Func: f.Name, Args: args, UDF: m,
		Resolved: functions.Resolved{Ret: f.Ret.Nullable(), ArgTypes: f.Args}}
	if b.viewDepth == 0 {
		c.Pos = pos
	}
	return c, nil
}
