package functions

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("EXTRACT", resolveExtract)
	for name, unit := range map[string]string{
		"YEAR": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "WEEK": "WEEK",
		"DAYOFYEAR": "DOY", "DAYOFMONTH": "DAY", "DAYOFWEEK": "DOW",
		"HOUR": "HOUR", "MINUTE": "MINUTE", "SECOND": "SECOND",
	} {
		register(name, resolveFieldFunc(name, unit))
	}
	f0 := register("DATE_TRUNC", func(args []types.T) (Resolved, error) { return resolveDateTrunc(argsOf(args)) })
	f0.resolveArgs = resolveDateTrunc
	register("DATE_FORMAT", resolveDateFormat)
	register("TO_TIMESTAMP", resolveParseTemporal("TO_TIMESTAMP", types.TimestampOf(3)))
	register("TO_DATE", resolveParseTemporal("TO_DATE", types.DateType))
	register("FROM_UNIXTIME", resolveFromUnixtime)
	register("TO_TIMESTAMP_LTZ", resolveToTimestampLTZ)
	register("UNIX_TIMESTAMP", resolveUnixTimestamp).Volatile = true
	f := register("TIMESTAMPADD", func(args []types.T) (Resolved, error) { return resolveTimestampAdd(argsOf(args)) })
	f.resolveArgs = resolveTimestampAdd
	register("TIMESTAMPDIFF", resolveTimestampDiff)
	register("CURRENT_TIMESTAMP", resolveNow("CURRENT_TIMESTAMP", types.TimestampOf(3))).Volatile = true
	register("CURRENT_WATERMARK", resolveCurrentWatermark).Volatile = true
	alias("LOCALTIMESTAMP", "CURRENT_TIMESTAMP")
	alias("NOW", "CURRENT_TIMESTAMP")
	alias("CURRENT_ROW_TIMESTAMP", "CURRENT_TIMESTAMP")
	register("CURRENT_DATE", resolveNow("CURRENT_DATE", types.DateType)).Volatile = true
	register("CURRENT_TIME", resolveNow("CURRENT_TIME", types.T{Kind: types.Time})).Volatile = true
	alias("LOCALTIME", "CURRENT_TIME")
}

// tsArg reads a DATE, TIME or TIMESTAMP Vec as micros (since the epoch,
// or since midnight for TIME) without allocation.
type tsArg struct {
	kind  types.Kind
	i64   []int64
	i32   []int32
	m     int
	one64 [1]int64
	one32 [1]int32
}

func newTsArg(v Vec) *tsArg {
	t := &tsArg{kind: v.Type.Kind}
	if t.kind == types.Timestamp {
		t.i64, t.m = operand(v, &t.one64)
	} else {
		t.i32, t.m = operand(v, &t.one32)
	}
	return t
}

func (t *tsArg) micros(i int) int64 {
	switch t.kind {
	case types.Timestamp:
		return t.i64[i&t.m]
	case types.Date:
		return int64(t.i32[i&t.m]) * usPerDay
	}
	return int64(t.i32[i&t.m]) * 1000
}

// unitArg reads a unit argument ('DAY', ...): normally a literal, checked
// once per batch; otherwise read and checked per row.
type unitArg struct {
	c     bool
	cv    string
	cerr  error
	s     strArg
	check func(string) error
}

func newUnitArg(v Vec, check func(string) error) *unitArg {
	u := &unitArg{c: v.Const, check: check}
	if v.Const {
		s, _ := v.Value.(string)
		u.cv = strings.ToUpper(strings.TrimSpace(s))
		u.cerr = check(u.cv)
	} else {
		u.s = newStrArg(v)
	}
	return u
}

func (u *unitArg) at(i int) (string, error) {
	if u.c {
		return u.cv, u.cerr
	}
	s := strings.ToUpper(strings.TrimSpace(u.s.at(i)))
	return s, u.check(s)
}

var extractUnits = map[string]bool{
	"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true, "DOY": true,
	"DOW": true, "ISODOW": true, "ISOYEAR": true, "HOUR": true, "MINUTE": true, "SECOND": true,
	"MILLISECOND": true, "MICROSECOND": true, "NANOSECOND": true, "EPOCH": true,
	"DECADE": true, "CENTURY": true, "MILLENNIUM": true,
}

func dateUnit(u string) bool {
	switch u {
	case "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND", "EPOCH":
		return false
	}
	return true
}

