package functions

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/streamsql/streamsql/types"
)

func init() {
	f := register("ENCODE", func(args []types.T) (Resolved, error) { return resolveCharset("ENCODE", argsOf(args)) })
	f.resolveArgs = func(args []Arg) (Resolved, error) { return resolveCharset("ENCODE", args) }
	f = register("DECODE", func(args []types.T) (Resolved, error) { return resolveCharset("DECODE", argsOf(args)) })
	f.resolveArgs = func(args []Arg) (Resolved, error) { return resolveCharset("DECODE", args) }
	register("UNHEX", resolveUnhex)
}

// charsets are the character sets of Flink's ENCODE and DECODE, by Java's
// name (matched in any case).
var charsets = []string{"US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16"}

func charsetOf(name string) (string, bool) {
	for _, c := range charsets {
		if strings.EqualFold(c, name) {
			return c, true
		}
	}
	return "", false
}

// resolveCharset: ENCODE(s, charset) is the BYTES of s in charset, as
// Java's String.getBytes (a character the charset lacks becomes '?',
// UTF-16 starts with the big-endian byte order mark); DECODE(b, charset)
// the STRING b holds in charset, as Java's new String(b, charset) (bytes
// that are no character become U+FFFD; UTF-16 reads a byte order mark,
// big-endian without one). The charsets are Flink's: US-ASCII,
// ISO-8859-1, UTF-8, UTF-16BE, UTF-16LE and UTF-16; another is an error
// (where the call is written when it is a literal).
func resolveCharset(name string, args []Arg) (Resolved, error) {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if err := nargs(name, ts, 2, 2); err != nil {
		return Resolved{}, err
	}
	in, out := types.StringType, types.BytesType
	if name == "DECODE" {
		in, out = out, in
	}
	if (ts[0].Kind != in.Kind && ts[0].Kind != types.Null) || (ts[1].Kind != types.String && ts[1].Kind != types.Null) {
		return Resolved{}, errArgs(name, ts)
	}
	if a := args[1]; a.Const {
		if cs, ok := a.Value.(string); ok {
			if _, ok := charsetOf(cs); !ok {
				return Resolved{}, invalidArg("%s: unsupported charset '%s' (%s)", name, cs, strings.Join(charsets, ", "))
			}
		}
	}
	encode := name == "ENCODE"
	return Resolved{Ret: out, ArgTypes: []types.T{in, types.StringType}, Kernel: strict(out, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		val := andValidity(mem, args, n)
		s, c := newStrArg(args[0]), newStrArg(args[1])
		o := newStrOut(mem, out, n, s.totalLen(n)*2+n)
		o.withValidity(val)
		for i := range n {
			if !val.valid(i) {
				o.endRow()
				continue
			}
			cs, ok := charsetOf(c.at(i))
			if !ok {
				o.release()
				return Vec{}, fmt.Errorf("%s: unsupported charset '%s' (%s)", name, c.at(i), strings.Join(charsets, ", "))
			}
			v := s.at(i)
			o.grow(4*len(v) + 2)
			if encode {
				o.buf = appendEncoded(o.buf, v, cs)
			} else {
				o.buf = appendDecoded(o.buf, v, cs)
			}
			o.endRow()
		}
		return o.finish(), nil
	})}, nil
}

func appendEncoded(dst []byte, s, cs string) []byte {
	switch cs {
	case "UTF-8":
		return append(dst, s...)
	case "US-ASCII", "ISO-8859-1":
		limit := rune(0x7F)
		if cs == "ISO-8859-1" {
			limit = 0xFF
		}
		for _, c := range s {
			if c > limit || c == utf8.RuneError {
				c = '?'
			}
			dst = append(dst, byte(c))
		}
		return dst
	}
	le := cs == "UTF-16LE"
	if cs == "UTF-16" {
		dst = append(dst, 0xFE, 0xFF)
	}
	put := func(u uint16) {
		if le {
			dst = append(dst, byte(u), byte(u>>8))
		} else {
			dst = append(dst, byte(u>>8), byte(u))
		}
	}
	for _, c := range s {
		if r1, r2 := utf16.EncodeRune(c); r1 != utf8.RuneError {
			put(uint16(r1))
			put(uint16(r2))
		} else {
			put(uint16(c))
		}
	}
	return dst
}

func appendDecoded(dst []byte, b, cs string) []byte {
	switch cs {
	case "UTF-8":
		for len(b) > 0 {
			c, size := utf8.DecodeRuneInString(b)
			dst = utf8.AppendRune(dst, c) // an invalid byte is U+FFFD
			b = b[size:]
		}
		return dst
	case "US-ASCII":
		for i := 0; i < len(b); i++ {
			if b[i] > 0x7F {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, b[i])
			}
		}
		return dst
	case "ISO-8859-1":
		for i := 0; i < len(b); i++ {
			dst = utf8.AppendRune(dst, rune(b[i]))
		}
		return dst
	}
	le := cs == "UTF-16LE"
	if cs == "UTF-16" && len(b) >= 2 {
		switch {
		case b[0] == 0xFE && b[1] == 0xFF:
			b = b[2:]
		case b[0] == 0xFF && b[1] == 0xFE:
			b, le = b[2:], true
		}
	}
	unit := func(i int) rune {
		if le {
			return rune(b[i]) | rune(b[i+1])<<8
		}
		return rune(b[i])<<8 | rune(b[i+1])
	}
	i := 0
	for ; i+1 < len(b); i += 2 {
		u := unit(i)
		if utf16.IsSurrogate(u) {
			if u < 0xDC00 && i+3 < len(b) {
				if c := utf16.DecodeRune(u, unit(i+2)); c != utf8.RuneError {
					dst = utf8.AppendRune(dst, c)
					i += 2
					continue
				}
			}
			dst = utf8.AppendRune(dst, utf8.RuneError)
			continue
		}
		dst = utf8.AppendRune(dst, u)
	}
	if i < len(b) {
		dst = utf8.AppendRune(dst, utf8.RuneError) // an odd last byte
	}
	return dst
}

// resolveUnhex: UNHEX(s) is the BYTES whose hex digits s holds, as Flink's:
// an odd-length s has its first digit checked and dropped, leaving a zero
// byte in its place; a character that is no hex digit gives NULL.
func resolveUnhex(args []types.T) (Resolved, error) {
	if err := nargs("UNHEX", args, 1, 1); err != nil {
		return Resolved{}, err
	}
	if args[0].Kind != types.String && args[0].Kind != types.Null {
		return Resolved{}, errArgs("UNHEX", args)
	}
	return Resolved{Ret: types.BytesType, ArgTypes: []types.T{types.StringType}, Infallible: true, Kernel: strict(types.BytesType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		val := andValidity(mem, args, n)
		s := newStrArg(args[0])
		o := newStrOut(mem, types.BytesType, n, s.totalLen(n)/2+n)
		o.withValidity(val)
		for i := range n {
			if !val.valid(i) {
				o.endRow()
				continue
			}
			v := s.at(i)
			start := len(o.buf)
			o.grow(len(v)/2 + 1)
			ok := true
			if len(v)%2 == 1 {
				_, ok = unhex(v[0])
				o.buf = append(o.buf, 0)
				v = v[1:]
			}
			for j := 0; ok && j+1 < len(v); j += 2 {
				hi, ok1 := unhex(v[j])
				lo, ok2 := unhex(v[j+1])
				ok = ok1 && ok2
				o.buf = append(o.buf, hi<<4|lo)
			}
			if !ok {
				o.buf = o.buf[:start]
				o.setNullRow(i, n)
			}
			o.endRow()
		}
		return o.finish(), nil
	})}, nil
}
