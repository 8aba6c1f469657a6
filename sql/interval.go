package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Interval is an INTERVAL literal as written: INTERVAL '5' SECOND,
// INTERVAL '1:30' MINUTE TO SECOND.
type Interval struct {
	// Value is the literal without quotes ("5", "1:30", "-2").
	Value string
	// Unit is upper case and singular ("SECOND", "MINUTE TO SECOND"):
	// Flink's plural units (SECONDS) are accepted and made singular.
	Unit string
	Pos  Pos
}

// String formats iv as SQL ("" for the zero Interval).
func (iv Interval) String() string {
	if iv.Unit == "" {
		return ""
	}
	return fmt.Sprintf("INTERVAL '%s' %s", strings.ReplaceAll(iv.Value, "'", "''"), iv.Unit)
}

// unitDur is the length of the day-time units; YEAR and MONTH have none.
var unitDur = map[string]time.Duration{
	"WEEK": 7 * 24 * time.Hour, "DAY": 24 * time.Hour, "HOUR": time.Hour,
	"MINUTE": time.Minute, "SECOND": time.Second,
	"MILLISECOND": time.Millisecond, "MICROSECOND": time.Microsecond,
}

// Duration is the length of a day-time interval. Year-month intervals
// (YEAR, MONTH, YEAR TO MONTH) have no fixed length and give an error, as do
// malformed values.
func (iv Interval) Duration() (time.Duration, error) {
	v := strings.TrimSpace(iv.Value)
	neg := strings.HasPrefix(v, "-")
	v = strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+")
	bad := func() (time.Duration, error) {
		return 0, fmt.Errorf("invalid interval value '%s' for %s", iv.Value, iv.Unit)
	}
	tooLong := func() (time.Duration, error) {
		return 0, fmt.Errorf("interval '%s' %s is out of range (at most about 292 years, 106751 days)", iv.Value, iv.Unit)
	}
	from, to, ranged := strings.Cut(iv.Unit, " TO ")
	if _, ok := unitDur[from]; !ok {
		return 0, fmt.Errorf("a %s interval has no fixed length", iv.Unit)
	}
	var d time.Duration
	if !ranged {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return bad()
		}
		if f*float64(unitDur[from]) >= math.MaxInt64 {
			return tooLong()
		}
		d = time.Duration(f * float64(unitDur[from]))
	} else {
		// 'd h:m:s' with the fields from..to.
		order := []string{"DAY", "HOUR", "MINUTE", "SECOND"}
		var fields []string
		if from == "DAY" {
			day, rest, _ := strings.Cut(v, " ")
			fields = append([]string{day}, strings.Split(rest, ":")...)
		} else {
			fields = strings.Split(v, ":")
		}
		start, end := -1, -1
		for i, u := range order {
			if u == from {
				start = i
			}
			if u == to {
				end = i
			}
		}
		if start < 0 || end <= start || len(fields) != end-start+1 {
			return bad()
		}
		for k, f := range fields {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) || (k < len(fields)-1 && strings.Contains(f, ".")) {
				return bad()
			}
			if float64(d)+x*float64(unitDur[order[start+k]]) >= math.MaxInt64 {
				return tooLong()
			}
			d += time.Duration(x * float64(unitDur[order[start+k]]))
		}
	}
	if neg {
		d = -d
	}
	return d, nil
}

// interval parses INTERVAL value unit [TO unit] at the next token.
func (p *stmtParser) interval() (Interval, *Error) {
	iv := Interval{Pos: p.sc.pos(p.peek().off)}
	if err := p.expect("INTERVAL", "expected an interval such as INTERVAL '1' MINUTE"); err != nil {
		return iv, err
	}
	neg := p.acceptPunct("-")
	v := p.peek()
	if v.kind != tokString && v.kind != tokNumber {
		return iv, p.unexpected("expected the interval's value in quotes, e.g. INTERVAL '1' MINUTE")
	}
	iv.Value = v.val
	if neg {
		iv.Value = "-" + iv.Value
	}
	p.i++
	if v.kind == tokString && hasLetter(v.val) {
		// Postgres form: the unit is inside the string.
		value, unit, ok := pgInterval(v.val)
		if !ok {
			e := p.errAt(v.off, "invalid interval '%s'", v.val)
			e.Hint = "write a number and a unit, such as INTERVAL '20 seconds' or INTERVAL '20' SECOND"
			return iv, e
		}
		iv.Value, iv.Unit = value, unit
		if neg {
			iv.Value = "-" + value
		}
		return iv, nil
	}
	u, err := p.intervalUnit()
	if err != nil {
		return iv, err
	}
	iv.Unit = u
	if p.accept("TO") {
		u2, err := p.intervalUnit()
		if err != nil {
			return iv, err
		}
		iv.Unit += " TO " + u2
	}
	return iv, nil
}

func (p *stmtParser) intervalUnit() (string, *Error) {
	t := p.peek()
	u := strings.ToUpper(t.val)
	if s, ok := pluralUnits[u]; ok {
		u = s
	}
	if t.kind != tokIdent || (unitDur[u] == 0 && u != "YEAR" && u != "MONTH") {
		return "", p.unexpected("expected a unit: SECOND, MINUTE, HOUR, DAY, MONTH or YEAR")
	}
	p.i++
	return u, nil
}

