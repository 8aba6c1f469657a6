package functions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The SQL/JSON path language of Flink's JSON functions (Calcite's, over
// Jayway JsonPath): an optional mode, lax or strict (strict when left
// out), the root $, and steps .key, ."quoted key", .['quoted key'],
// ['quoted key'], [n] (n < 0 counts from the end), [*] and .*.
//
// A path without a wildcard finds at most one value. In strict mode a
// step that does not apply (a key the object lacks, an index past the
// array's end, a key of a non-object, an index of a non-array) is an
// error; in lax mode it finds nothing. A path with a wildcard finds the
// array of every value it reaches (steps that do not apply below a
// wildcard are skipped, in both modes).

// jsonObject is a JSON object with its keys in their written order (a key
// written twice keeps its first place and its last value, as Jackson).
type jsonObject struct {
	keys []string
	vals []any
}

func (o *jsonObject) get(k string) (any, bool) {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// JSON values are nil (null), bool, json.Number, string, []any and
// *jsonObject.

// jsonDecoder decodes JSON texts one after another (one per row of a
// batch) with one jsontext decoder. Keys written twice keep the first
// place and the last value, as Jackson's; text that is not UTF-8 is read
// with U+FFFD in its place.
type jsonDecoder struct {
	r    strings.Reader
	d    *jsontext.Decoder
	offs [][2]int // the elements of an array (find)
}

var jsonDecodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

func newJSONDecoder() *jsonDecoder {
	j := &jsonDecoder{}
	j.d = jsontext.NewDecoder(&j.r, jsonDecodeOptions...)
	return j
}

// parse decodes one JSON text into a value; text after it other than
// white space is an error.
func (j *jsonDecoder) parse(s string) (any, error) {
	j.r.Reset(s)
	j.d.Reset(&j.r, jsonDecodeOptions...)
	v, err := j.value()
	if err != nil {
		return nil, err
	}
	if _, err := j.d.ReadToken(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func (j *jsonDecoder) value() (any, error) {
	tok, err := j.d.ReadToken()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch tok.Kind() {
	case '[':
		arr := []any{}
		for j.d.PeekKind() != ']' {
			v, err := j.value()
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := j.d.ReadToken(); err != nil {
			return nil, err
		}
		return arr, nil
	case '{':
		o := &jsonObject{}
		for j.d.PeekKind() != '}' {
			kt, err := j.d.ReadToken()
			if err != nil {
				return nil, err
			}
			k := kt.String()
			v, err := j.value()
			if err != nil {
				return nil, err
			}
			if i := indexOf(o.keys, k); i >= 0 {
				o.vals[i] = v
			} else {
				o.keys = append(o.keys, k)
				o.vals = append(o.vals, v)
			}
		}
		if _, err := j.d.ReadToken(); err != nil {
			return nil, err
		}
		return o, nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected %s", tok.Kind())
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// isJSONScalar reports whether v is a string, number or boolean.
func isJSONScalar(v any) bool {
	switch v.(type) {
	case string, json.Number, bool:
		return true
	}
	return false
}

// appendJSONNumber appends a JSON number as Jackson reads and Java prints
// it: an integer as written, any other number as a Java double (1.0,
// 1.0E20).
func appendJSONNumber(dst []byte, n json.Number) []byte {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if x, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.AppendInt(dst, x, 10)
		}
		return append(dst, s...) // a BigInteger
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return append(dst, s...)
	}
	return appendJavaFloat(dst, f, 64)
}

// appendScalarText appends the SQL text of a JSON scalar (JSON_VALUE):
// a string's characters, a number as Java prints it, true or false.
func appendScalarText(dst []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		return append(dst, x...)
	case json.Number:
		return appendJSONNumber(dst, x)
	case bool:
		return strconv.AppendBool(dst, x)
	}
	return dst
}

// appendJSON appends v as compact JSON text, as Jackson writes it.
func appendJSON(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case json.Number:
		return appendJSONNumber(dst, x)
	case string:
		return appendJSONString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case *jsonObject:
		dst = append(dst, '{')
		for i, k := range x.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSON(dst, x.vals[i])
		}
		return append(dst, '}')
	}
	return dst
}

// appendJSONString appends s quoted as JSON, escaping what Jackson
// escapes: the quote, the backslash and control characters.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// jsonPath is a parsed SQL/JSON path.
type jsonPath struct {
	text   string
	strict bool
	steps  []pathStep
	wild   bool // some step is a wildcard: the result is an array
}

type pathStep struct {
	kind  byte // 'k' key, 'i' index, '*' every element or member
	key   string
	index int
}

// ErrJSONPath is the error of a JSON path that does not parse.
var ErrJSONPath = errors.New("bad JSON path")

// parseJSONPath parses a path; its error names the character where the
// path goes wrong.
func parseJSONPath(s string) (*jsonPath, error) {
	p := &jsonPath{text: s, strict: true}
	i := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %s at character %d: %s", ErrJSONPath, quoteValue(s), i+1, fmt.Sprintf(format, args...))
	}
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	skipSpace()
	for _, m := range []string{"lax", "strict"} {
		if len(s)-i > len(m) && strings.EqualFold(s[i:i+len(m)], m) && (s[i+len(m)] == ' ' || s[i+len(m)] == '\t') {
			p.strict = m == "strict"
			i += len(m)
			skipSpace()
			break
		}
	}
	if i >= len(s) || s[i] != '$' {
		if i < len(s) && unicode.IsLetter(rune(s[i])) {
			return nil, bad("expected lax, strict or $")
		}
		return nil, bad("a path starts with $")
	}
	i++
	quoted := func() (string, error) {
		q := s[i]
		i++
		var b strings.Builder
		for i < len(s) && s[i] != q {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
			i++
		}
		if i >= len(s) {
			return "", bad("unterminated quoted key")
		}
		i++
		return b.String(), nil
	}
	bracket := func() error {
		i++ // [
		skipSpace()
		if i >= len(s) {
			return bad("unterminated [")
		}
		switch c := s[i]; {
		case c == '*':
			i++
			p.steps = append(p.steps, pathStep{kind: '*'})
			p.wild = true
		case c == '"' || c == '\'':
			k, err := quoted()
			if err != nil {
				return err
			}
			p.steps = append(p.steps, pathStep{kind: 'k', key: k})
		case c == '-' || ('0' <= c && c <= '9'):
			j := i + 1
			for j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(s[i:j])
			if err != nil {
				return bad("bad array index %q", s[i:j])
			}
			i = j
			p.steps = append(p.steps, pathStep{kind: 'i', index: n})
		default:
			return bad("expected an index, * or a quoted key in [ ]")
		}
		skipSpace()
		if i >= len(s) || s[i] != ']' {
			return bad("expected ]")
		}
		i++
		return nil
	}
	for {
		skipSpace()
		if i >= len(s) {
			return p, nil
		}
		switch s[i] {
		case '[':
			if err := bracket(); err != nil {
				return nil, err
			}
		case '.':
			i++
			if i >= len(s) {
				return nil, bad("expected a key after .")
			}
			switch c := s[i]; {
			case c == '*':
				i++
				p.steps = append(p.steps, pathStep{kind: '*'})
				p.wild = true
			case c == '[':
				if err := bracket(); err != nil {
					return nil, err
				}
			case c == '"' || c == '\'':
				k, err := quoted()
				if err != nil {
					return nil, err
				}
				p.steps = append(p.steps, pathStep{kind: 'k', key: k})
			default:
				j := i
				for j < len(s) {
					r, size := utf8.DecodeRuneInString(s[j:])
					if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
						break
					}
					j += size
				}
				if j == i {
					return nil, bad("expected a key after .")
				}
				p.steps = append(p.steps, pathStep{kind: 'k', key: s[i:j]})
				i = j
			}
		default:
			return nil, bad("unexpected %q", s[i:i+1])
		}
	}
}

