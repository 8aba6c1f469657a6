package functions

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/streamsql/streamsql/types"
)

// Flink's encoding functions: BIN, HEX, TO_BASE64, FROM_BASE64, URL_ENCODE,
// URL_DECODE, PARSE_URL, OVERLAY; TYPEOF; and the functions refused for
// want of a type (STR_TO_MAP, REGEXP_EXTRACT_ALL).

// ErrUnsupportedType is the error of a function whose arguments or result
// need a type streamsql does not have (MAP, ARRAY).
var ErrUnsupportedType = errors.New("unsupported type")

func init() {
	// BIN(n) is n in base 2, a negative n as its 64-bit two's complement
	// (Java's Long.toBinaryString).
	register("BIN", strFunc("BIN", "i", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		return strconv.AppendUint(dst, uint64(r.int(0, i)), 2), true, nil
	}))
	register("HEX", resolveHex)
	register("TO_BASE64", strFunc("TO_BASE64", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		return base64.StdEncoding.AppendEncode(dst, bytesOf(r.str(0, i))), true, nil
	}))
	register("FROM_BASE64", strFunc("FROM_BASE64", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s := r.str(0, i)
		// Java's decoder, which Flink's uses, takes the padding as optional.
		enc := base64.StdEncoding
		if len(s)%4 != 0 && !strings.HasSuffix(s, "=") {
			enc = base64.RawStdEncoding
		}
		out, err := enc.AppendDecode(dst, bytesOf(s))
		if err != nil {
			return dst, false, fmt.Errorf("FROM_BASE64: %s is not base64: %v", quoteValue(s), err)
		}
		return out, true, nil
	}))
	register("URL_ENCODE", strFunc("URL_ENCODE", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		return appendURLEncode(dst, r.str(0, i)), true, nil
	}))
	register("URL_DECODE", strFunc("URL_DECODE", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		out, ok := appendURLDecode(dst, r.str(0, i))
		return out, ok, nil
	}))
	register("PARSE_URL", resolveParseURL)
	register("OVERLAY", resolveOverlay)
	f := register("TYPEOF", func(args []types.T) (Resolved, error) { return resolveTypeOf(argsOf(args)) })
	f.resolveArgs = resolveTypeOf
	register("STR_TO_MAP", func(args []types.T) (Resolved, error) {
		return Resolved{}, fmt.Errorf("STR_TO_MAP returns a MAP, and the MAP type is not supported: %w", ErrUnsupportedType)
	}).Refused = true
	register("SPLIT", func(args []types.T) (Resolved, error) {
		return Resolved{}, fmt.Errorf("SPLIT returns an ARRAY, and the ARRAY type is not supported: %w", ErrUnsupportedType)
	}).Refused = true
	register("REGEXP_EXTRACT_ALL", func(args []types.T) (Resolved, error) {
		return Resolved{}, fmt.Errorf("REGEXP_EXTRACT_ALL returns an ARRAY, and the ARRAY type is not supported: %w", ErrUnsupportedType)
	}).Refused = true
}

// bytesOf views s as bytes without copying; the callee must not keep or
// change them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// quoteValue quotes s for an error message, cut to 64 bytes.
func quoteValue(s string) string {
	if len(s) > 64 {
		return "'" + strings.ToValidUTF8(s[:64], "") + "...'"
	}
	return "'" + s + "'"
}

// resolveHex: HEX(integer) is the integer in base 16 (a negative one as
// its 64-bit two's complement), HEX(string) its UTF-8 bytes in base 16,
// upper case both.
func resolveHex(args []types.T) (Resolved, error) {
	if err := nargs("HEX", args, 1, 1); err != nil {
		return Resolved{}, err
	}
	if args[0].IsInteger() || args[0].Kind == types.Null {
		return strFunc("HEX", "i", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			start := len(dst)
			dst = strconv.AppendUint(dst, uint64(r.int(0, i)), 16)
			upperASCII(dst[start:])
			return dst, true, nil
		})(args)
	}
	return strFunc("HEX", "s", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		const digits = "0123456789ABCDEF"
		s := r.str(0, i)
		for j := 0; j < len(s); j++ {
			dst = append(dst, digits[s[j]>>4], digits[s[j]&15])
		}
		return dst, true, nil
	})(args)
}

func upperASCII(b []byte) {
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
}