// extractField computes one EXTRACT unit of a temporal value in micros.
func extractField(u string, us int64) int64 {
	days, tod := splitMicros(us)
	switch u {
	case "HOUR":
		return tod / usPerHour
	case "MINUTE":
		return tod / usPerMin % 60
	case "SECOND":
		return tod / usPerSec % 60
	case "MILLISECOND":
		return tod % usPerMin / 1000
	case "MICROSECOND":
		return tod % usPerMin
	case "NANOSECOND":
		return tod % usPerMin * 1000
	case "EPOCH":
		return floorDiv(us, usPerSec)
	case "DOW":
		return floorMod(days+4, 7) + 1 // Sunday = 1
	case "ISODOW":
		return floorMod(days+3, 7) + 1 // Monday = 1
	case "WEEK":
		return isoWeek(days)
	}
	y, m, d := civil(days)
	switch u {
	case "YEAR":
		return y
	case "QUARTER":
		return (m-1)/3 + 1
	case "MONTH":
		return m
	case "DAY":
		return d
	case "DOY":
		return days - daysFromCivil(y, 1, 1) + 1
	case "ISOYEAR":
		thursday := days - (floorMod(days+3, 7) + 1) + 4
		iy, _, _ := civil(thursday)
		return iy
	case "DECADE":
		return floorDiv(y, 10)
	case "CENTURY":
		if y > 0 {
			return (y + 99) / 100
		}
		return -((-y + 99) / 100)
	case "MILLENNIUM":
		if y > 0 {
			return (y + 999) / 1000
		}
		return -((-y + 999) / 1000)
	}
	return 0
}

// resolveExtract: EXTRACT('UNIT', x) with x a DATE, TIME or TIMESTAMP,
// as BIGINT. Units: YEAR QUARTER MONTH WEEK (ISO) DAY DOY DOW (Sunday = 1)
// ISODOW ISOYEAR HOUR MINUTE SECOND MILLISECOND and MICROSECOND (which, as
// in Flink, include the seconds: 12.345s gives 12345) NANOSECOND EPOCH
// DECADE CENTURY MILLENNIUM.
func resolveExtract(args []types.T) (Resolved, error) {
	if err := nargs("EXTRACT", args, 2, 2); err != nil {
		return Resolved{}, err
	}
	if (args[0].Kind != types.String && args[0].Kind != types.Null) || !(args[1].IsTemporal() || args[1].Kind == types.Null) {
		return Resolved{}, errArgs("EXTRACT", args)
	}
	x := args[1].Nullable()
	if x.Kind == types.Null {
		x = types.TimestampType
	}
	rt := nullableFrom(types.BigIntType, args[1:])
	return Resolved{Ret: rt, ArgTypes: []types.T{types.StringType, x}, Kernel: extractKernel("")}, nil
}

func resolveFieldFunc(name, unit string) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 1, 1); err != nil {
			return Resolved{}, err
		}
		x := args[0].Nullable()
		if x.Kind == types.Null {
			x = types.TimestampType
		}
		if !x.IsTemporal() || (x.Kind == types.Time && dateUnit(unit)) || (x.Kind == types.Date && !dateUnit(unit)) {
			return Resolved{}, errArgs(name, args)
		}
		rt := nullableFrom(types.BigIntType, args)
		return Resolved{Ret: rt, ArgTypes: []types.T{x}, Kernel: extractKernel(unit)}, nil
	}
}

// extractKernel extracts unit (or, when "", the unit in args[0]).
func extractKernel(fixedUnit string) Kernel {
	return strict(types.BigIntType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		xv := args[0]
		var unit *unitArg
		if fixedUnit == "" {
			xv = args[1]
			kind := xv.Type.Kind
			unit = newUnitArg(args[0], func(u string) error {
				if !extractUnits[u] {
					return fmt.Errorf("unknown EXTRACT unit %s", u)
				}
				if kind == types.Time && dateUnit(u) {
					return fmt.Errorf("cannot extract %s from TIME", u)
				}
				return nil
			})
		} else {
			unit = &unitArg{c: true, cv: fixedUnit}
		}
		mem := ctx.mem()
		x := newTsArg(xv)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int64](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			u, err := unit.at(i)
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			out[i] = extractField(u, x.micros(i))
		}
		return finish(types.BigIntType, n, val, buf), nil
	})
}

