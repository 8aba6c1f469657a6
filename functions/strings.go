package functions

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("UPPER", strFunc("UPPER", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		return appendUpper(dst, r.str(0, i)), true, nil
	}))
	alias("UCASE", "UPPER")
	register("LOWER", strFunc("LOWER", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		return appendLower(dst, r.str(0, i)), true, nil
	}))
	alias("LCASE", "LOWER")
	register("INITCAP", strFunc("INITCAP", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		return appendInitCap(dst, r.str(0, i)), true, nil
	}))
	register("REVERSE", strFunc("REVERSE", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s := r.str(0, i)
		for j := len(s); j > 0; {
			c, size := utf8.DecodeLastRuneInString(s[:j])
			j -= size
			if c == utf8.RuneError && size == 1 {
				dst = append(dst, s[j])
			} else {
				dst = utf8.AppendRune(dst, c)
			}
		}
		return dst, true, nil
	}))
	register("CONCAT", resolveConcat)
	register("||", func(args []types.T) (Resolved, error) {
		if err := nargs("||", args, 2, 2); err != nil {
			return Resolved{}, err
		}
		return resolveConcat(args)
	})
	register("CONCAT_WS", resolveConcatWS)
	register("SUBSTRING", resolveSubstring)
	alias("SUBSTR", "SUBSTRING")
	register("CHAR_LENGTH", strIntFunc("CHAR_LENGTH", "s", func(r *rowArgs, i int) int32 {
		return int32(utf8.RuneCountInString(r.str(0, i)))
	}))
	alias("CHARACTER_LENGTH", "CHAR_LENGTH")
	alias("LENGTH", "CHAR_LENGTH")
	register("OCTET_LENGTH", strIntFunc("OCTET_LENGTH", "s", func(r *rowArgs, i int) int32 { return int32(len(r.str(0, i))) }))
	register("ASCII", strIntFunc("ASCII", "s", func(r *rowArgs, i int) int32 {
		s := r.str(0, i)
		if s == "" {
			return 0
		}
		return int32(s[0])
	}))
	register("TRIM", resolveTrim)
	register("LTRIM", trimFunc("LTRIM", true, false))
	register("RTRIM", trimFunc("RTRIM", false, true))
	alias("BTRIM", "TRIM")
	register("REPLACE", strFunc("REPLACE", "sss", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, from, to := r.str(0, i), r.str(1, i), r.str(2, i)
		if from == "" {
			return append(dst, s...), true, nil
		}
		for {
			j := strings.Index(s, from)
			if j < 0 {
				return append(dst, s...), true, nil
			}
			dst = append(dst, s[:j]...)
			dst = append(dst, to...)
			s = s[j+len(from):]
		}
	}))
	// POSITION(sub IN s) is passed as POSITION(sub, s).
	register("POSITION", strIntFunc("POSITION", "ss", func(r *rowArgs, i int) int32 {
		return int32(charIndex(r.str(1, i), r.str(0, i), 0))
	}))
	register("LOCATE", resolveLocate)
	register("INSTR", strIntFunc("INSTR", "ss", func(r *rowArgs, i int) int32 {
		return int32(charIndex(r.str(0, i), r.str(1, i), 0))
	}))
	register("LPAD", strFunc("LPAD", "sis", types.StringType, padFunc(true)))
	register("RPAD", strFunc("RPAD", "sis", types.StringType, padFunc(false)))
	register("LEFT", strFunc("LEFT", "si", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, k := r.str(0, i), r.int(1, i)
		if k <= 0 {
			return dst, true, nil
		}
		return append(dst, s[:runeOffset(s, k)]...), true, nil
	}))
	register("RIGHT", strFunc("RIGHT", "si", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, k := r.str(0, i), r.int(1, i)
		if k <= 0 {
			return dst, true, nil
		}
		c := int64(utf8.RuneCountInString(s))
		if k >= c {
			return append(dst, s...), true, nil
		}
		return append(dst, s[runeOffset(s, c-k):]...), true, nil
	}))
	register("REPEAT", strFunc("REPEAT", "si", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, k := r.str(0, i), r.int(1, i)
		if int64(len(s))*k > 1<<30 {
			return dst, false, fmt.Errorf("REPEAT result too large: %d times %d bytes", k, len(s))
		}
		for range k {
			dst = append(dst, s...)
		}
		return dst, true, nil
	}))
	// CHR(n) is the character of code n modulo 256 (CHR(353) = 'a'), and
	// the empty string for a negative n, as Flink's.
	register("CHR", strFunc("CHR", "i", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		c := r.int(0, i)
		if c < 0 {
			return dst, true, nil
		}
		return utf8.AppendRune(dst, rune(c&0xFF)), true, nil
	}))
	// SPLIT_INDEX(s, sep, k) is the k-th (from 0) part of s cut at every sep,
	// NULL when there is none, for a negative k and for the empty s (as
	// Flink's splitByWholeSeparatorPreserveAllTokens); the empty sep cuts
	// at every white space character.
	register("SPLIT_INDEX", strFunc("SPLIT_INDEX", "ssi", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, sep, k := r.str(0, i), r.str(1, i), r.int(2, i)
		if k < 0 || s == "" {
			return dst, false, nil
		}
		if sep == "" {
			start := 0
			for j, c := range s {
				if !unicode.IsSpace(c) {
					continue
				}
				if k == 0 {
					return append(dst, s[start:j]...), true, nil
				}
				k--
				start = j + utf8.RuneLen(c)
			}
			if k == 0 {
				return append(dst, s[start:]...), true, nil
			}
			return dst, false, nil
		}
		for ; k > 0; k-- {
			j := strings.Index(s, sep)
			if j < 0 {
				return dst, false, nil
			}
			s = s[j+len(sep):]
		}
		if j := strings.Index(s, sep); j >= 0 {
			s = s[:j]
		}
		return append(dst, s...), true, nil
	}))
	regexpFunc("REGEXP_REPLACE", "sss", types.StringType)
	regexpFunc("REGEXP_EXTRACT", "ss", types.StringType)
	regexpFunc("REGEXP", "ss", types.BooleanType)
}

