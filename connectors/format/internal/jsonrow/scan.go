package jsonrow

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrSyntax is wrapped by the errors about malformed JSON.
var ErrSyntax = errors.New("invalid JSON")

// SkipWS returns the position of the first byte at or after p that is not
// JSON white space.
func SkipWS(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r' || b[p] == '\n') {
		p++
	}
	return p
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// CheckUTF8 returns an error naming the offset of the first byte of rec
// that is not UTF-8, which JSON text must be (RFC 8259): a string holding
// one would reach a STRING column, and every JSON writer after it, as it
// is.
func CheckUTF8(rec []byte) error {
	if utf8.Valid(rec) {
		return nil
	}
	for p := 0; p < len(rec); {
		r, n := utf8.DecodeRune(rec[p:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Errorf("%w: invalid UTF-8 at offset %d (byte 0x%02x)", ErrSyntax, p, rec[p])
		}
		p += n
	}
	return nil
}

// checkLiteral returns an error unless tok, a value that is no string,
// object or array, is a JSON literal: true, false, null or a number
// (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?). NaN and the infinities
// are no JSON (they are read from strings: "NaN", "Infinity").
func checkLiteral(tok []byte, off int) error {
	switch string(tok) {
	case "true", "false", "null":
		return nil
	}
	p := 0
	digits := func() bool {
		start := p
		for p < len(tok) && tok[p] >= '0' && tok[p] <= '9' {
			p++
		}
		return p > start
	}
	if p < len(tok) && tok[p] == '-' {
		p++
	}
	ok := p < len(tok) && tok[p] == '0'
	if ok {
		p++
	} else {
		ok = digits()
	}
	if ok && p < len(tok) && tok[p] == '.' {
		p++
		ok = digits()
	}
	if ok && p < len(tok) && (tok[p] == 'e' || tok[p] == 'E') {
		p++
		if p < len(tok) && (tok[p] == '+' || tok[p] == '-') {
			p++
		}
		ok = digits()
	}
	if ok && p == len(tok) {
		return nil
	}
	shown := tok
	if len(shown) > 40 {
		shown = shown[:40]
	}
	return fmt.Errorf("%w: %q at offset %d is not a JSON value (NaN and infinities are written as strings: \"NaN\", \"Infinity\")", ErrSyntax, shown, off)
}

// SkipValue returns the position after the value (string, object, array or
// literal) at b[p].
func SkipValue(b []byte, p int) (int, error) {
	if p >= len(b) {
		return p, fmt.Errorf("%w: expected a value", ErrSyntax)
	}
	switch b[p] {
	case '"':
		for p++; p < len(b); p++ {
			switch b[p] {
			case '\\':
				p++
			case '"':
				return p + 1, nil
			}
		}
		return p, fmt.Errorf("%w: unterminated string", ErrSyntax)
	case '{', '[':
		return skipNested(b, p)
	}
	start := p
	for p < len(b) && !isDelim(b[p]) {
		p++
	}
	if p == start {
		return p, fmt.Errorf("%w: expected a value at offset %d", ErrSyntax, start)
	}
	return p, checkLiteral(b[start:p], start)
}

// skipNested returns the position after the object or array at p.
func skipNested(b []byte, p int) (int, error) {
	depth := 0
	for p < len(b) {
		switch b[p] {
		case '"':
			for p++; p < len(b) && b[p] != '"'; p++ {
				if b[p] == '\\' {
					p++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return p + 1, nil
			}
		}
		p++
	}
	return p, fmt.Errorf("%w: unterminated object or array", ErrSyntax)
}

// Unquote appends the unescaped string starting at b[p] == '"' to dst and
// returns the position after the closing quote.
func Unquote(dst, b []byte, p int) ([]byte, int, error) {
	p++
	for p < len(b) {
		c := b[p]
		switch {
		case c == '"':
			return dst, p + 1, nil
		case c != '\\':
			dst = append(dst, c)
			p++
			continue
		}
		if p+1 >= len(b) {
			break
		}
		p++
		switch b[p] {
		case '"', '\\', '/':
			dst = append(dst, b[p])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n := hex4(b, p+1)
			if n < 0 {
				return dst, p, fmt.Errorf("%w: bad \\u escape", ErrSyntax)
			}
			p += n
			if r >= 0xd800 && r < 0xdc00 && p+2 < len(b) && b[p+1] == '\\' && b[p+2] == 'u' {
				if r2, m := hex4(b, p+3); m > 0 && r2 >= 0xdc00 && r2 < 0xe000 {
					r = (r-0xd800)<<10 + (r2 - 0xdc00) + 0x10000
					p += 2 + m
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, p, fmt.Errorf("%w: bad escape '\\%c'", ErrSyntax, b[p])
		}
		p++
	}
	return dst, p, fmt.Errorf("%w: unterminated string", ErrSyntax)
}

func hex4(b []byte, p int) (rune, int) {
	if p+4 > len(b) {
		return 0, -1
	}
	var r rune
	for _, c := range b[p : p+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, -1
		}
	}
	return r, 4
}

// Members calls f for each member of the object at b[p] with the member's
// name (unescaped, valid during the call) and the position of its value;
// f returns the position after the value. Members returns the position
// after the object.
func Members(b []byte, p int, name *[]byte, f func(name []byte, p int) (int, error)) (int, error) {
	if p >= len(b) || b[p] != '{' {
		return p, fmt.Errorf("%w: expected an object", ErrSyntax)
	}
	p = SkipWS(b, p+1)
	if p < len(b) && b[p] == '}' {
		return p + 1, nil
	}
	for {
		if p >= len(b) || b[p] != '"' {
			return p, fmt.Errorf("%w: expected a member name at offset %d", ErrSyntax, p)
		}
		var err error
		*name, p, err = Unquote((*name)[:0], b, p)
		if err != nil {
			return p, err
		}
		p = SkipWS(b, p)
		if p >= len(b) || b[p] != ':' {
			return p, fmt.Errorf("%w: expected ':' at offset %d", ErrSyntax, p)
		}
		p = SkipWS(b, p+1)
		if p, err = f(*name, p); err != nil {
			return p, err
		}
		p = SkipWS(b, p)
		if p < len(b) && b[p] == ',' {
			p = SkipWS(b, p+1)
			continue
		}
		if p < len(b) && b[p] == '}' {
			return p + 1, nil
		}
		return p, fmt.Errorf("%w: expected ',' or '}' at offset %d", ErrSyntax, p)
	}
}
