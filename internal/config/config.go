// Package config defines typed options: a key, the type of its value, its
// default, what values it allows and what it means. An option's text is
// parsed by its definition only, so every bad value gets the same kind of
// message, naming the key, the value and what is allowed:
//
//	option 'parallelism.default' must be an integer between 1 and 32768, got '0'
//
// The packages that read options (session, planner, checkpoint, catalog)
// declare their definitions with the constructors here and parse a scope's
// options (a session's SET, a job's, a table's WITH) once into a typed
// struct; what runs the job reads only those structs.
package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/streamsql/streamsql/types"
)

// ErrBadValue is matched (errors.Is) by every *Error.
var ErrBadValue = errors.New("bad option value")

// Error is a value an option does not allow.
type Error struct {
	Key, Value string
	// Allowed says what the option takes ("a positive integer").
	Allowed string
}

func (e *Error) Error() string {
	return fmt.Sprintf("option '%s' must be %s, got '%s'", e.Key, e.Allowed, printable(e.Value))
}

// printable is s with its control characters and invalid UTF-8 escaped
// as Go escapes them (\n, \x00), so that a message never carries them.
func printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

// Is makes errors.Is(err, ErrBadValue) true.
func (e *Error) Is(target error) bool { return target == ErrBadValue }

// Def is an option's definition, whatever the type of its value.
type Def interface {
	// Key is the option's name ('parallelism.default').
	Key() string
	// DefaultText is the default as the docs give it ("" when there is
	// none).
	DefaultText() string
	// Allowed says what values the option takes ("a positive integer").
	Allowed() string
	// Doc says what the option does.
	Doc() string
	// Check validates a value as the option will read it.
	Check(value string) error
}

// Option is a definition whose values are of type T.
type Option[T any] struct {
	key, defText, allowed, doc string
	def                        T
	parse                      func(string) (T, bool)
}

// Key is the option's name.
func (o *Option[T]) Key() string { return o.key }

// DefaultText is the default as the docs give it.
func (o *Option[T]) DefaultText() string { return o.defText }

// Allowed says what values the option takes.
func (o *Option[T]) Allowed() string { return o.allowed }

// Doc says what the option does.
func (o *Option[T]) Doc() string { return o.doc }

// Default is the value of the option when it is not set.
func (o *Option[T]) Default() T { return o.def }

// Check validates value.
func (o *Option[T]) Check(value string) error {
	_, err := o.Parse(value)
	return err
}

// Parse parses value (surrounding blanks ignored), or returns an *Error.
func (o *Option[T]) Parse(value string) (T, error) {
	v, ok := o.parse(strings.TrimSpace(value))
	if !ok {
		var zero T
		return zero, &Error{Key: o.key, Value: value, Allowed: o.allowed}
	}
	return v, nil
}

// Get parses m[key]; an absent or empty value is the default.
func (o *Option[T]) Get(m map[string]string) (T, error) {
	v, ok := m[o.key]
	if !ok || strings.TrimSpace(v) == "" {
		return o.def, nil
	}
	return o.Parse(v)
}

// ShowDefault sets the default as the docs give it, when the value's own
// text does not say it well ("0 (off)", "<data-dir>/savepoints").
func (o *Option[T]) ShowDefault(text string) *Option[T] {
	o.defText = text
	return o
}

// Allows sets what the docs and messages say the option takes, for an
// option whose values are checked elsewhere (against a table's schema,
// say).
func (o *Option[T]) Allows(text string) *Option[T] {
	o.allowed = text
	return o
}

// Where narrows the values o takes to those ok accepts; allowed says what
// they are, in the docs and in the message of a value refused.
func (o *Option[T]) Where(allowed string, ok func(T) bool) *Option[T] {
	parse := o.parse
	o.allowed = allowed
	o.parse = func(s string) (T, bool) {
		v, good := parse(s)
		return v, good && ok(v)
	}
	return o
}

// Int is an integer option in [lo, hi].
func Int(key string, def, lo, hi int, doc string) *Option[int] {
	return &Option[int]{key: key, def: def, defText: strconv.Itoa(def), allowed: IntRange(int64(lo), int64(hi)), doc: doc,
		parse: func(s string) (int, bool) {
			n, err := strconv.Atoi(s)
			return n, err == nil && n >= lo && n <= hi
		}}
}

// Bytes is a memory size option of at least lo bytes: a number of bytes
// with an optional unit (b, kb, mb, gb, tb; k, m, g, t; 1024-based), as
// Flink's MemorySize ('512mb', '1 gb', '4096').
func Bytes(key string, def, lo int64, doc string) *Option[int64] {
	return &Option[int64]{key: key, def: def, defText: FormatBytes(def),
		allowed: fmt.Sprintf("a memory size of at least %s such as '512 mb'", FormatBytes(lo)), doc: doc,
		parse: func(s string) (int64, bool) {
			n, err := ParseBytes(s)
			return n, err == nil && n >= lo
		}}
}

// ParseBytes reads a memory size: a positive number of bytes with an
// optional unit (b, kb, mb, gb, tb; k, m, g, t; 1024-based), as Flink's
// MemorySize.
func ParseBytes(v string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a positive size such as '128 mb'")
	}
	unit := strings.TrimSpace(t[i:])
	var shift uint
	switch unit {
	case "", "b", "bytes":
	case "k", "kb":
		shift = 10
	case "m", "mb":
		shift = 20
	case "g", "gb":
		shift = 30
	case "t", "tb":
		shift = 40
	default:
		return 0, fmt.Errorf("unknown unit %q (b, kb, mb, gb or tb)", unit)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%s is too large", v)
	}
	return n << shift, nil
}