// rowArgs gives per-row access to string and integer arguments.
type rowArgs struct {
	s    []strArg
	iv   [][]int64
	im   []int
	ones [][1]int64
}

func (r *rowArgs) str(j, i int) string { return r.s[j].at(i) }
func (r *rowArgs) int(j, i int) int64  { return r.iv[j][i&r.im[j]] }

// sig is a function signature: 's' a STRING argument, 'i' a BIGINT one
// ('-' in prepRowArgs: an argument the caller reads itself).
func sigTypes(sig string) []types.T {
	out := make([]types.T, len(sig))
	for i, c := range sig {
		if c == 's' {
			out[i] = types.StringType
		} else {
			out[i] = types.BigIntType
		}
	}
	return out
}

func prepRowArgs(args []Vec, sig string) *rowArgs {
	r := &rowArgs{s: make([]strArg, len(args)), iv: make([][]int64, len(args)), im: make([]int, len(args)), ones: make([][1]int64, len(args))}
	for j, a := range args {
		switch sig[j] {
		case 's':
			r.s[j] = newStrArg(a)
		case 'i':
			r.iv[j], r.im[j] = operand(a, &r.ones[j])
		}
	}
	return r
}

// checkSig checks args against a signature: strings accept any type (it is
// cast to STRING), integers need an exact numeric type.
func checkSig(name, sig string, args []types.T) error {
	if len(args) != len(sig) {
		return nargs(name, args, len(sig), len(sig))
	}
	for i, a := range args {
		if a.Kind == types.Null {
			continue
		}
		switch sig[i] {
		case 's':
			if a.Kind != types.String {
				return errArgs(name, args)
			}
		case 'i':
			if !a.IsInteger() {
				return errArgs(name, args)
			}
		}
	}
	return nil
}

type rowFunc func(dst []byte, r *rowArgs, i int) ([]byte, bool, error)

// strFunc registers a strict function with a fixed signature returning a
// STRING built row by row (f returns false for a NULL result).
func strFunc(name, sig string, rt types.T, f rowFunc) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := checkSig(name, sig, args); err != nil {
			return Resolved{}, err
		}
		return Resolved{Ret: types.StringType, ArgTypes: sigTypes(sig), Kernel: strKernel(sig, f)}, nil
	}
}

func strKernel(sig string, f rowFunc) Kernel {
	size := &outSize{}
	return strict(types.StringType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		return buildStrings(ctx, args, sig, n, size, f)
	})
}

