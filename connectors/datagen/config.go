package datagen

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/connectors/internal/textparse"
	"github.com/streamsql/streamsql/types"
)

// Option keys and field option suffixes.
const (
	OptRowsPerSecond = "rows-per-second"
	OptNumberOfRows  = "number-of-rows"
	fieldsPrefix     = "fields."

	DefaultRowsPerSecond = 10000
	DefaultLength        = 100
)

var fieldOptions = []string{"kind", "start", "end", "step", "min", "max", "length", "var-len", "null-rate", "max-past"}

// DefaultStep is the event-time step of a TIMESTAMP sequence: 1 ms per row,
// 1000 rows per second of event time.
const DefaultStep = time.Millisecond

const (
	kindRandom   = "random"
	kindSequence = "sequence"
)

// config is the parsed options of a datagen table.
type config struct {
	rowsPerSecond int64
	// total is the number of rows of the whole table (all subtasks), or -1
	// when unbounded.
	total  int64
	fields []fieldConfig // one per column of the schema
}

type fieldConfig struct {
	name string
	t    types.T
	kind string
	seed uint64
	// sequence: first and last value (TIMESTAMP: microseconds; end is
	// math.MaxInt64 when unset).
	start, end int64
	// step is the TIMESTAMP sequence's increment per row, in microseconds.
	step int64
	// random integers and DECIMAL (unscaled): inclusive range.
	minI, maxI int64
	// random FLOAT/DOUBLE: range.
	minF, maxF float64
	length     int
	varLen     bool
	nullRate   float64
	maxPast    time.Duration
}

// bounded reports whether the scan ends: number-of-rows is set, or a
// sequence field has an end (every sequence but a TIMESTAMP one must).
func bounded(opts map[string]string) bool {
	if _, ok := opts[OptNumberOfRows]; ok {
		return true
	}
	for k, v := range opts {
		col, ok := strings.CutSuffix(k, ".kind")
		if !ok || !strings.HasPrefix(k, fieldsPrefix) || !strings.EqualFold(strings.TrimSpace(v), kindSequence) {
			continue
		}
		for k2 := range opts {
			if c2, ok := strings.CutSuffix(k2, ".end"); ok && strings.EqualFold(c2, col) {
				return true
			}
		}
	}
	return false
}

// parse checks opts against schema and returns the configuration.
func parse(table string, schema types.Schema, opts map[string]string) (*config, error) {
	c := &config{total: -1}
	var err error
	if c.rowsPerSecond, err = option.Int(opts, OptRowsPerSecond, DefaultRowsPerSecond, 0, math.MaxInt64); err != nil {
		return nil, err
	}
	if c.total, err = option.Int(opts, OptNumberOfRows, -1, 0, math.MaxInt64); err != nil {
		return nil, err
	}
	// Every fields.* key must name a column and a known field option.
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, fieldsPrefix)
		if !ok {
			continue
		}
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 {
			return nil, fmt.Errorf("option '%s' must be of the form 'fields.<column>.<option>'", k)
		}
		col, o := rest[:dot], rest[dot+1:]
		if schema.Index(col) < 0 {
			return nil, fmt.Errorf("option '%s' names no column of the table (columns: %s)", k, strings.Join(schema.Names(), ", "))
		}
		known := false
		for _, f := range fieldOptions {
			known = known || f == o
		}
		if !known {
			return nil, fmt.Errorf("unknown datagen field option '%s' (field options: %s)", k, strings.Join(fieldOptions, ", "))
		}
	}
	for _, col := range schema {
		f, err := parseField(table, col, opts)
		if err != nil {
			return nil, err
		}
		if f.kind == kindSequence && !(f.t.Kind == types.Timestamp && f.end == math.MaxInt64) {
			n := int64(math.MaxInt64)
			if span := uint64(f.end-f.start) / uint64(max(f.step, 1)); span < math.MaxInt64 {
				n = int64(span) + 1
			}
			if c.total < 0 || n < c.total {
				c.total = n
			}
		}
		c.fields = append(c.fields, f)
	}
	return c, nil
}

// fieldOpts returns the options of column name keyed by their suffix. The
// column may be written in any case in the option key.
func fieldOpts(name string, opts map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range opts {
		rest, ok := strings.CutPrefix(k, fieldsPrefix)
		if !ok {
			continue
		}
		dot := strings.LastIndexByte(rest, '.')
		if dot >= 0 && strings.EqualFold(rest[:dot], name) {
			out[k] = v
		}
	}
	return out
}