// FormatBytes writes n bytes in the largest unit that divides it ("512 mb").
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"tb", 40}, {"gb", 30}, {"mb", 20}, {"kb", 10}} {
		if n > 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d b", n)
}

// MaxInt is the upper bound of an Int without one.
const MaxInt = math.MaxInt

// IntRange says what an integer in [lo, hi] is ("a positive integer",
// "an integer between 1 and 10").
func IntRange(lo, hi int64) string {
	switch {
	case lo == 0 && hi == math.MaxInt64:
		return "a non-negative integer"
	case lo == 1 && hi == math.MaxInt64:
		return "a positive integer"
	case lo == math.MinInt64 && hi == math.MaxInt64:
		return "an integer"
	case hi == math.MaxInt64:
		return fmt.Sprintf("an integer >= %d", lo)
	}
	return fmt.Sprintf("an integer between %d and %d", lo, hi)
}

// Float is a number option >= lo.
func Float(key string, def, lo float64, doc string) *Option[float64] {
	return &Option[float64]{key: key, def: def, defText: strconv.FormatFloat(def, 'g', -1, 64),
		allowed: fmt.Sprintf("a number >= %v", lo), doc: doc,
		parse: func(s string) (float64, bool) {
			f, err := strconv.ParseFloat(s, 64)
			return f, err == nil && f >= lo && !math.IsInf(f, 0)
		}}
}

// Bool is 'true' or 'false' (in any case), as Flink's boolean options.
func Bool(key string, def bool, doc string) *Option[bool] {
	return &Option[bool]{key: key, def: def, defText: strconv.FormatBool(def), allowed: "'true' or 'false'", doc: doc,
		parse: func(s string) (bool, bool) {
			switch strings.ToLower(s) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
			return false, false
		}}
}

// Duration is a duration option (types.ParseDuration: '500 ms', '5 s',
// '1 min'; a number alone is milliseconds), non-negative or, with
// positive, greater than zero.
func Duration(key string, def time.Duration, positive bool, doc string) *Option[time.Duration] {
	allowed := "a non-negative duration such as '30 s' or '500 ms'"
	if positive {
		allowed = "a positive duration such as '30 s' or '500 ms'"
	}
	return &Option[time.Duration]{key: key, def: def, defText: FormatDuration(def), allowed: allowed, doc: doc,
		parse: func(s string) (time.Duration, bool) {
			d, err := types.ParseDuration(s)
			return d, err == nil && d >= 0 && (d > 0 || !positive)
		}}
}

// FormatDuration prints d as the docs write durations ("10 min", "1 s",
// "500 ms", "0").
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.d == 0 {
			return fmt.Sprintf("%d %s", d/u.d, u.name)
		}
	}
	return d.String()
}

// Enum is one of allowed, compared without regard to case and returned as
// allowed spells it; aliases maps other accepted spellings (upper or lower
// case as they come) to one of allowed.
func Enum(key, def string, allowed []string, aliases map[string]string, doc string) *Option[string] {
	return &Option[string]{key: key, def: def, defText: def, allowed: OneOf(allowed), doc: doc,
		parse: func(s string) (string, bool) {
			for _, a := range allowed {
				if strings.EqualFold(s, a) {
					return a, true
				}
			}
			for k, a := range aliases {
				if strings.EqualFold(s, k) {
					return a, true
				}
			}
			return "", false
		}}
}

// String is an option of any text.
func String(key, def, doc string) *Option[string] {
	return &Option[string]{key: key, def: def, defText: def, allowed: "any text", doc: doc,
		parse: func(s string) (string, bool) { return s, true }}
}

// Masked is how a secret option's value is shown (Flink's "******").
const Masked = "******"

// sensitive are the parts of an option's key that make its value a
// secret, as Flink's GlobalConfiguration.isSensitive has them.
var sensitive = []string{"password", "secret", "fs.azure.account.key", "apikey", "api-key",
	"auth-params", "service-key", "token", "basic-auth", "jaas.config", "http-headers"}

// Sensitive reports whether the value of option key is a secret, shown
// only as Masked (SET with no arguments): its key holds, in any case, one
// of password, secret, fs.azure.account.key, apikey, api-key,
// auth-params, service-key, token, basic-auth, jaas.config or
// http-headers.
func Sensitive(key string) bool {
	key = strings.ToLower(key)
	for _, s := range sensitive {
		if strings.Contains(key, s) {
			return true
		}
	}
	return false
}

// Show is value as option key's value is shown: Masked for a sensitive
// key's (but for "", which shows that none is set).
func Show(key, value string) string {
	if value != "" && Sensitive(key) {
		return Masked
	}
	return value
}

// OneOf lists choices as 'a', 'b' or 'c'.
func OneOf(choices []string) string {
	q := make([]string, len(choices))
	for i, c := range choices {
		q[i] = "'" + c + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// Collect runs each parse in order and returns the first error: it lets a
// scope's parse function read like a list of fields.
func Collect(parses ...func() error) error {
	for _, p := range parses {
		if err := p(); err != nil {
			return err
		}
	}
	return nil
}

// Into returns a parse of o from m into dst, for Collect.
func Into[T any](dst *T, o *Option[T], m map[string]string) func() error {
	return func() error {
		v, err := o.Get(m)
		if err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// Markdown is a table of defs for the docs: key, default, allowed values,
// meaning.
func Markdown(defs []Def) string {
	var b strings.Builder
	b.WriteString("| key | default | values | meaning |\n|---|---|---|---|\n")
	for _, d := range defs {
		def := "`" + d.DefaultText() + "`"
		if d.DefaultText() == "" {
			def = "(none)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", d.Key(), cell(def), cell(d.Allowed()), cell(d.Doc()))
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