// resolveDateFormat: DATE_FORMAT(x, fmt) formats a TIMESTAMP or DATE (or
// a string in the default timestamp form, NULL if it does not parse) with
// a Java date pattern.
func resolveDateFormat(args []types.T) (Resolved, error) {
	if err := nargs("DATE_FORMAT", args, 2, 2); err != nil {
		return Resolved{}, err
	}
	x := args[0].Nullable()
	switch x.Kind {
	case types.Null:
		x = types.TimestampType
	case types.Timestamp, types.Date, types.String:
	default:
		return Resolved{}, errArgs("DATE_FORMAT", args)
	}
	if args[1].Kind != types.String && args[1].Kind != types.Null {
		return Resolved{}, errArgs("DATE_FORMAT", args)
	}
	cache := &dtCache{}
	size := &outSize{}
	isStr := x.Kind == types.String
	sig := "-s" // '-': read by tsArg
	if isStr {
		sig = "ss"
	}
	return Resolved{Ret: nullableFrom(types.StringType, args), ArgTypes: []types.T{x, types.StringType}, Kernel: strict(types.StringType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		var ts *tsArg
		if !isStr {
			ts = newTsArg(args[0])
		}
		return buildStrings(ctx, args, sig, n, size, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
			p, err := cache.get(r.str(1, i))
			if err != nil {
				return dst, false, err
			}
			var us int64
			if isStr {
				var ok bool
				if us, ok = parseTimestamp(r.str(0, i)); !ok {
					return dst, false, nil
				}
			} else {
				us = ts.micros(i)
			}
			return p.format(dst, us), true, nil
		})
	})}, nil
}

// resolveParseTemporal: TO_TIMESTAMP(s[, fmt]) (TIMESTAMP(3)) and
// TO_DATE(s[, fmt]) parse a string, by default as CAST does; NULL when it
// does not parse.
func resolveParseTemporal(name string, rt types.T) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 1, 2); err != nil {
			return Resolved{}, err
		}
		for _, a := range args {
			if a.Kind != types.String && a.Kind != types.Null {
				return Resolved{}, errArgs(name, args)
			}
		}
		cache := &dtCache{}
		hasFmt := len(args) == 2
		return Resolved{Ret: rt, ArgTypes: repeatT(types.StringType, len(args)), Kernel: strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
			mem := ctx.mem()
			s := newStrArg(args[0])
			var f strArg
			if hasFmt {
				f = newStrArg(args[1])
			}
			val := andValidity(mem, args, n)
			// parse returns micros; a false ok makes the row NULL.
			parse := func(i int) (int64, bool, error) {
				if hasFmt {
					p, err := cache.get(f.at(i))
					if err != nil {
						return 0, false, err
					}
					us, ok := p.parse(s.at(i))
					return us, ok && inRangeMicros(us), nil
				}
				if rt.Kind == types.Date {
					d, ok := parseDate(s.at(i))
					return d * usPerDay, ok, nil
				}
				us, ok := parseTimestamp(s.at(i))
				return us, ok, nil
			}
			return temporalColumn(mem, rt, n, val, parse)
		})}, nil
	}
}

const defaultDTFormat = "yyyy-MM-dd HH:mm:ss"

// resolveFromUnixtime: FROM_UNIXTIME(seconds[, fmt]) formats seconds
// since the epoch (UTC), by default as 'yyyy-MM-dd HH:mm:ss'.
func resolveFromUnixtime(args []types.T) (Resolved, error) {
	if err := nargs("FROM_UNIXTIME", args, 1, 2); err != nil {
		return Resolved{}, err
	}
	if !args[0].IsInteger() && args[0].Kind != types.Null {
		return Resolved{}, errArgs("FROM_UNIXTIME", args)
	}
	sig := "i"
	if len(args) == 2 {
		if args[1].Kind != types.String && args[1].Kind != types.Null {
			return Resolved{}, errArgs("FROM_UNIXTIME", args)
		}
		sig = "is"
	}
	cache := &dtCache{}
	return Resolved{Ret: nullableFrom(types.StringType, args), ArgTypes: sigTypes(sig), Kernel: strKernel(sig, func(dst []byte, r *rowArgs, i int) ([]byte, bool, error) {
		f := defaultDTFormat
		if len(sig) == 2 {
			f = r.str(1, i)
		}
		p, err := cache.get(f)
		if err != nil {
			return dst, false, err
		}
		secs := r.int(0, i)
		if secs > 1<<43 || secs < -(1<<43) {
			return dst, false, fmt.Errorf("FROM_UNIXTIME(%d) is out of range", secs)
		}
		return p.format(dst, secs*usPerSec), true, nil
	})}, nil
}