// IntervalOf returns the INTERVAL literal that e stands for, where e is
//
//   - an INTERVAL literal written where the MySQL grammar has no place for
//     one (a function argument, TUMBLE(ts, INTERVAL '1' MINUTE), or a
//     select item): the TiDB AST shows it as a call INTERVAL('1', 'MINUTE');
//   - a DATE_ADD or DATE_SUB call, which is what the TiDB parser makes of
//     ts + INTERVAL '1' MINUTE and ts - INTERVAL '1' MINUTE: its interval
//     (the sign of the operation is the function's name).
func IntervalOf(stmt Statement, e ast.ExprNode) (Interval, bool) {
	m := metaOf(stmt)
	if m == nil || e == nil {
		return Interval{}, false
	}
	if iv, ok := m.intervals[e]; ok {
		return iv, true
	}
	if f, ok := e.(*ast.FuncCallExpr); ok && (f.FnName.L == "date_add" || f.FnName.L == "date_sub") && len(f.Args) == 3 {
		if iv, ok := m.intervals[f.Args[1]]; ok {
			return iv, true
		}
	}
	return Interval{}, false
}

// pluralUnits maps Flink's plural interval units to singular ones.
var pluralUnits = map[string]string{
	"SECONDS": "SECOND", "MINUTES": "MINUTE", "HOURS": "HOUR", "DAYS": "DAY",
	"WEEKS": "WEEK", "MONTHS": "MONTH", "YEARS": "YEAR",
}

func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' {
			return true
		}
	}
	return false
}

// yearMonths returns n of unit in months, when unit is YEAR or MONTH.
func yearMonths(unit string, n float64) (float64, bool) {
	switch unit {
	case "YEAR":
		return 12 * n, true
	case "MONTH":
		return n, true
	}
	return 0, false
}

// pgUnits maps the unit words of Postgres interval strings ('20 seconds',
// '1 min', '500 ms') to units.
var pgUnits = map[string]string{
	"microsecond": "MICROSECOND", "microseconds": "MICROSECOND", "us": "MICROSECOND",
	"millisecond": "MILLISECOND", "milliseconds": "MILLISECOND", "ms": "MILLISECOND",
	"second": "SECOND", "seconds": "SECOND", "sec": "SECOND", "secs": "SECOND", "s": "SECOND",
	"minute": "MINUTE", "minutes": "MINUTE", "min": "MINUTE", "mins": "MINUTE", "m": "MINUTE",
	"hour": "HOUR", "hours": "HOUR", "hr": "HOUR", "hrs": "HOUR", "h": "HOUR",
	"day": "DAY", "days": "DAY", "d": "DAY",
	"week": "WEEK", "weeks": "WEEK",
	"month": "MONTH", "months": "MONTH", "mon": "MONTH", "mons": "MONTH",
	"year": "YEAR", "years": "YEAR", "y": "YEAR",
}

// pgInterval reads a Postgres interval string: one or more pairs of a
// number and a unit ('20 seconds', '1 minute 30 seconds'; '20s' too). One
// pair keeps its unit; several day-time pairs are summed in the smallest
// unit among them ('1 minute 30 seconds' is 90 SECOND). Year-month units
// cannot be mixed with others.
func pgInterval(s string) (value, unit string, ok bool) {
	f := strings.Fields(s)
	// Split '20s' into '20' 's'.
	var parts []string
	for _, w := range f {
		k := 0
		for k < len(w) && (isDigit(w[k]) || w[k] == '.' || w[k] == '-' || w[k] == '+') {
			k++
		}
		if k > 0 && k < len(w) {
			parts = append(parts, w[:k], w[k:])
		} else {
			parts = append(parts, w)
		}
	}
	if len(parts) == 0 || len(parts)%2 != 0 {
		return "", "", false
	}
	type pair struct {
		n    float64
		text string
		unit string
	}
	var ps []pair
	for i := 0; i < len(parts); i += 2 {
		n, err := strconv.ParseFloat(parts[i], 64)
		u, known := pgUnits[strings.ToLower(parts[i+1])]
		if err != nil || !known {
			return "", "", false
		}
		ps = append(ps, pair{n, parts[i], u})
	}
	if len(ps) == 1 {
		return ps[0].text, ps[0].unit, true
	}
	if months, ok := yearMonths(ps[0].unit, ps[0].n); ok {
		// '1 year 2 months': year-month parts add up in months.
		for _, x := range ps[1:] {
			m, ok := yearMonths(x.unit, x.n)
			if !ok {
				return "", "", false
			}
			months += m
		}
		return strconv.FormatFloat(months, 'f', -1, 64), "MONTH", true
	}
	smallest := ""
	var total time.Duration
	for _, x := range ps {
		d, fixed := unitDur[x.unit]
		if !fixed {
			return "", "", false
		}
		if smallest == "" || d < unitDur[smallest] {
			smallest = x.unit
		}
		total += time.Duration(x.n * float64(d))
	}
	return strconv.FormatFloat(float64(total)/float64(unitDur[smallest]), 'f', -1, 64), smallest, true
}