// errPathStep is the error of a strict path step that does not apply.
type errPathStep struct{ msg string }

func (e *errPathStep) Error() string { return e.msg }

// eval applies p to root. It returns the value found (nil: nothing, or
// JSON null) or, in strict mode, the error of a step that does not apply.
func (p *jsonPath) eval(root any) (any, error) {
	if !p.wild {
		cur := root
		for si, st := range p.steps {
			next, ok, why := applyStep(cur, st)
			if !ok {
				if p.strict {
					return nil, &errPathStep{fmt.Sprintf("%s: %s at %s", p.describe(), why, p.prefix(si))}
				}
				return nil, nil
			}
			cur = next
		}
		return cur, nil
	}
	cur := []any{root}
	wild := false
	for si, st := range p.steps {
		var next []any
		for _, v := range cur {
			if st.kind == '*' {
				switch x := v.(type) {
				case []any:
					next = append(next, x...)
				case *jsonObject:
					next = append(next, x.vals...)
				default:
					if !wild && p.strict {
						return nil, &errPathStep{fmt.Sprintf("%s: no array or object at %s", p.describe(), p.prefix(si))}
					}
				}
				continue
			}
			nv, ok, why := applyStep(v, st)
			if !ok {
				if !wild && p.strict {
					return nil, &errPathStep{fmt.Sprintf("%s: %s at %s", p.describe(), why, p.prefix(si))}
				}
				continue
			}
			next = append(next, nv)
		}
		if st.kind == '*' {
			wild = true
		}
		cur = next
	}
	if cur == nil {
		cur = []any{}
	}
	return cur, nil
}