// resolveToTimestampLTZ: TO_TIMESTAMP_LTZ(n[, precision]) is the instant n
// seconds (precision 0) or milliseconds (precision 3, the default) after
// the epoch, as TIMESTAMP(3) in UTC (there is no TIMESTAMP_LTZ; the session
// zone is UTC, so the values are Flink's). Another precision is an error.
func resolveToTimestampLTZ(args []types.T) (Resolved, error) {
	if err := nargs("TO_TIMESTAMP_LTZ", args, 1, 2); err != nil {
		return Resolved{}, err
	}
	for _, a := range args {
		if !a.IsInteger() && a.Kind != types.Null {
			return Resolved{}, errArgs("TO_TIMESTAMP_LTZ", args)
		}
	}
	rt := nullableFrom(types.TimestampOf(3), args)
	return Resolved{Ret: rt, ArgTypes: repeatT(types.BigIntType, len(args)), Kernel: strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		var one, oneP [1]int64
		num, nm := operand(args[0], &one)
		prec, pm := []int64{3}, 0
		if len(args) == 2 {
			prec, pm = operand(args[1], &oneP)
		}
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int64](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			v := num[i&nm]
			switch p := prec[i&pm]; p {
			case 0:
				if v < minMicros/usPerSec || v > maxMicros/usPerSec {
					val.release()
					buf.Release()
					return Vec{}, fmt.Errorf("TO_TIMESTAMP_LTZ(%d, 0) is %w 0001-01-01 .. 9999-12-31", v, ErrTemporalRange)
				}
				out[i] = v * usPerSec
			case 3:
				if v < minMicros/1000 || v > maxMicros/1000 {
					val.release()
					buf.Release()
					return Vec{}, fmt.Errorf("TO_TIMESTAMP_LTZ(%d, 3) is %w 0001-01-01 .. 9999-12-31", v, ErrTemporalRange)
				}
				out[i] = v * 1000
			default:
				val.release()
				buf.Release()
				return Vec{}, fmt.Errorf("the precision of TO_TIMESTAMP_LTZ must be 0 (seconds) or 3 (milliseconds), got %d", p)
			}
		}
		return finish(rt, n, val, buf), nil
	})}, nil
}

// resolveUnixTimestamp: UNIX_TIMESTAMP() is the statement time in seconds;
// UNIX_TIMESTAMP(s[, fmt]) parses s (default 'yyyy-MM-dd HH:mm:ss', UTC
// unless s has a zone the pattern reads: z, Z, X) into seconds since the
// epoch, NULL when it does not parse.
func resolveUnixTimestamp(args []types.T) (Resolved, error) {
	if err := nargs("UNIX_TIMESTAMP", args, 0, 2); err != nil {
		return Resolved{}, err
	}
	if len(args) == 0 {
		rt := types.T{Kind: types.BigInt, NotNull: true}
		return Resolved{Ret: rt, Kernel: func(ctx *Context, _ []Vec, _ int) (Vec, error) {
			return ConstVec(types.BigIntType, floorDiv(ctx.Now, usPerSec)), nil
		}}, nil
	}
	for _, a := range args {
		if a.Kind != types.String && a.Kind != types.Null {
			return Resolved{}, errArgs("UNIX_TIMESTAMP", args)
		}
	}
	cache := &dtCache{}
	hasFmt := len(args) == 2
	return Resolved{Ret: types.BigIntType, ArgTypes: repeatT(types.StringType, len(args)), Kernel: strict(types.BigIntType, func(ctx *Context, args []Vec, n int) (Vec, error) {
		mem := ctx.mem()
		s := newStrArg(args[0])
		var f strArg
		if hasFmt {
			f = newStrArg(args[1])
		}
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int64](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			src := defaultDTFormat
			if hasFmt {
				src = f.at(i)
			}
			p, err := cache.get(src)
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			us, off, ok := p.parseZoned(s.at(i))
			if !ok {
				val.setNull(mem, n, i)
				continue
			}
			out[i] = floorDiv(us-off, usPerSec)
		}
		return finish(types.BigIntType, n, val, buf), nil
	})}, nil
}

