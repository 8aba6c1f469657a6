package udf

import (
	"errors"
	"strconv"
	"unsafe"
)

// ABIVersion is the version of the ABI this package implements
// (docs/UDF.md); the engine refuses a module of a version it does not know.
const ABIVersion = 1

// Type is the Go types a function may take and return.
type Type interface {
	int32 | int64 | float64 | bool | string
}

// Nullable is a value that may be NULL (Valid false), the argument and
// result type of a function called on NULL.
type Nullable[T Type] struct {
	V     T
	Valid bool
}

// Of returns v as a non-NULL Nullable.
func Of[T Type](v T) Nullable[T] { return Nullable[T]{V: v, Valid: true} }

// Column is one argument column of a batch as the engine lays it out in the
// module's memory (docs/UDF.md): the values of a fixed-width type
// little-endian one after the other, a string's UTF-8 bytes with n+1
// offsets, and one byte a row for validity (nil when every row is valid).
type Column struct {
	Valid   []byte
	Values  []byte
	Offsets []int32
}

// Result is what a batch gives back: the values as Column lays them out,
// validity (nil: every row valid).
type Result struct {
	Valid   []byte
	Values  []byte
	Offsets []int32
}

type function struct {
	signature string
	nargs     int
	// run computes n rows of args into out; row is where it is, kept
	// current so that the engine can name the row of a trap.
	run func(n int, args []Column, out *Result, row *uint32)
}

var registered *function

func register(f *function) {
	if registered != nil {
		panic("udf: a module registers one function; this one registers a second: " + f.signature)
	}
	registered = f
}

// Signature returns the signature text of the registered function, as the
// module's streamsql_udf_signature export gives it: "(T, ...) RETURNS R
// [CALLED | RETURNS NULL] ON NULL INPUT". It is "" when none is registered.
func Signature() string {
	if registered == nil {
		return ""
	}
	return registered.signature
}

func sqlType[T Type]() string {
	var z T
	switch any(z).(type) {
	case int32:
		return "INT"
	case int64:
		return "BIGINT"
	case float64:
		return "DOUBLE"
	case bool:
		return "BOOLEAN"
	default:
		return "STRING"
	}
}

func signature(args []string, ret string, onNull bool) string {
	s := "("
	for i, a := range args {
		if i > 0 {
			s += ", "
		}
		s += a
	}
	s += ") RETURNS " + ret
	if onNull {
		return s + " CALLED ON NULL INPUT"
	}
	return s + " RETURNS NULL ON NULL INPUT"
}

// view returns the n values of column c as a []T: the column's own bytes
// for a fixed-width type (the engine 8-aligns them; a bool is a byte 0 or
// 1, as Go lays it out), the strings' headers into scratch for a string.
func view[T Type](c *Column, n int, scratch *[]string) []T {
	var z T
	if _, ok := any(z).(string); ok {
		s := *scratch
		if cap(s) < n {
			s = make([]string, n)
		}
		s = s[:n]
		off, data := c.Offsets, c.Values
		for i := range s {
			lo, hi := off[i], off[i+1]
			if hi > lo {
				s[i] = unsafe.String(&data[lo], int(hi-lo))
			} else {
				s[i] = ""
			}
		}
		*scratch = s
		return *(*[]T)(unsafe.Pointer(&s))
	}
	if n == 0 || len(c.Values) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&c.Values[0])), n)
}

// results is where the n results of a batch go: the Result's own bytes for
// a fixed-width type, strings kept in strs until finish encodes them.
type results[R Type] struct{ strs []string }

func (r *results[R]) slice(out *Result, n int) []R {
	var z R
	out.Offsets = out.Offsets[:0]
	if _, ok := any(z).(string); ok {
		if cap(r.strs) < n {
			r.strs = make([]string, n)
		}
		r.strs = r.strs[:n]
		return *(*[]R)(unsafe.Pointer(&r.strs))
	}
	out.Values = grow(out.Values, int(unsafe.Sizeof(z))*n)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*R)(unsafe.Pointer(&out.Values[0])), n)
}

func (r *results[R]) finish(out *Result, n int) {
	var z R
	if _, ok := any(z).(string); !ok {
		return
	}
	if cap(out.Offsets) < n+1 {
		out.Offsets = make([]int32, n+1, 2*n+2)
	}
	out.Offsets = out.Offsets[:n+1]
	out.Offsets[0] = 0
	out.Values = out.Values[:0]
	for i, s := range r.strs[:n] {
		out.Values = append(out.Values, s...)
		out.Offsets[i+1] = int32(len(out.Values))
	}
	clear(r.strs[:n]) // keep no string of the batch alive
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, 2*n)
	}
	return b[:n]
}

// valid reports whether row i of c is not NULL.
func valid(c *Column, i int) bool { return c.Valid == nil || c.Valid[i] != 0 }

// nullResults sizes out's validity for n rows.
func nullResults(out *Result, n int) []byte {
	out.Valid = grow(out.Valid, n)
	return out.Valid
}

