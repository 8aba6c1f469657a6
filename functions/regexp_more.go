package functions

import (
	"unicode/utf8"

	"github.com/streamsql/streamsql/types"
)

func init() {
	for _, name := range []string{"REGEXP_COUNT", "REGEXP_INSTR", "REGEXP_SUBSTR"} {
		f := register(name, func(args []types.T) (Resolved, error) { return resolveRegexpMore(name, argsOf(args)) })
		f.resolveArgs = func(args []Arg) (Resolved, error) { return resolveRegexpMore(name, args) }
	}
}

// resolveRegexpMore: Flink's REGEXP_COUNT(s, re) is the number of
// non-overlapping matches of re in s, REGEXP_INSTR(s, re) the position (in
// characters, from 1) of the first match, 0 when there is none, and
// REGEXP_SUBSTR(s, re) the first match, NULL when there is none. NULL
// arguments give NULL; a literal pattern that does not compile is an
// error where the call is written, one computed per row gives NULL, as
// for REGEXP_EXTRACT. The search allocates per row (Go's regexp).
func resolveRegexpMore(name string, args []Arg) (Resolved, error) {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if err := checkSig(name, "ss", ts); err != nil {
		return Resolved{}, err
	}
	cache, _, err := newRegexpCache(args[1])
	if err != nil {
		return Resolved{}, err
	}
	if name == "REGEXP_SUBSTR" {
		return strFunc(name, "ss", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			m, err := cache.get(r.str(1, i))
			if err != nil {
				return dst, false, nil
			}
			loc := m.re.FindStringIndex(r.str(0, i))
			if loc == nil {
				return dst, false, nil
			}
			return append(dst, r.str(0, i)[loc[0]:loc[1]]...), true, nil
		})(ts)
	}
	count := name == "REGEXP_COUNT"
	return Resolved{Ret: types.IntType, ArgTypes: sigTypes("ss"), Kernel: strict(types.IntType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		r := prepRowArgs(args, "ss")
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int32](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			m, err := cache.get(r.str(1, i))
			if err != nil {
				val.setNull(mem, n, i)
				continue
			}
			s := r.str(0, i)
			if count {
				out[i] = int32(len(m.re.FindAllStringIndex(s, -1)))
				continue
			}
			if loc := m.re.FindStringIndex(s); loc != nil {
				out[i] = int32(utf8.RuneCountInString(s[:loc[0]]) + 1)
			}
		}
		return finish(types.IntType, n, val, buf), nil
	})}, nil
}