// unitMicros is the length of a fixed-length unit in micros (0 for
// calendar units: MONTH, QUARTER, YEAR).
func unitMicros(u string) (int64, bool) {
	switch u {
	case "MICROSECOND":
		return 1, true
	case "MILLISECOND":
		return 1000, true
	case "SECOND":
		return usPerSec, true
	case "MINUTE":
		return usPerMin, true
	case "HOUR":
		return usPerHour, true
	case "DAY":
		return usPerDay, true
	case "WEEK":
		return 7 * usPerDay, true
	case "MONTH", "QUARTER", "YEAR":
		return 0, true
	}
	return 0, false
}

func unitMonths(u string) int64 {
	switch u {
	case "QUARTER":
		return 3
	case "YEAR":
		return 12
	}
	return 1
}

// resolveTimestampAdd: TIMESTAMPADD('UNIT', n, t) adds n units to a
// TIMESTAMP or DATE (a DATE plus a unit shorter than a day is a
// TIMESTAMP(0) when the unit is a literal). Months clamp the day to the
// end of the month.
func resolveTimestampAdd(args []Arg) (Resolved, error) {
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type
	}
	if err := nargs("TIMESTAMPADD", ts, 3, 3); err != nil {
		return Resolved{}, err
	}
	if ts[0].Kind != types.String || !(ts[1].IsInteger() || ts[1].Kind == types.Null) ||
		!(ts[2].Kind == types.Timestamp || ts[2].Kind == types.Date || ts[2].Kind == types.Null) {
		return Resolved{}, errArgs("TIMESTAMPADD", ts)
	}
	t := ts[2].Nullable()
	if t.Kind == types.Null {
		t = types.TimestampType
	}
	rt := t
	if t.Kind == types.Date && args[0].Const {
		u, _ := args[0].Value.(string)
		if um, ok := unitMicros(strings.ToUpper(u)); ok && um != 0 && um < usPerDay {
			rt = types.TimestampOf(0)
		}
	}
	return Resolved{Ret: rt, ArgTypes: []types.T{types.StringType, types.BigIntType, t}, Kernel: strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		unit := newUnitArg(args[0], func(u string) error {
			um, ok := unitMicros(u)
			if !ok {
				return fmt.Errorf("unknown TIMESTAMPADD unit %s", u)
			}
			if rt.Kind == types.Date && um != 0 && um < usPerDay {
				return fmt.Errorf("TIMESTAMPADD of %s to a DATE needs a literal unit", u)
			}
			return nil
		})
		mem := ctx.mem()
		var one [1]int64
		cnt, cm := operand(args[1], &one)
		x := newTsArg(args[2])
		val := andValidity(mem, args, n)
		add := func(i int) (int64, error) {
			u, err := unit.at(i)
			if err != nil {
				return 0, err
			}
			us, k := x.micros(i), cnt[i&cm]
			um, _ := unitMicros(u)
			var r int64
			if um == 0 {
				// A count beyond the range's span is refused before it
				// is multiplied, so nothing wraps.
				if k < -spanMonths || k > spanMonths {
					return 0, timestampAddErr(u, k, t, us)
				}
				r = addMonthsMicros(us, k*unitMonths(u))
			} else {
				if lim := (maxMicros - minMicros) / um; k < -lim || k > lim {
					return 0, timestampAddErr(u, k, t, us)
				}
				r = us + k*um
			}
			if !inRangeMicros(r) {
				return 0, timestampAddErr(u, k, t, us)
			}
			return r, nil
		}
		return temporalColumn(mem, rt, n, val, func(i int) (int64, bool, error) {
			us, err := add(i)
			return us, true, err
		})
	})}, nil
}

// temporalColumn returns the DATE or TIMESTAMP column of type rt (n rows,
// validity val, which it takes over) whose valid rows are at's micros: the
// day of a DATE, a TIMESTAMP truncated to rt's precision. at's ok false
// makes the row NULL; its error ends the column.
func temporalColumn(mem memory.Allocator, rt types.T, n int, val validity, at func(i int) (us int64, ok bool, err error)) (Vec, error) {
	var (
		buf    *memory.Buffer
		days   []int32
		micros []int64
	)
	date := rt.Kind == types.Date
	if date {
		buf, days = newFixedBuf[int32](mem, n)
	} else {
		buf, micros = newFixedBuf[int64](mem, n)
	}
	for i := 0; i < n; i++ {
		if !val.valid(i) {
			continue
		}
		us, ok, err := at(i)
		if err != nil {
			val.release()
			buf.Release()
			return Vec{}, err
		}
		if !ok {
			val.setNull(mem, n, i)
			continue
		}
		if date {
			days[i] = int32(floorDiv(us, usPerDay))
		} else {
			micros[i] = truncMicros(us, rt.Precision)
		}
	}
	return finish(rt, n, val, buf), nil
}