// outSize is what a string kernel's last result held per row (bytes, and
// a sixteenth), so that the next one reserves about what it needs: as
// much as the first argument for UPPER, a few bytes of a long URL for
// SPLIT_INDEX. Kernels run in several subtasks at once.
type outSize struct{ perRow16 atomic.Int64 }

// buildStrings builds a kernel's result row by row with f; size (nil:
// none) sizes its buffer.
func buildStrings(ctx *Context, args []Vec, sig string, n int, size *outSize, f rowFunc) (Vec, error) {
	mem := ctx.mem()
	r := prepRowArgs(args, sig)
	hint := 0
	if sig[0] == 's' && !args[0].Const {
		hint = r.s[0].totalLen(n)
	}
	if size != nil {
		if p := size.perRow16.Load(); p > 0 {
			if est := int(p*int64(n)/16) + 256; hint == 0 || est < hint {
				hint = est
			}
		}
	}
	o := newStrOut(mem, types.StringType, n, hint+n)
	val := andValidity(mem, args, n)
	o.withValidity(val)
	for i := range n {
		if !val.valid(i) {
			o.endRow()
			continue
		}
		start := len(o.buf)
		need := 16
		if sig[0] == 's' {
			need += len(r.str(0, i))
		}
		o.grow(need)
		var ok bool
		var err error
		o.buf, ok, err = f(o.buf, r, i)
		if err != nil {
			o.release()
			return Vec{}, err
		}
		if !ok {
			o.buf = o.buf[:start]
			o.setNullRow(i, n)
		}
		o.endRow()
	}
	if size != nil && n > 0 {
		size.perRow16.Store(int64(len(o.buf))*16/int64(n) + 1)
	}
	return o.finish(), nil
}

// setNullRow marks row i NULL after the validity was preset with withValidity.
func (o *strOut) setNullRow(i, n int) {
	if o.valid == nil {
		o.valid = newBitmap(o.mem, n)
		bitutil.SetBitsTo(o.valid.Bytes(), 0, int64(n), true)
	}
	if bitutil.BitIsSet(o.valid.Bytes(), i) {
		bitutil.ClearBit(o.valid.Bytes(), i)
		o.nulls++
	}
}

// strIntFunc registers a strict function returning INT from string and
// integer arguments.
func strIntFunc(name, sig string, f func(r *rowArgs, i int) int32) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := checkSig(name, sig, args); err != nil {
			return Resolved{}, err
		}
		rt := nullableFrom(types.IntType, args)
		return Resolved{Ret: rt, ArgTypes: sigTypes(sig), Kernel: strict(types.IntType, func(ctx *Context, args []Vec, n int) (Vec, error) {
			mem := ctx.mem()
			r := prepRowArgs(args, sig)
			val := andValidity(mem, args, n)
			buf, out := newFixedBuf[int32](mem, n)
			for i := range out {
				if val.valid(i) {
					out[i] = f(r, i)
				} else {
					out[i] = 0
				}
			}
			return finish(types.IntType, n, val, buf), nil
		})}, nil
	}
}

func appendUpper(dst []byte, s string) []byte {
	n0 := len(dst)
	dst = append(dst, s...)
	b := dst[n0:]
	for i, c := range b {
		if c >= utf8.RuneSelf {
			dst = dst[:n0+i]
			for _, r := range s[i:] {
				dst = utf8.AppendRune(dst, unicode.ToUpper(r))
			}
			return dst
		}
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return dst
}

func appendLower(dst []byte, s string) []byte {
	n0 := len(dst)
	dst = append(dst, s...)
	b := dst[n0:]
	for i, c := range b {
		if c >= utf8.RuneSelf {
			dst = dst[:n0+i]
			for _, r := range s[i:] {
				dst = utf8.AppendRune(dst, unicode.ToLower(r))
			}
			return dst
		}
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return dst
}

// appendInitCap upper-cases the first letter of each word and lower-cases
// the rest; words are runs of letters and digits.
func appendInitCap(dst []byte, s string) []byte {
	inWord := false
	for _, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && !inWord:
			r = unicode.ToTitle(r)
		case alnum:
			r = unicode.ToLower(r)
		}
		inWord = alnum
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// runeOffset returns the byte offset of the k-th character (0-based) of s,
// or len(s).
func runeOffset(s string, k int64) int {
	if k <= 0 {
		return 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			if k == 0 {
				return i
			}
			k--
			continue
		}
		if k == 0 {
			return i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size - 1
		k--
	}
	return len(s)
}

// charIndex returns the 1-based character position of sub in s searching
// from character from (0-based), or 0.
func charIndex(s, sub string, from int64) int64 {
	off := runeOffset(s, from)
	if off > len(s) || (from > 0 && off == len(s) && sub != "") {
		return 0
	}
	j := strings.Index(s[off:], sub)
	if j < 0 {
		return 0
	}
	return from + int64(utf8.RuneCountInString(s[off:off+j])) + 1
}

func resolveConcat(args []types.T) (Resolved, error) {
	if err := nargs("CONCAT", args, 1, -1); err != nil {
		return Resolved{}, err
	}
	for _, a := range args {
		if a.Kind == types.Bytes {
			return Resolved{}, errArgs("CONCAT", args)
		}
	}
	rt := nullableFrom(types.StringType, args)
	return Resolved{Ret: rt, ArgTypes: repeatT(types.StringType, len(args)), Kernel: strict(types.StringType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		return buildStrings(ctx, args, strings.Repeat("s", len(args)), n, nil, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			for j := range r.s {
				dst = append(dst, r.str(j, i)...)
			}
			return dst, true, nil
		})
	})}, nil
}