// appendURLEncode is Java's URLEncoder.encode(s, UTF-8), as Flink's
// URL_ENCODE: letters, digits and . - * _ stay, a space is '+', every
// other byte %XX.
func appendURLEncode(dst []byte, s string) []byte {
	const digits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '*', c == '_':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', digits[c>>4], digits[c&15])
		}
	}
	return dst
}

// appendURLDecode is Java's URLDecoder.decode(s, UTF-8), as Flink's
// URL_DECODE: '+' is a space, %XX a byte; false (NULL) for a '%' without
// two hex digits. Decoded bytes that are no UTF-8 become U+FFFD.
func appendURLDecode(dst []byte, s string) ([]byte, bool) {
	start := len(dst)
	escaped := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			dst = append(dst, ' ')
		case '%':
			if i+2 >= len(s) {
				return dst[:start], false
			}
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return dst[:start], false
			}
			dst = append(dst, hi<<4|lo)
			escaped = true
			i += 2
		default:
			dst = append(dst, c)
		}
	}
	if escaped && !utf8.Valid(dst[start:]) {
		fixed := []rune(string(dst[start:])) // invalid bytes become U+FFFD
		dst = dst[:start]
		for _, r := range fixed {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// resolveParseURL: PARSE_URL(url, part[, key]) is a part of url as Java's
// java.net.URL reads it: HOST, PATH, QUERY, REF, PROTOCOL, FILE, AUTHORITY
// or USERINFO (upper case, as Flink compares them); with key, the value of
// key in the QUERY part. NULL when url does not parse (no scheme, a
// scheme other than http, https, ftp or file, a port that is no number),
// when the part is absent or not one of these, or when the key is not in
// the query.
func resolveParseURL(args []types.T) (Resolved, error) {
	if err := nargs("PARSE_URL", args, 2, 3); err != nil {
		return Resolved{}, err
	}
	if len(args) == 2 {
		return strFunc("PARSE_URL", "ss", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			v, ok := urlPart(r.str(0, i), r.str(1, i))
			return append(dst, v...), ok, nil
		})(args)
	}
	return strFunc("PARSE_URL", "sss", types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		if r.str(1, i) != "QUERY" {
			return dst, false, nil
		}
		q, ok := urlPart(r.str(0, i), "QUERY")
		if !ok {
			return dst, false, nil
		}
		v, ok := queryValue(q, r.str(2, i))
		return append(dst, v...), ok, nil
	})(args)
}

// urlPart returns part of u, false when u does not parse or lacks it.
func urlPart(u, part string) (string, bool) {
	colon := strings.IndexByte(u, ':')
	if colon <= 0 {
		return "", false
	}
	scheme := u[:colon]
	switch {
	case strings.EqualFold(scheme, "http"), strings.EqualFold(scheme, "https"),
		strings.EqualFold(scheme, "ftp"), strings.EqualFold(scheme, "file"):
	default:
		return "", false
	}
	rest := u[colon+1:]
	ref, hasRef := "", false
	if j := strings.IndexByte(rest, '#'); j >= 0 {
		rest, ref, hasRef = rest[:j], rest[j+1:], true
	}
	// The query is cut off first, so a '?' ends the authority too.
	base, query, hasQuery := rest, "", false
	if j := strings.IndexByte(rest, '?'); j >= 0 {
		base, query, hasQuery = rest[:j], rest[j+1:], true
	}
	authority, hasAuthority := "", false
	path, pathAndQuery := base, rest
	if strings.HasPrefix(base, "//") {
		a := base[2:]
		end := strings.IndexByte(a, '/')
		if end < 0 {
			end = len(a)
		}
		authority, hasAuthority, path, pathAndQuery = a[:end], true, a[end:], rest[2+end:]
	}
	host, userinfo, hasUser := authority, "", false
	if j := strings.IndexByte(authority, '@'); j >= 0 {
		if strings.LastIndexByte(authority, '@') != j {
			return "", false
		}
		userinfo, host, hasUser = authority[:j], authority[j+1:], true
	}
	if j := strings.LastIndexByte(host, ':'); j >= 0 && !strings.HasSuffix(host, "]") {
		for _, c := range []byte(host[j+1:]) {
			if !isDigit(c) {
				return "", false
			}
		}
		host = host[:j]
	}
	switch part {
	case "HOST":
		return host, true
	case "PATH":
		return path, true
	case "QUERY":
		return query, hasQuery
	case "REF":
		return ref, hasRef
	case "PROTOCOL":
		return strings.ToLower(scheme), true
	case "FILE":
		return pathAndQuery, true // the path, and '?' and the query if any
	case "AUTHORITY":
		return authority, hasAuthority
	case "USERINFO":
		return userinfo, hasUser
	}
	return "", false
}

