package functions

import (
	"unicode/utf8"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("TRANSLATE", resolveTranslate)
}

// resolveTranslate: TRANSLATE(s, from, to) replaces each character of s
// found in from by the character at the same place in to, or drops it when
// to is shorter (the first of a character repeated in from counts), as
// Flink's: NULL for a NULL s; s itself when s or from is empty, or from is
// NULL; a NULL to drops every character of from.
func resolveTranslate(args []types.T) (Resolved, error) {
	if err := nargs("TRANSLATE", args, 3, 3); err != nil {
		return Resolved{}, err
	}
	for _, a := range args {
		if a.Kind != types.String && a.Kind != types.Null {
			return Resolved{}, errArgs("TRANSLATE", args)
		}
	}
	rt := nullableFrom(types.StringType, args[:1])
	return Resolved{Ret: rt, ArgTypes: repeatT(types.StringType, 3), Infallible: true, Kernel: folding(types.StringType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		var valid [3]validBits
		var strs [3]strArg
		for j, a := range args {
			valid[j], strs[j] = newValidBits(a), newStrArg(a)
		}
		var dict map[rune]rune // -1: dropped
		lastFrom, lastTo, built := "", "", false
		o := newStrOut(ctx.mem(), types.StringType, n, strs[0].totalLen(n)+n)
		for i := range n {
			if !valid[0].at(i) {
				o.appendNull()
				continue
			}
			o.markValid(i)
			s := strs[0].at(i)
			if s == "" || !valid[1].at(i) || strs[1].at(i) == "" {
				o.appendString(s)
				continue
			}
			from, to := strs[1].at(i), ""
			if valid[2].at(i) {
				to = strs[2].at(i)
			}
			if !built || from != lastFrom || to != lastTo {
				dict, lastFrom, lastTo, built = translateDict(from, to), from, to, true
			}
			o.grow(len(s))
			for _, c := range s {
				if r, ok := dict[c]; ok {
					if r >= 0 {
						o.buf = utf8.AppendRune(o.buf, r)
					}
					continue
				}
				o.buf = utf8.AppendRune(o.buf, c)
			}
			o.endRow()
		}
		return o.finish(), nil
	})}, nil
}

func translateDict(from, to string) map[rune]rune {
	d := make(map[rune]rune, len(from))
	for _, c := range from {
		r := rune(-1)
		if to != "" {
			var size int
			r, size = utf8.DecodeRuneInString(to)
			to = to[size:]
		}
		if _, dup := d[c]; !dup {
			d[c] = r
		}
	}
	return d
}