// timestampAddErr is the error of TIMESTAMPADD(unit, k, x) leaving the
// supported range; us is x in micros, t its type.
func timestampAddErr(unit string, k int64, t types.T, us int64) error {
	var x string
	if t.Kind == types.Date {
		x = "DATE '" + types.FormatDate(int32(floorDiv(us, usPerDay))) + "'"
	} else {
		x = "TIMESTAMP '" + types.FormatTimestamp(us, t.Precision) + "'"
	}
	return fmt.Errorf("TIMESTAMPADD %w: TIMESTAMPADD(%s, %d, %s) leaves 0001-01-01 .. 9999-12-31", ErrTemporalRange, unit, k, x)
}

// subtractMonthsDays is Calcite's month difference of two dates: the
// largest m with addMonths(d1, m) <= d0 (month ends clamp, so 2024-01-31
// to 2024-02-29 is one month).
func subtractMonthsDays(d0, d1 int64) int64 {
	if d0 < d1 {
		return -subtractMonthsDays(d1, d0)
	}
	m := (d0 - d1) / 31
	for {
		if addMonthsDays(d1, m) >= d0 {
			return m
		}
		if addMonthsDays(d1, m+1) > d0 {
			return m
		}
		m++
	}
}

// monthsBetween counts whole months from a to b (micros), as Flink's
// TIMESTAMPDIFF (Calcite's subtractMonths).
func monthsBetween(a, b int64) int64 {
	d0, t0 := splitMicros(b)
	d1, t1 := splitMicros(a)
	x := subtractMonthsDays(d0, d1)
	if addMonthsDays(d1, x) == d0 && t0 < t1 {
		x--
	}
	return x
}

// resolveTimestampDiff: TIMESTAMPDIFF('UNIT', t1, t2) is the number of
// whole units from t1 to t2 (negative when t2 is earlier), as INT.
func resolveTimestampDiff(args []types.T) (Resolved, error) {
	if err := nargs("TIMESTAMPDIFF", args, 3, 3); err != nil {
		return Resolved{}, err
	}
	ct, ok := CommonType(args[1], args[2])
	if args[0].Kind != types.String || !ok || !(ct.Kind == types.Timestamp || ct.Kind == types.Date || ct.Kind == types.Null) {
		return Resolved{}, errArgs("TIMESTAMPDIFF", args)
	}
	ct = ct.Nullable()
	if ct.Kind == types.Null {
		ct = types.TimestampType
	}
	rt := types.IntType
	return Resolved{Ret: rt, ArgTypes: []types.T{types.StringType, ct, ct}, Kernel: strict(rt, func(ctx *Context, args []Vec, n int) (Vec, error) {
		unit := newUnitArg(args[0], func(u string) error {
			if _, ok := unitMicros(u); !ok {
				return fmt.Errorf("unknown TIMESTAMPDIFF unit %s", u)
			}
			return nil
		})
		mem := ctx.mem()
		a, b := newTsArg(args[1]), newTsArg(args[2])
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int32](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			u, err := unit.at(i)
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			um, _ := unitMicros(u)
			var d int64
			if um == 0 {
				d = monthsBetween(a.micros(i), b.micros(i)) / unitMonths(u)
			} else {
				d = (b.micros(i) - a.micros(i)) / um
			}
			if int64(int32(d)) != d {
				val.release()
				buf.Release()
				return Vec{}, fmt.Errorf("INT overflow: TIMESTAMPDIFF(%s, ...) = %d is out of range", u, d)
			}
			out[i] = int32(d)
		}
		return finish(rt, n, val, buf), nil
	})}, nil
}

