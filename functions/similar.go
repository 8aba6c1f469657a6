package functions

import (
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

func init() {
	for _, neg := range []bool{false, true} {
		name := "SIMILAR TO"
		if neg {
			name = "NOT SIMILAR TO"
		}
		f := register(name, func(args []types.T) (Resolved, error) { return resolveSimilar(name, neg, argsOf(args)) })
		f.resolveArgs = func(args []Arg) (Resolved, error) { return resolveSimilar(name, neg, args) }
	}
}

// similarRegexp translates a SQL regular expression (SIMILAR TO) into Go's
// syntax, as Calcite's Like.sqlToRegexSimilar does for Flink: % is any
// characters and _ one, | * + ? {m,n} ( ) [ ] are regular expression
// operators, escape (when not 0) makes the next special character literal,
// every other character stands for itself; the pattern matches the whole
// string.
func similarRegexp(p string, escape rune) (string, error) {
	const sqlSpecials = "[]()|^-+*_%?{}"
	var b strings.Builder
	b.WriteString("^(?:")
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case escape != 0 && c == escape:
			if i+1 >= len(rs) {
				return "", invalidArg("SIMILAR TO: the pattern '%s' ends with its escape character", p)
			}
			i++
			n := rs[i]
			if !strings.ContainsRune(sqlSpecials, n) && n != escape {
				return "", invalidArg("SIMILAR TO: invalid escape sequence in '%s'", p)
			}
			b.WriteString(regexp.QuoteMeta(string(n)))
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteString(".")
		case strings.ContainsRune(sqlSpecials, c):
			b.WriteRune(c)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(")$")
	return b.String(), nil
}

type similarCompiled struct {
	pattern, escape string
	re              *regexp.Regexp
	err             error
}

// resolveSimilar: x [NOT] SIMILAR TO p [ESCAPE e]. A NULL gives NULL; a
// pattern that is no regular expression is an error (where the call is
// written when it is a literal).
func resolveSimilar(name string, neg bool, args []Arg) (Resolved, error) {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if err := nargs(name, ts, 2, 3); err != nil {
		return Resolved{}, err
	}
	for _, t := range ts {
		if t.Kind != types.String && t.Kind != types.Null {
			return Resolved{}, errArgs(name, ts)
		}
	}
	var last atomic.Pointer[similarCompiled]
	compile := func(pattern, escape string) (*regexp.Regexp, error) {
		if l := last.Load(); l != nil && l.pattern == pattern && l.escape == escape {
			return l.re, l.err
		}
		var esc rune
		if escape != "" {
			rs := []rune(escape)
			if len(rs) != 1 {
				return nil, invalidArg("%s: the escape must be one character, got '%s'", name, escape)
			}
			esc = rs[0]
		}
		src, err := similarRegexp(pattern, esc)
		var re *regexp.Regexp
		if err == nil {
			if re, err = regexp.Compile(src); err != nil {
				err = invalidArg("SIMILAR TO: invalid pattern '%s': %v", pattern, err)
			}
		}
		last.Store(&similarCompiled{pattern, escape, re, err})
		return re, err
	}
	if args[1].Const && (len(args) == 2 || args[2].Const) {
		p, ok1 := args[1].Value.(string)
		e, ok2 := "", true
		if len(args) == 3 {
			e, ok2 = args[2].Value.(string)
		}
		if ok1 && ok2 {
			if _, err := compile(p, e); err != nil {
				return Resolved{}, err
			}
		}
	}
	sig := "ss"
	if len(args) == 3 {
		sig = "sss"
	}
	rt := nullableFrom(types.BooleanType, ts)
	return Resolved{Ret: rt, ArgTypes: sigTypes(sig), Kernel: strict(types.BooleanType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		r := prepRowArgs(args, sig)
		val := andValidity(mem, args, n)
		buf, out := newBoolBuf(mem, n)
		for i := range n {
			if !val.valid(i) {
				continue
			}
			e := ""
			if len(sig) == 3 {
				e = r.str(2, i)
			}
			re, err := compile(r.str(1, i), e)
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			if re.MatchString(r.str(0, i)) != neg {
				bitutil.SetBit(out, i)
			}
		}
		return finish(types.BooleanType, n, val, buf), nil
	})}, nil
}
