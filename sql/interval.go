package sql

import (
	"fmt"
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