// describe names the path in messages: "strict path '$.a'" ("path
// 'strict $.a'" when it says so itself).
func (p *jsonPath) describe() string {
	t := strings.TrimSpace(p.text)
	if p.strict && !(len(t) > 6 && strings.EqualFold(t[:6], "strict")) {
		return "strict path " + quoteValue(p.text)
	}
	if !p.strict && !(len(t) > 3 && strings.EqualFold(t[:3], "lax")) {
		return "lax path " + quoteValue(p.text)
	}
	return "path " + quoteValue(p.text)
}

// prefix is the path up to step si, for messages.
func (p *jsonPath) prefix(si int) string {
	var b strings.Builder
	b.WriteByte('$')
	for _, st := range p.steps[:si] {
		switch st.kind {
		case 'k':
			b.WriteString("['" + st.key + "']")
		case 'i':
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
		case '*':
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func applyStep(v any, st pathStep) (any, bool, string) {
	switch st.kind {
	case 'k':
		o, ok := v.(*jsonObject)
		if !ok {
			return nil, false, fmt.Sprintf("no object for key '%s'", st.key)
		}
		x, ok := o.get(st.key)
		if !ok {
			return nil, false, fmt.Sprintf("no key '%s'", st.key)
		}
		return x, true, ""
	case 'i':
		a, ok := v.([]any)
		if !ok {
			return nil, false, fmt.Sprintf("no array for index %d", st.index)
		}
		i := st.index
		if i < 0 {
			i += len(a)
		}
		if i < 0 || i >= len(a) {
			return nil, false, fmt.Sprintf("index %d out of bounds", st.index)
		}
		return a[i], true, ""
	}
	return nil, false, "bad step"
}

// jsonKind classifies JSON text for IS JSON: 0 not JSON, else 'o'
// object, 'a' array, 's' scalar (null too).
func jsonKind(s string) byte {
	b := bytes.TrimLeft(bytesOf(s), " \t\r\n")
	if !json.Valid(b) {
		return 0
	}
	switch b[0] {
	case '{':
		return 'o'
	case '[':
		return 'a'
	}
	return 's'
}

// JSONObjectLastWins rewrites a JSON object's text so that a key written
// more than once appears once, in its first place, with its last value
// (JSON_OBJECTAGG); the values' text is kept as written.
func JSONObjectLastWins(s string) (string, error) {
	d := json.NewDecoder(strings.NewReader(s))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return "", fmt.Errorf("not a JSON object: %s", quoteValue(s))
	}
	var keys []string
	var vals []json.RawMessage
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return "", err
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return "", err
		}
		if i := indexOf(keys, k); i >= 0 {
			vals[i] = v
			continue
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	if len(keys) == 0 {
		return "{}", nil
	}
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, k)
		out = append(out, ':')
		out = append(out, vals[i]...)
	}
	return string(append(out, '}')), nil
}