// resolveConcatWS: CONCAT_WS(sep, s1, ...) joins the non-NULL si with sep;
// NULL when sep is NULL.
func resolveConcatWS(args []types.T) (Resolved, error) {
	if err := nargs("CONCAT_WS", args, 2, -1); err != nil {
		return Resolved{}, err
	}
	for _, a := range args {
		if a.Kind == types.Bytes {
			return Resolved{}, errArgs("CONCAT_WS", args)
		}
	}
	rt := types.StringType
	rt.NotNull = args[0].NotNull
	return Resolved{Ret: rt, ArgTypes: repeatT(types.StringType, len(args)), Kernel: folding(types.StringType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		if args[0].IsNull() {
			return nullResult(ctx, types.StringType, args, n), nil
		}
		r := prepRowArgs(args, strings.Repeat("s", len(args)))
		// only the separator decides NULL
		return buildStrings(ctx, args[:1], "s", n, nil, func(dst []byte, _ *rowArgs, i int) ([]byte, bool, error) {
			sep := r.str(0, i)
			first := true
			for j := 1; j < len(args); j++ {
				if !isValid(args[j], i) {
					continue
				}
				if !first {
					dst = append(dst, sep...)
				}
				first = false
				dst = append(dst, r.str(j, i)...)
			}
			return dst, true, nil
		})
	})}, nil
}

// resolveSubstring: SUBSTRING(s, start[, len]) with SQL's rules: characters
// are numbered from 1, the substring covers positions [start, start+len)
// clipped to the string (so a start <= 0 eats into len), and a negative
// len is an error.
func resolveSubstring(args []types.T) (Resolved, error) {
	sig := "si"
	if len(args) == 3 {
		sig = "sii"
	}
	return strFunc("SUBSTRING", sig, types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, start := r.str(0, i), r.int(1, i)
		end := int64(1) << 62
		if len(sig) == 3 {
			l := r.int(2, i)
			if l < 0 {
				return dst, false, fmt.Errorf("negative substring length %d", l)
			}
			if start < 1<<61 && l < 1<<61 {
				end = start + l
			}
		}
		from := max(start, 1)
		if end <= from {
			return dst, true, nil
		}
		b := runeOffset(s, from-1)
		e := len(s)
		if end < 1<<61 {
			e = b + runeOffset(s[b:], end-from)
		}
		return append(dst, s[b:e]...), true, nil
	})(args)
}

// resolveLocate: LOCATE(sub, s[, start]) is the 1-based position of sub in
// s at or after character start, 0 if absent.
func resolveLocate(args []types.T) (Resolved, error) {
	if len(args) == 3 {
		return strIntFunc("LOCATE", "ssi", func(r *rowArgs, i int) int32 {
			start := r.int(2, i)
			if start < 1 {
				return 0
			}
			return int32(charIndex(r.str(1, i), r.str(0, i), start-1))
		})(args)
	}
	return strIntFunc("LOCATE", "ss", func(r *rowArgs, i int) int32 {
		return int32(charIndex(r.str(1, i), r.str(0, i), 0))
	})(args)
}