// resolveNow: the statement's time (Context.Now), the same for every row.
func resolveNow(name string, rt types.T) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 0, 0); err != nil {
			return Resolved{}, err
		}
		r := rt
		r.NotNull = true
		return Resolved{Ret: r, Kernel: func(ctx *Context, _ []Vec, _ int) (Vec, error) {
			switch rt.Kind {
			case types.Date:
				return ConstVec(rt, int32(floorDiv(ctx.Now, usPerDay))), nil
			case types.Time:
				_, tod := splitMicros(ctx.Now)
				return ConstVec(rt, int32(tod/usPerSec*1000)), nil
			}
			return ConstVec(rt, truncMicros(ctx.Now, rt.Precision)), nil
		}}, nil
	}
}

// resolveCurrentWatermark: CURRENT_WATERMARK(rowtime) is the watermark of
// the operator evaluating it, of the type of its argument, NULL while it
// has none (Flink's). The planner checks that the argument is a time
// attribute.
func resolveCurrentWatermark(args []types.T) (Resolved, error) {
	if err := nargs("CURRENT_WATERMARK", args, 1, 1); err != nil {
		return Resolved{}, err
	}
	if args[0].Kind != types.Timestamp {
		return Resolved{}, errArgs("CURRENT_WATERMARK", args)
	}
	rt := args[0].Nullable()
	return Resolved{Ret: rt, ArgTypes: []types.T{rt}, Kernel: func(ctx *Context, _ []Vec, _ int) (Vec, error) {
		if ctx == nil || !ctx.HasWatermark {
			return ConstVec(rt, nil), nil
		}
		return ConstVec(rt, truncMicros(ctx.Watermark, rt.Precision)), nil
	}}, nil
}

// resolveFloorCeilTemporal: FLOOR(t, 'UNIT') and CEIL(t, 'UNIT') round a
// TIMESTAMP or DATE down (up) to a multiple of SECOND, MINUTE, HOUR, DAY,
// or to the start of its WEEK (Monday), MONTH, QUARTER or YEAR.
func resolveFloorCeilTemporal(name string, args []types.T) (Resolved, error) {
	if len(args) == 2 && args[0].Kind == types.Time && args[1].Kind == types.String {
		return resolveFloorCeilTime(name, args)
	}
	if len(args) != 2 || !(args[0].Kind == types.Timestamp || args[0].Kind == types.Date) || args[1].Kind != types.String {
		return Resolved{}, errArgs(name, args)
	}
	t := args[0].Nullable()
	up := name == "CEIL"
	return Resolved{Ret: nullableFrom(t, args[:1]), ArgTypes: []types.T{t, types.StringType}, Kernel: strict(t, func(ctx *Context, args []Vec, n int) (Vec, error) {
		unit := newUnitArg(args[1], func(u string) error {
			if um, ok := unitMicros(u); !ok || um == 1 || um == 1000 {
				return fmt.Errorf("unknown %s unit %s", name, u)
			}
			return nil
		})
		mem := ctx.mem()
		x := newTsArg(args[0])
		val := andValidity(mem, args, n)
		round := func(i int) (int64, error) {
			u, err := unit.at(i)
			if err != nil {
				return 0, err
			}
			um, _ := unitMicros(u)
			us := x.micros(i)
			f := floorTemporal(us, u, um)
			if up && f != us {
				return ceilStep(f, u, um), nil
			}
			return f, nil
		}
		// round's TIMESTAMPs are whole seconds: truncating them to t's
		// precision changes nothing.
		return temporalColumn(mem, t, n, val, func(i int) (int64, bool, error) {
			us, err := round(i)
			return us, true, err
		})
	})}, nil
}

func floorTemporal(us int64, u string, um int64) int64 {
	days, _ := splitMicros(us)
	switch u {
	case "WEEK":
		monday := days - floorMod(days+3, 7)
		return monday * usPerDay
	case "MONTH", "QUARTER", "YEAR":
		y, m, _ := civil(days)
		switch u {
		case "QUARTER":
			m = (m-1)/3*3 + 1
		case "YEAR":
			m = 1
		}
		return daysFromCivil(y, m, 1) * usPerDay
	}
	return floorDiv(us, um) * um
}

func ceilStep(f int64, u string, um int64) int64 {
	switch u {
	case "MONTH", "QUARTER", "YEAR":
		return addMonthsMicros(f, unitMonths(u))
	}
	return f + um
}

