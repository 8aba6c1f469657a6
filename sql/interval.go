package sql

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

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
	from, to, ranged := strings.Cut(iv.Unit, " TO ")
	if _, ok := unitDur[from]; !ok {
		return 0, fmt.Errorf("a %s interval has no fixed length", iv.Unit)
	}
	var d time.Duration
	if !ranged {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return bad()
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
			if err != nil || x < 0 || (k < len(fields)-1 && strings.Contains(f, ".")) {
				return bad()
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
	if v.kind == tokString && !p.atUnit() && strings.IndexFunc(v.val, unicode.IsLetter) >= 0 {
		// PostgreSQL's INTERVAL '5 minutes': the unit inside the quotes.
		val, unit, ok := pgInterval(iv.Value)
		if !ok {
			e := p.errAt(v.off, "invalid interval '%s'", v.val)
			e.Hint = "write INTERVAL '5' MINUTE or INTERVAL '5 minutes'"
			return iv, e
		}
		iv.Value, iv.Unit = val, unit
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

// atUnit reports whether the next token is an interval unit.
func (p *stmtParser) atUnit() bool {
	t := p.peek()
	return t.kind == tokIdent && unitOf(t.val) != ""
}

// unitOf is the singular upper-case unit u names ("" if none).
func unitOf(u string) string {
	u = strings.ToUpper(u)
	if s, ok := pluralUnits[u]; ok {
		u = s
	}
	if unitDur[u] == 0 && u != "YEAR" && u != "MONTH" {
		return ""
	}
	return u
}

// pgUnits are the unit words of PostgreSQL's interval text beyond the
// names of unitOf.
var pgUnits = map[string]string{
	"SEC": "SECOND", "SECS": "SECOND", "MIN": "MINUTE", "MINS": "MINUTE",
	"MS": "MILLISECOND", "MSEC": "MILLISECOND", "MSECS": "MILLISECOND",
	"MILLISECONDS": "MILLISECOND", "US": "MICROSECOND", "MICROSECONDS": "MICROSECOND",
	"HR": "HOUR", "HRS": "HOUR", "MON": "MONTH", "MONS": "MONTH",
}

// pgInterval reads PostgreSQL's interval text, '5 minutes' or
// '1 hour 30 minutes' (numbers each followed by a unit), as a value in one
// unit: the smallest unit written ("90", "MINUTE"). Day-time and year-month
// units cannot be mixed.
func pgInterval(s string) (value, unit string, ok bool) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f)%2 != 0 {
		return "", "", false
	}
	type part struct {
		n    float64
		unit string
	}
	var parts []part
	months, dayTime := false, false
	for k := 0; k < len(f); k += 2 {
		n, err := strconv.ParseFloat(f[k], 64)
		u := unitOf(f[k+1])
		if s, ok := pgUnits[strings.ToUpper(f[k+1])]; ok {
			u = s
		}
		if err != nil || u == "" {
			return "", "", false
		}
		if u == "YEAR" || u == "MONTH" {
			months = true
		} else {
			dayTime = true
		}
		parts = append(parts, part{n, u})
	}
	if months && dayTime {
		return "", "", false
	}
	if len(parts) == 1 {
		return f[0], parts[0].unit, true
	}
	if months {
		total := 0.0
		for _, p := range parts {
			if p.unit == "YEAR" {
				total += 12 * p.n
			} else {
				total += p.n
			}
		}
		return strconv.FormatFloat(total, 'f', -1, 64), "MONTH", true
	}
	smallest := parts[0].unit
	for _, p := range parts {
		if unitDur[p.unit] < unitDur[smallest] {
			smallest = p.unit
		}
	}
	total := 0.0
	for _, p := range parts {
		total += p.n * float64(unitDur[p.unit]/unitDur[smallest])
	}
	return strconv.FormatFloat(total, 'f', -1, 64), smallest, true
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
