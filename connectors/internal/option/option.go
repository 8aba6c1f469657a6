package option

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/internal/config"
)

// String returns opts[key], or def when absent.
func String(opts map[string]string, key, def string) string {
	if v, ok := opts[key]; ok {
		return v
	}
	return def
}

// Int parses opts[key] as a base-10 integer in [lo, hi].
func Int(opts map[string]string, key string, def, lo, hi int64) (int64, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, Bad(key, v, config.IntRange(lo, hi))
	}
	return n, nil
}

// Bad is the error of a bad value of option key: a *config.Error, the
// message format of every option ("option 'key' must be <allowed>, got
// 'value'"), which CREATE TABLE reports as it is.
func Bad(key, value, allowed string) error {
	return &config.Error{Key: key, Value: value, Allowed: allowed}
}

// Float parses opts[key] as a number in [lo, hi].
func Float(opts map[string]string, key string, def, lo, hi float64) (float64, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < lo || f > hi {
		return 0, Bad(key, v, fmt.Sprintf("a number between %v and %v", lo, hi))
	}
	return f, nil
}

// Bool parses opts[key] as true or false (case-insensitive).
func Bool(opts map[string]string, key string, def bool) (bool, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, Bad(key, v, "'true' or 'false'")
}

// Enum returns opts[key] (compared case-insensitively, returned as listed
// in allowed), which must be one of allowed.
func Enum(opts map[string]string, key, def string, allowed ...string) (string, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(v), a) {
			return a, nil
		}
	}
	return "", Bad(key, v, OneOf(allowed))
}

// OneOf lists choices as 'a', 'b' or 'c'.
func OneOf(choices []string) string { return config.OneOf(choices) }

// Char parses opts[key] as a single ASCII character. Java-style escapes
// '\t' and '\\' and the unicode form '\u0009' are accepted, as Flink's
// csv.field-delimiter does.
func Char(opts map[string]string, key string, def byte) (byte, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	s := v
	switch {
	case s == `\t`:
		s = "\t"
	case s == `\\`:
		s = `\`
	case len(s) == 6 && strings.HasPrefix(s, `\u`):
		if n, err := strconv.ParseUint(s[2:], 16, 8); err == nil {
			s = string(rune(n))
		}
	}
	if len(s) != 1 || s[0] >= utf8.RuneSelf {
		return 0, Bad(key, v, "a single ASCII character")
	}
	return s[0], nil
}