// padFunc: LPAD(s, len, pad) / RPAD pads s to len characters with pad
// repeated (truncating s when it is longer); NULL when len < 0 or pad is
// empty and padding is needed.
func padFunc(left bool) rowFunc {
	return func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, l, pad := r.str(0, i), r.int(1, i), r.str(2, i)
		if l < 0 {
			return dst, false, nil
		}
		c := int64(utf8.RuneCountInString(s))
		if l <= c {
			return append(dst, s[:runeOffset(s, l)]...), true, nil
		}
		if pad == "" {
			return dst, false, nil
		}
		if l > 1<<28 {
			return dst, false, fmt.Errorf("pad length %d too large", l)
		}
		if !left {
			dst = append(dst, s...)
		}
		need := l - c
		for need > 0 {
			for _, ch := range pad {
				if need == 0 {
					break
				}
				dst = utf8.AppendRune(dst, ch)
				need--
			}
		}
		if left {
			dst = append(dst, s...)
		}
		return dst, true, nil
	}
}

// resolveTrim: TRIM(s) removes leading and trailing spaces; the three-
// argument form TRIM(mode, chars, s) is TRIM(BOTH|LEADING|TRAILING chars
// FROM s), with mode the string 'BOTH', 'LEADING' or 'TRAILING' and chars
// a set of characters to remove.
func resolveTrim(args []types.T) (Resolved, error) {
	switch len(args) {
	case 1:
		return trimFunc("TRIM", true, true)(args)
	case 3:
		return strFunc("TRIM", "sss", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			mode, chars, s := r.str(0, i), r.str(1, i), r.str(2, i)
			var lead, trail bool
			switch strings.ToUpper(mode) {
			case "BOTH":
				lead, trail = true, true
			case "LEADING":
				lead = true
			case "TRAILING":
				trail = true
			default:
				return dst, false, fmt.Errorf("TRIM mode must be BOTH, LEADING or TRAILING, not '%s'", mode)
			}
			return append(dst, trimSet(s, chars, lead, trail)...), true, nil
		})(args)
	}
	return Resolved{}, fmt.Errorf("TRIM takes 1 or 3 arguments (TRIM(s) or TRIM(mode, chars, s)), got %d", len(args))
}

// trimFunc: LTRIM(s[, chars]) / RTRIM(s[, chars]) / TRIM(s).
func trimFunc(name string, lead, trail bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if len(args) == 2 {
			return strFunc(name, "ss", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
				return append(dst, trimSet(r.str(0, i), r.str(1, i), lead, trail)...), true, nil
			})(args)
		}
		return strFunc(name, "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			s := r.str(0, i)
			if lead {
				s = strings.TrimLeft(s, " ")
			}
			if trail {
				s = strings.TrimRight(s, " ")
			}
			return append(dst, s...), true, nil
		})(args)
	}
}

func trimSet(s, chars string, lead, trail bool) string {
	if lead {
		s = strings.TrimLeft(s, chars)
	}
	if trail {
		s = strings.TrimRight(s, chars)
	}
	return s
}

// Regular expressions use Go's RE2 syntax, which is Java's for the common
// constructs but lacks backreferences and lookaround. Each call (each
// expression of a query) compiles its pattern once: at plan time when it is
// a literal, else on first use, keeping the last one compiled.
type regexpCache struct {
	last atomic.Pointer[compiledRegexp]
}

type compiledRegexp struct {
	src string
	re  *regexpMatcher
	err error
}

func (c *regexpCache) get(src string) (*regexpMatcher, error) {
	if l := c.last.Load(); l != nil && l.src == src {
		return l.re, l.err
	}
	re, err := compileRegexp(src)
	var m *regexpMatcher
	if err == nil {
		m = newRegexpMatcher(src, re)
	}
	c.last.Store(&compiledRegexp{src, m, err})
	return m, err
}

// newRegexpCache returns the cache of a pattern argument, holding the
// pattern compiled when the argument is a constant (re, else nil); a
// constant that does not compile is an error.
func newRegexpCache(a Arg) (*regexpCache, *regexp.Regexp, error) {
	cache := &regexpCache{}
	src, ok := a.Value.(string)
	if !a.Const || !ok {
		return cache, nil, nil
	}
	re, err := compileRegexp(src)
	if err != nil {
		return nil, nil, err
	}
	cache.last.Store(&compiledRegexp{src: src, re: newRegexpMatcher(src, re)})
	return cache, re, nil
}