// find applies a path without a wildcard to one JSON text without
// building its tree: the text is checked whole, then each step scans only
// the value the step before found (a key written twice: its last value).
// It returns the value found as eval does (nil: nothing or JSON null), the
// error of a strict step, or (bad) the error of a text that is no JSON.
func (j *jsonDecoder) find(doc string, p *jsonPath) (v any, err error, bad error) {
	j.r.Reset(doc)
	j.d.Reset(&j.r, jsonDecodeOptions...)
	raw, rerr := j.d.ReadValue()
	if rerr != nil {
		if rerr == io.EOF {
			rerr = io.ErrUnexpectedEOF
		}
		return nil, nil, rerr
	}
	end := int(j.d.InputOffset())
	sub := doc[end-len(raw) : end]
	if _, err := j.d.ReadToken(); err != io.EOF {
		return nil, nil, errors.New("text after the JSON value")
	}
	for si, st := range p.steps {
		var ok bool
		var why string
		sub, ok, why = j.step(sub, st)
		if !ok {
			if p.strict {
				return nil, &errPathStep{fmt.Sprintf("%s: %s at %s", p.describe(), why, p.prefix(si))}, nil
			}
			return nil, nil, nil
		}
	}
	switch sub[0] {
	case '{', '[':
		v, err := j.parse(sub)
		return v, nil, err
	case '"':
		b, err := jsontext.AppendUnquote(nil, sub)
		if err != nil {
			b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
		}
		return string(b), nil, nil
	case 't':
		return true, nil, nil
	case 'f':
		return false, nil, nil
	case 'n':
		return nil, nil, nil
	}
	return json.Number(sub), nil, nil
}

// step applies one key or index step to the valid JSON text sub.
func (j *jsonDecoder) step(sub string, st pathStep) (string, bool, string) {
	j.r.Reset(sub)
	j.d.Reset(&j.r, jsonDecodeOptions...)
	switch st.kind {
	case 'k':
		if sub[0] != '{' {
			return "", false, fmt.Sprintf("no object for key '%s'", st.key)
		}
		j.d.ReadToken() // {
		found := ""
		ok := false
		for j.d.PeekKind() != '}' {
			name, _ := j.d.ReadValue()
			match := false
			if n := len(name); n >= 2 && bytes.IndexByte(name[1:n-1], '\\') < 0 {
				match = string(name[1:n-1]) == st.key
			} else if u, err := jsontext.AppendUnquote(nil, name); err == nil {
				match = string(u) == st.key
			}
			v, err := j.d.ReadValue()
			if err != nil {
				break
			}
			if match {
				end := int(j.d.InputOffset())
				found, ok = sub[end-len(v):end], true
			}
		}
		if !ok {
			return "", false, fmt.Sprintf("no key '%s'", st.key)
		}
		return found, true, ""
	case 'i':
		if sub[0] != '[' {
			return "", false, fmt.Sprintf("no array for index %d", st.index)
		}
		j.d.ReadToken() // [
		j.offs = j.offs[:0]
		for j.d.PeekKind() != ']' {
			v, err := j.d.ReadValue()
			if err != nil {
				break
			}
			end := int(j.d.InputOffset())
			j.offs = append(j.offs, [2]int{end - len(v), end})
		}
		i := st.index
		if i < 0 {
			i += len(j.offs)
		}
		if i < 0 || i >= len(j.offs) {
			return "", false, fmt.Sprintf("index %d out of bounds", st.index)
		}
		return sub[j.offs[i][0]:j.offs[i][1]], true, ""
	}
	return "", false, "bad step"
}