func parseField(table string, col types.Column, all map[string]string) (fieldConfig, error) {
	f := fieldConfig{name: col.Name, t: col.Type, length: DefaultLength}
	opts := fieldOpts(col.Name, all)
	key := func(o string) string {
		for k := range opts {
			if strings.HasSuffix(k, "."+o) {
				return k
			}
		}
		return fieldsPrefix + col.Name + "." + o
	}
	has := func(o string) bool { _, ok := opts[key(o)]; return ok }
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(table)))
	h.Write([]byte{0})
	h.Write([]byte(strings.ToLower(col.Name)))
	f.seed = h.Sum64()

	var err error
	if f.kind, err = option.Enum(opts, key("kind"), kindRandom, kindSequence, kindRandom); err != nil {
		return f, err
	}
	if f.nullRate, err = option.Float(opts, key("null-rate"), 0, 0, 1); err != nil {
		return f, err
	}
	if f.nullRate > 0 && col.Type.NotNull {
		return f, fmt.Errorf("'%s' must be 0 for the NOT NULL column %s", key("null-rate"), col.Name)
	}
	t := col.Type
	if f.kind == kindSequence && t.Kind == types.Timestamp {
		return f, parseTimeSequence(&f, opts, key, has)
	}
	if has("step") {
		return f, fmt.Errorf("'%s' applies to TIMESTAMP sequences, not to the %s %s field %s", key("step"), f.kind, t, col.Name)
	}
	if f.kind == kindSequence {
		switch {
		case t.IsInteger(), t.IsApproximate(), t.Kind == types.Decimal, t.Kind == types.String:
		default:
			return f, fmt.Errorf("'%s': a sequence cannot generate %s (only integer, FLOAT, DOUBLE, DECIMAL, STRING and TIMESTAMP columns)", key("kind"), t)
		}
		for _, o := range []string{"start", "end"} {
			if !has(o) {
				return f, fmt.Errorf("'%s' is required for the sequence field %s", key(o), col.Name)
			}
		}
		lo, hi := intRange(t)
		if t.Kind == types.Decimal {
			lo, hi = math.MinInt64, math.MaxInt64
			if d := t.Precision - t.Scale; d <= 18 {
				hi = int64(math.Pow10(d)) - 1
				lo = -hi
			}
		}
		if f.start, err = option.Int(opts, key("start"), 0, lo, hi); err != nil {
			return f, err
		}
		if f.end, err = option.Int(opts, key("end"), 0, lo, hi); err != nil {
			return f, err
		}
		if f.end < f.start {
			return f, fmt.Errorf("'%s' (%d) must not be less than '%s' (%d)", key("end"), f.end, key("start"), f.start)
		}
		for _, o := range []string{"min", "max", "length", "var-len", "max-past"} {
			if has(o) {
				return f, fmt.Errorf("'%s' applies to random fields, but %s is a sequence", key(o), col.Name)
			}
		}
		return f, nil
	}
	for _, o := range []string{"start", "end"} {
		if has(o) {
			return f, fmt.Errorf("'%s' applies to sequence fields, but %s is random (set '%s'='sequence')", key(o), col.Name, key("kind"))
		}
	}
	if (has("min") || has("max")) && !t.IsNumeric() {
		return f, fmt.Errorf("'%s'/'%s' apply to numeric fields, not %s", key("min"), key("max"), t)
	}
	switch {
	case t.IsInteger():
		lo, hi := intRange(t)
		if f.minI, err = option.Int(opts, key("min"), lo, lo, hi); err != nil {
			return f, err
		}
		if f.maxI, err = option.Int(opts, key("max"), hi, lo, hi); err != nil {
			return f, err
		}
	case t.Kind == types.Decimal:
		lo, hi := intRange(t)
		if f.minI, err = decimalOpt(opts, key("min"), lo, t); err != nil {
			return f, err
		}
		if f.maxI, err = decimalOpt(opts, key("max"), hi, t); err != nil {
			return f, err
		}
	case t.IsApproximate():
		top := math.MaxFloat64
		if t.Kind == types.Float {
			top = math.MaxFloat32
		}
		if f.minF, err = option.Float(opts, key("min"), 0, -top, top); err != nil {
			return f, err
		}
		if f.maxF, err = option.Float(opts, key("max"), top, -top, top); err != nil {
			return f, err
		}
		if f.maxF < f.minF {
			return f, fmt.Errorf("'%s' must not be less than '%s'", key("max"), key("min"))
		}
	}
	if f.minI > f.maxI {
		return f, fmt.Errorf("'%s' must not be less than '%s'", key("max"), key("min"))
	}
	if has("length") || has("var-len") {
		if t.Kind != types.String && t.Kind != types.Bytes {
			return f, fmt.Errorf("'%s' applies to STRING and BYTES fields, not %s", key("length"), t)
		}
		n, err := option.Int(opts, key("length"), DefaultLength, 0, 1<<20)
		if err != nil {
			return f, err
		}
		f.length = int(n)
		if f.varLen, err = option.Bool(opts, key("var-len"), false); err != nil {
			return f, err
		}
	}
	if has("max-past") {
		if t.Kind != types.Timestamp {
			return f, fmt.Errorf("'%s' applies to TIMESTAMP fields, not %s", key("max-past"), t)
		}
		if f.maxPast, err = parseMaxPast(opts, key); err != nil {
			return f, err
		}
	}
	return f, nil
}