// queryValue is the value of the first key=value of q (pairs cut at '&')
// whose key is key, as Flink's pattern (&|^)key=([^&]*).
func queryValue(q, key string) (string, bool) {
	for {
		pair, next, more := strings.Cut(q, "&")
		if len(pair) > len(key) && pair[len(key)] == '=' && pair[:len(key)] == key {
			return pair[len(key)+1:], true
		}
		if !more {
			return "", false
		}
		q = next
	}
}

// resolveOverlay: OVERLAY(s PLACING r FROM start [FOR len]), written
// OVERLAY(s, r, start[, len]), replaces len characters of s (r's length
// when omitted) from position start with r, as Flink's: s unchanged for a
// start before 1 or past its end; a len that reaches past s's end, or is
// 0 or less, keeps nothing after r.
func resolveOverlay(args []types.T) (Resolved, error) {
	if err := nargs("OVERLAY", args, 3, 4); err != nil {
		return Resolved{}, err
	}
	sig := "ssii"[:len(args)]
	return strFunc("OVERLAY", sig, types.StringType, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		s, rep, start := r.str(0, i), r.str(1, i), r.int(2, i)
		var n int64
		if len(sig) == 4 {
			n = r.int(3, i)
		} else {
			n = int64(utf8.RuneCountInString(rep))
		}
		c := int64(utf8.RuneCountInString(s))
		if start <= 0 || start > c {
			return append(dst, s...), true, nil
		}
		dst = append(dst, s[:runeOffset(s, start-1)]...)
		dst = append(dst, rep...)
		if n > 0 && n <= c-start { // start+n <= c, without overflow
			dst = append(dst, s[runeOffset(s, start-1+n):]...)
		}
		return dst, true, nil
	})(args)
}

// resolveTypeOf: TYPEOF(x[, force_serializable]) is the name of x's type,
// a constant of the plan: Flink's summary form by default (STRING, INT NOT
// NULL), its serializable form (VARCHAR(2147483647)) when
// force_serializable is the literal TRUE.
func resolveTypeOf(args []Arg) (Resolved, error) {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if err := nargs("TYPEOF", ts, 1, 2); err != nil {
		return Resolved{}, err
	}
	serializable := false
	if len(args) == 2 {
		b, ok := args[1].Value.(bool)
		if !args[1].Const || !ok || args[1].Type.Kind != types.Boolean {
			return Resolved{}, invalidArg("TYPEOF's second argument must be the literal TRUE or FALSE")
		}
		serializable = b
	}
	name := typeName(args[0].Type, serializable)
	rt := types.T{Kind: types.String, NotNull: true}
	return Resolved{Ret: rt, ArgTypes: ts, Infallible: true, Kernel: func(*Context, []Vec, int) (Vec, error) {
		return ConstVec(rt, name), nil
	}}, nil
}

// typeName is t as Flink's LogicalType prints it: asSummaryString, or
// asSerializableString when serializable.
func typeName(t types.T, serializable bool) string {
	var s string
	switch t.Kind {
	case types.String:
		s = "STRING"
		if serializable {
			s = "VARCHAR(2147483647)"
		}
	case types.Bytes:
		s = "BYTES"
		if serializable {
			s = "VARBINARY(2147483647)"
		}
	case types.Decimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case types.Time:
		s = fmt.Sprintf("TIME(%d)", t.Precision)
	case types.Timestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case types.IntervalDayTime:
		s = "INTERVAL DAY(2) TO SECOND(3)"
	case types.IntervalYearMonth:
		s = "INTERVAL YEAR(2) TO MONTH"
	case types.Row:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = "`" + strings.ReplaceAll(f.Name, "`", "``") + "` " + typeName(f.Type, serializable)
		}
		s = "ROW<" + strings.Join(parts, ", ") + ">"
	default:
		s = t.Nullable().String()
	}
	if t.NotNull && t.Kind != types.Null {
		s += " NOT NULL"
	}
	return s
}