// Scalar registers f, a function of one argument not called on NULL.
func Scalar[A, R Type](f func(A) R) {
	var sa []string
	var res results[R]
	register(&function{
		signature: signature([]string{sqlType[A]()}, sqlType[R](), false),
		nargs:     1,
		run: func(n int, args []Column, out *Result, row *uint32) {
			out.Valid = out.Valid[:0]
			as := view[A](&args[0], n, &sa)
			rs := res.slice(out, n)
			for i := range rs {
				*row = uint32(i)
				rs[i] = f(as[i])
			}
			res.finish(out, n)
		},
	})
}

// Scalar2 registers f, a function of two arguments not called on NULL.
func Scalar2[A, B, R Type](f func(A, B) R) {
	var sa, sb []string
	var res results[R]
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B]()}, sqlType[R](), false),
		nargs:     2,
		run: func(n int, args []Column, out *Result, row *uint32) {
			out.Valid = out.Valid[:0]
			as, bs := view[A](&args[0], n, &sa), view[B](&args[1], n, &sb)
			rs := res.slice(out, n)
			for i := range rs {
				*row = uint32(i)
				rs[i] = f(as[i], bs[i])
			}
			res.finish(out, n)
		},
	})
}

// Scalar3 registers f, a function of three arguments not called on NULL.
func Scalar3[A, B, C, R Type](f func(A, B, C) R) {
	var sa, sb, sc []string
	var res results[R]
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B](), sqlType[C]()}, sqlType[R](), false),
		nargs:     3,
		run: func(n int, args []Column, out *Result, row *uint32) {
			out.Valid = out.Valid[:0]
			as, bs, cs := view[A](&args[0], n, &sa), view[B](&args[1], n, &sb), view[C](&args[2], n, &sc)
			rs := res.slice(out, n)
			for i := range rs {
				*row = uint32(i)
				rs[i] = f(as[i], bs[i], cs[i])
			}
			res.finish(out, n)
		},
	})
}

// NullableScalar registers f, a function of one argument called on NULL.
func NullableScalar[A, R Type](f func(Nullable[A]) Nullable[R]) {
	var sa []string
	var res results[R]
	register(&function{
		signature: signature([]string{sqlType[A]()}, sqlType[R](), true),
		nargs:     1,
		run: func(n int, args []Column, out *Result, row *uint32) {
			as := view[A](&args[0], n, &sa)
			rs, vs := res.slice(out, n), nullResults(out, n)
			for i := range rs {
				*row = uint32(i)
				v := f(Nullable[A]{as[i], valid(&args[0], i)})
				rs[i], vs[i] = v.V, 0
				if v.Valid {
					vs[i] = 1
				}
			}
			res.finish(out, n)
		},
	})
}

// NullableScalar2 registers f, a function of two arguments called on NULL.
func NullableScalar2[A, B, R Type](f func(Nullable[A], Nullable[B]) Nullable[R]) {
	var sa, sb []string
	var res results[R]
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B]()}, sqlType[R](), true),
		nargs:     2,
		run: func(n int, args []Column, out *Result, row *uint32) {
			as, bs := view[A](&args[0], n, &sa), view[B](&args[1], n, &sb)
			rs, vs := res.slice(out, n), nullResults(out, n)
			for i := range rs {
				*row = uint32(i)
				v := f(Nullable[A]{as[i], valid(&args[0], i)}, Nullable[B]{bs[i], valid(&args[1], i)})
				rs[i], vs[i] = v.V, 0
				if v.Valid {
					vs[i] = 1
				}
			}
			res.finish(out, n)
		},
	})
}

// NullableScalar3 registers f, a function of three arguments called on NULL.
func NullableScalar3[A, B, C, R Type](f func(Nullable[A], Nullable[B], Nullable[C]) Nullable[R]) {
	var sa, sb, sc []string
	var res results[R]
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B](), sqlType[C]()}, sqlType[R](), true),
		nargs:     3,
		run: func(n int, args []Column, out *Result, row *uint32) {
			as, bs, cs := view[A](&args[0], n, &sa), view[B](&args[1], n, &sb), view[C](&args[2], n, &sc)
			rs, vs := res.slice(out, n), nullResults(out, n)
			for i := range rs {
				*row = uint32(i)
				v := f(Nullable[A]{as[i], valid(&args[0], i)}, Nullable[B]{bs[i], valid(&args[1], i)},
					Nullable[C]{cs[i], valid(&args[2], i)})
				rs[i], vs[i] = v.V, 0
				if v.Valid {
					vs[i] = 1
				}
			}
			res.finish(out, n)
		},
	})
}

// Run computes n rows of the registered function over args into out, as
// the module's streamsql_udf_call export does; a panic of the function is
// returned as an error naming its row. It is exported for tests on the
// host.
func Run(n int, args []Column, out *Result, row *uint32) (err error) {
	if registered == nil {
		return errors.New("udf: no function registered")
	}
	defer func() {
		if r := recover(); r != nil {
			err = panicError(r)
		}
	}()
	registered.run(n, args, out, row)
	return nil
}

// panicError is the error of a recovered panic's value (the package does
// without fmt, which would make every module a megabyte larger).
func panicError(r any) error {
	switch v := r.(type) {
	case error:
		return v
	case string:
		return errors.New(v)
	case int:
		return errors.New(strconv.Itoa(v))
	case int64:
		return errors.New(strconv.FormatInt(v, 10))
	}
	return errors.New("panic")
}