// parseTimeSequence reads the options of a TIMESTAMP sequence (event time
// advancing with the row index): start (required), end (optional), step
// and max-past.
func parseTimeSequence(f *fieldConfig, opts map[string]string, key func(string) string, has func(string) bool) error {
	ts := func(o string) (int64, error) {
		v := strings.TrimSpace(opts[key(o)])
		us, ok := textparse.Timestamp([]byte(v), 6)
		if !ok {
			return 0, option.Bad(key(o), v, "a TIMESTAMP such as '2024-01-01 00:00:00'")
		}
		return us, nil
	}
	if !has("start") {
		return fmt.Errorf("'%s' is required for the sequence field %s", key("start"), f.name)
	}
	var err error
	if f.start, err = ts("start"); err != nil {
		return err
	}
	f.end = math.MaxInt64
	if has("end") {
		if f.end, err = ts("end"); err != nil {
			return err
		}
		if f.end < f.start {
			return fmt.Errorf("'%s' must not be before '%s'", key("end"), key("start"))
		}
	}
	f.step = DefaultStep.Microseconds()
	if has("step") {
		d, err := types.ParseDuration(opts[key("step")])
		if err != nil || d < time.Microsecond {
			return option.Bad(key("step"), opts[key("step")], "a duration of at least 1 microsecond such as '1 s' or '500 ms'")
		}
		f.step = d.Microseconds()
	}
	if has("max-past") {
		if f.maxPast, err = parseMaxPast(opts, key); err != nil {
			return err
		}
	}
	for _, o := range []string{"min", "max", "length", "var-len"} {
		if has(o) {
			return fmt.Errorf("'%s' applies to random fields, but %s is a sequence", key(o), f.name)
		}
	}
	return nil
}

// parseMaxPast reads 'fields.<f>.max-past': how far behind a TIMESTAMP
// may go (behind now, or behind the sequence's event time), so not
// negative.
func parseMaxPast(opts map[string]string, key func(string) string) (time.Duration, error) {
	d, err := types.ParseDuration(opts[key("max-past")])
	if err != nil || d < 0 {
		return 0, option.Bad(key("max-past"), opts[key("max-past")], "a non-negative duration such as '30 s' or '500 ms'")
	}
	return d, nil
}

// intRange is the range of an integer type, or of the unscaled value of a
// DECIMAL (clamped to int64: a random DECIMAL of precision > 18 stays within
// the range of BIGINT unscaled values).
func intRange(t types.T) (int64, int64) {
	switch t.Kind {
	case types.TinyInt:
		return math.MinInt8, math.MaxInt8
	case types.SmallInt:
		return math.MinInt16, math.MaxInt16
	case types.Int:
		return math.MinInt32, math.MaxInt32
	case types.Decimal:
		if t.Precision <= 18 {
			m := int64(math.Pow10(t.Precision)) - 1
			return -m, m
		}
	}
	return math.MinInt64, math.MaxInt64
}

// decimalOpt parses a DECIMAL bound into an unscaled value of t's scale.
func decimalOpt(opts map[string]string, key string, def int64, t types.T) (int64, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	n, err := types.ParseDecimal(v, t.Precision, t.Scale)
	if err != nil || !n.BigInt().IsInt64() {
		return 0, option.Bad(key, v, "a "+t.String()+" value")
	}
	return n.BigInt().Int64(), nil
}
