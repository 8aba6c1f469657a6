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

// getter returns the reader of row i of a column of T.
func getter[T Type]() func(c *Column, i int) T {
	var z T
	switch any(z).(type) {
	case int32:
		return func(c *Column, i int) T {
			v := *(*int32)(unsafe.Pointer(&c.Values[4*i]))
			return *(*T)(unsafe.Pointer(&v))
		}
	case int64:
		return func(c *Column, i int) T {
			v := *(*int64)(unsafe.Pointer(&c.Values[8*i]))
			return *(*T)(unsafe.Pointer(&v))
		}
	case float64:
		return func(c *Column, i int) T {
			v := *(*float64)(unsafe.Pointer(&c.Values[8*i]))
			return *(*T)(unsafe.Pointer(&v))
		}
	case bool:
		return func(c *Column, i int) T {
			v := c.Values[i] != 0
			return *(*T)(unsafe.Pointer(&v))
		}
	default:
		return func(c *Column, i int) T {
			lo, hi := c.Offsets[i], c.Offsets[i+1]
			var v string
			if hi > lo {
				v = unsafe.String(&c.Values[lo], int(hi-lo))
			}
			return *(*T)(unsafe.Pointer(&v))
		}
	}
}

// putter returns the writer of row i of a result of T; prepare sizes the
// result for n rows first.
func putter[T Type]() (prepare func(r *Result, n int), put func(r *Result, i int, v T)) {
	var z T
	fixed := func(w int) func(r *Result, n int) {
		return func(r *Result, n int) {
			r.Values = grow(r.Values, w*n)
			r.Offsets = r.Offsets[:0]
		}
	}
	switch any(z).(type) {
	case int32:
		return fixed(4), func(r *Result, i int, v T) { *(*T)(unsafe.Pointer(&r.Values[4*i])) = v }
	case int64, float64:
		return fixed(8), func(r *Result, i int, v T) { *(*T)(unsafe.Pointer(&r.Values[8*i])) = v }
	case bool:
		return fixed(1), func(r *Result, i int, v T) {
			b := *(*bool)(unsafe.Pointer(&v))
			r.Values[i] = 0
			if b {
				r.Values[i] = 1
			}
		}
	default:
		return func(r *Result, n int) {
				r.Values = r.Values[:0]
				if cap(r.Offsets) < n+1 {
					r.Offsets = make([]int32, n+1, 2*n+2)
				}
				r.Offsets = r.Offsets[:n+1]
				r.Offsets[0] = 0
			}, func(r *Result, i int, v T) {
				r.Values = append(r.Values, *(*string)(unsafe.Pointer(&v))...)
				r.Offsets[i+1] = int32(len(r.Values))
			}
	}
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, 2*n)
	}
	return b[:n]
}

// Scalar registers f, a function of one argument not called on NULL.
func Scalar[A, R Type](f func(A) R) {
	ga := getter[A]()
	prep, put := putter[R]()
	register(&function{
		signature: signature([]string{sqlType[A]()}, sqlType[R](), false),
		nargs:     1,
		run: func(n int, args []Column, out *Result, row *uint32) {
			prep(out, n)
			out.Valid = out.Valid[:0]
			a := &args[0]
			for i := 0; i < n; i++ {
				*row = uint32(i)
				put(out, i, f(ga(a, i)))
			}
		},
	})
}

// Scalar2 registers f, a function of two arguments not called on NULL.
func Scalar2[A, B, R Type](f func(A, B) R) {
	ga, gb := getter[A](), getter[B]()
	prep, put := putter[R]()
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B]()}, sqlType[R](), false),
		nargs:     2,
		run: func(n int, args []Column, out *Result, row *uint32) {
			prep(out, n)
			out.Valid = out.Valid[:0]
			a, b := &args[0], &args[1]
			for i := 0; i < n; i++ {
				*row = uint32(i)
				put(out, i, f(ga(a, i), gb(b, i)))
			}
		},
	})
}

// Scalar3 registers f, a function of three arguments not called on NULL.
func Scalar3[A, B, C, R Type](f func(A, B, C) R) {
	ga, gb, gc := getter[A](), getter[B](), getter[C]()
	prep, put := putter[R]()
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B](), sqlType[C]()}, sqlType[R](), false),
		nargs:     3,
		run: func(n int, args []Column, out *Result, row *uint32) {
			prep(out, n)
			out.Valid = out.Valid[:0]
			a, b, c := &args[0], &args[1], &args[2]
			for i := 0; i < n; i++ {
				*row = uint32(i)
				put(out, i, f(ga(a, i), gb(b, i), gc(c, i)))
			}
		},
	})
}

func nullableGetter[T Type]() func(c *Column, i int) Nullable[T] {
	g := getter[T]()
	return func(c *Column, i int) Nullable[T] {
		if c.Valid != nil && c.Valid[i] == 0 {
			return Nullable[T]{}
		}
		return Nullable[T]{V: g(c, i), Valid: true}
	}
}

func nullablePutter[T Type]() (prepare func(r *Result, n int), put func(r *Result, i int, v Nullable[T])) {
	prep, p := putter[T]()
	var zero T
	return func(r *Result, n int) {
			prep(r, n)
			r.Valid = grow(r.Valid, n)
		}, func(r *Result, i int, v Nullable[T]) {
			if v.Valid {
				r.Valid[i] = 1
				p(r, i, v.V)
				return
			}
			r.Valid[i] = 0
			p(r, i, zero)
		}
}

// NullableScalar registers f, a function of one argument called on NULL.
func NullableScalar[A, R Type](f func(Nullable[A]) Nullable[R]) {
	ga := nullableGetter[A]()
	prep, put := nullablePutter[R]()
	register(&function{
		signature: signature([]string{sqlType[A]()}, sqlType[R](), true),
		nargs:     1,
		run: func(n int, args []Column, out *Result, row *uint32) {
			prep(out, n)
			a := &args[0]
			for i := 0; i < n; i++ {
				*row = uint32(i)
				put(out, i, f(ga(a, i)))
			}
		},
	})
}

// NullableScalar2 registers f, a function of two arguments called on NULL.
func NullableScalar2[A, B, R Type](f func(Nullable[A], Nullable[B]) Nullable[R]) {
	ga, gb := nullableGetter[A](), nullableGetter[B]()
	prep, put := nullablePutter[R]()
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B]()}, sqlType[R](), true),
		nargs:     2,
		run: func(n int, args []Column, out *Result, row *uint32) {
			prep(out, n)
			a, b := &args[0], &args[1]
			for i := 0; i < n; i++ {
				*row = uint32(i)
				put(out, i, f(ga(a, i), gb(b, i)))
			}
		},
	})
}

// NullableScalar3 registers f, a function of three arguments called on NULL.
func NullableScalar3[A, B, C, R Type](f func(Nullable[A], Nullable[B], Nullable[C]) Nullable[R]) {
	ga, gb, gc := nullableGetter[A](), nullableGetter[B](), nullableGetter[C]()
	prep, put := nullablePutter[R]()
	register(&function{
		signature: signature([]string{sqlType[A](), sqlType[B](), sqlType[C]()}, sqlType[R](), true),
		nargs:     3,
		run: func(n int, args []Column, out *Result, row *uint32) {
			prep(out, n)
			a, b, c := &args[0], &args[1], &args[2]
			for i := 0; i < n; i++ {
				*row = uint32(i)
				put(out, i, f(ga(a, i), gb(b, i), gc(c, i)))
			}
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