func compileRegexp(src string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, invalidArg("invalid regular expression '%s': %v", src, err)
	}
	return re, nil
}

// ErrInvalidArgument is the error of a call whose literal argument can
// never work (a regular expression that does not compile, a group it does
// not have): the planner reports it where the call is written.
var ErrInvalidArgument = errors.New("invalid argument")

// invalidArg is an error that is ErrInvalidArgument, with its own message.
func invalidArg(format string, args ...any) error {
	return &invalidArgError{fmt.Sprintf(format, args...)}
}

type invalidArgError struct{ msg string }

func (e *invalidArgError) Error() string        { return e.msg }
func (e *invalidArgError) Is(target error) bool { return target == ErrInvalidArgument }

// regexpFunc registers REGEXP_REPLACE, REGEXP_EXTRACT or REGEXP.
func regexpFunc(name, sig string, rt types.T) {
	f := register(name, func(args []types.T) (Resolved, error) {
		a := make([]Arg, len(args))
		for i, t := range args {
			a[i] = Arg{Type: t}
		}
		return resolveRegexp(name, sig, rt, a)
	})
	f.resolveArgs = func(args []Arg) (Resolved, error) { return resolveRegexp(name, sig, rt, args) }
}

// resolveRegexp, with Flink's semantics: REGEXP_REPLACE(s, re, repl)
// replaces every match by repl taken literally (Flink quotes it: $1 is
// no group); REGEXP_EXTRACT(s, re[, i]) returns group i (default 0, the
// whole match) of the first match, NULL when nothing matches or the group
// does not exist; REGEXP(s, re) tells whether re matches a part of s (FALSE
// for the empty pattern). A NULL argument gives NULL. A pattern that does
// not compile is an error at plan time when it is a literal (and so is a
// literal group the literal pattern lacks); a pattern computed per row that
// does not compile gives NULL (REGEXP: FALSE), as in Flink.
func resolveRegexp(name, sig string, rt types.T, args []Arg) (Resolved, error) {
	sg := sig
	if name == "REGEXP_EXTRACT" && len(args) == 3 {
		sg = "ssi"
	}
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if err := checkSig(name, sg, ts); err != nil {
		return Resolved{}, err
	}
	cache, re, err := newRegexpCache(args[1])
	if err != nil {
		return Resolved{}, err
	}
	if re != nil && len(sg) == 3 && sg[2] == 'i' && args[2].Const && args[2].Value != nil {
		if g, ok := args[2].Value.(int64); ok && (g < 0 || g > int64(re.NumSubexp())) {
			return Resolved{}, invalidArg("REGEXP_EXTRACT group %d out of range for '%s', which has %d", g, re.String(), re.NumSubexp())
		}
	}
	if rt.Kind == types.Boolean {
		return Resolved{Ret: nullableFrom(rt, ts), ArgTypes: sigTypes(sg), Kernel: strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
			mem := ctx.mem()
			r := prepRowArgs(args, sg)
			val := andValidity(mem, args, n)
			buf, out := newBoolBuf(mem, n)
			for i := range n {
				if !val.valid(i) {
					continue
				}
				src := r.str(1, i)
				if src == "" {
					continue
				}
				if re, err := cache.get(src); err == nil && re.MatchString(r.str(0, i)) {
					bitutil.SetBit(out, i)
				}
			}
			return finish(rt, n, val, buf), nil
		})}, nil
	}
	var f rowFunc
	if name == "REGEXP_REPLACE" {
		f = func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			re, err := cache.get(r.str(1, i))
			if err != nil {
				return dst, false, nil
			}
			return re.appendReplaced(dst, r.str(0, i), r.str(2, i)), true, nil
		}
	} else {
		f = func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			re, err := cache.get(r.str(1, i))
			if err != nil {
				return dst, false, nil
			}
			g := int64(0)
			if len(sg) == 3 {
				g = r.int(2, i)
			}
			if g < 0 || g > int64(re.re.NumSubexp()) {
				return dst, false, nil
			}
			m, ok := re.submatch(r.str(0, i), int(g))
			if !ok {
				return dst, false, nil
			}
			return append(dst, m...), true, nil
		}
	}
	return Resolved{Ret: rt, ArgTypes: sigTypes(sg), Kernel: strKernel(sg, f)}, nil
}