// dateTruncUnit is the unit of DATE_TRUNC written as u (upper case):
// PostgreSQL's units from MICROSECOND to YEAR, singular or plural.
func dateTruncUnit(u string) (string, error) {
	if _, ok := unitMicros(u); ok {
		return u, nil
	}
	if s := strings.TrimSuffix(u, "S"); s != u {
		if _, ok := unitMicros(s); ok {
			return s, nil
		}
	}
	return "", invalidArg("unknown DATE_TRUNC unit %s (use MICROSECOND, MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR)", u)
}

// resolveDateTrunc: DATE_TRUNC('unit', t), PostgreSQL's (RisingWave's,
// DataFusion's) name for FLOOR(t TO unit): t rounded down to the start of
// its unit (weeks start on Monday). A TIMESTAMP(p) stays one; a DATE
// becomes a TIMESTAMP(0) first, as PostgreSQL casts it. A literal unit
// that is not one is an error at plan time; NULL gives NULL.
func resolveDateTrunc(args []Arg) (Resolved, error) {
	if len(args) != 2 || !(args[0].Type.Kind == types.String || args[0].Type.Kind == types.Null) ||
		!(args[1].Type.Kind == types.Timestamp || args[1].Type.Kind == types.Date || args[1].Type.Kind == types.Null) {
		ts := make([]types.T, len(args))
		for i, a := range args {
			ts[i] = a.Type
		}
		return Resolved{}, errArgs("DATE_TRUNC", ts)
	}
	if a := args[0]; a.Const {
		if u, ok := a.Value.(string); ok {
			if _, err := dateTruncUnit(strings.ToUpper(strings.TrimSpace(u))); err != nil {
				return Resolved{}, err
			}
		}
	}
	t := args[1].Type.Nullable()
	if t.Kind != types.Timestamp {
		t = types.TimestampOf(0).Nullable()
	}
	ret := t
	if args[0].Type.NotNull && args[1].Type.NotNull {
		ret.NotNull = true
	}
	return Resolved{Ret: ret, ArgTypes: []types.T{types.StringType, t}, Kernel: strict(t, func(ctx *Context, args []Vec, n int) (Vec, error) {
		unit := newUnitArg(args[0], func(u string) error {
			_, err := dateTruncUnit(u)
			return err
		})
		mem := ctx.mem()
		x := newTsArg(args[1])
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int64](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			u, err := unit.at(i)
			if err == nil {
				u, err = dateTruncUnit(u)
			}
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			um, _ := unitMicros(u)
			out[i] = floorTemporal(x.micros(i), u, um)
		}
		return finish(t, n, val, buf), nil
	})}, nil
}

// resolveFloorCeilTime: FLOOR/CEIL(time TO unit) for a TIME, to an HOUR,
// MINUTE, SECOND or MILLISECOND (FLOOR(TIME '12:44:31' TO MINUTE) is
// 12:44:00); a CEIL past 23:59:59.999 (24:00:00) is an error.
func resolveFloorCeilTime(name string, args []types.T) (Resolved, error) {
	t := args[0].Nullable()
	up := name == "CEIL"
	return Resolved{Ret: nullableFrom(t, args[:1]), ArgTypes: []types.T{t, types.StringType}, Kernel: strict(t, func(ctx *Context, args []Vec, n int) (Vec, error) {
		unit := newUnitArg(args[1], func(u string) error {
			switch u {
			case "HOUR", "MINUTE", "SECOND", "MILLISECOND":
				return nil
			}
			return fmt.Errorf("unknown %s unit %s for a TIME (HOUR, MINUTE, SECOND or MILLISECOND)", name, u)
		})
		mem := ctx.mem()
		var one [1]int32
		x, xm := operand(args[0], &one)
		val := andValidity(mem, args, n)
		buf, out := newFixedBuf[int32](mem, n)
		for i := range out {
			if !val.valid(i) {
				continue
			}
			u, err := unit.at(i)
			if err != nil {
				val.release()
				buf.Release()
				return Vec{}, err
			}
			um := int32(1)
			switch u {
			case "HOUR":
				um = 3600000
			case "MINUTE":
				um = 60000
			case "SECOND":
				um = 1000
			}
			ms := x[i&xm]
			f := ms / um * um
			if up && f != ms {
				f += um
				if f >= 86400000 {
					val.release()
					buf.Release()
					return Vec{}, fmt.Errorf("%s(%s TO %s) is 24:00:00, beyond the range of TIME", name, types.Format(t, ms), u)
				}
			}
			out[i] = f
		}
		return finish(t, n, val, buf), nil
	})}, nil
}
