package functions

import (
	"github.com/streamsql/streamsql/types"
)

// intDigits is the number of decimal digits an integer kind needs.
func intDigits(k types.Kind) int {
	switch k {
	case types.TinyInt:
		return 3
	case types.SmallInt:
		return 5
	case types.Int:
		return 10
	case types.BigInt:
		return 19
	}
	return 0
}

// asDecimal returns the DECIMAL type an exact numeric type widens to.
func asDecimal(t types.T) types.T {
	if t.Kind == types.Decimal {
		return t
	}
	return types.DecimalOf(intDigits(t.Kind), 0)
}

// ImplicitCast reports whether a value of type from may be used where to is
// expected without an explicit CAST, following Flink's implicit rules:
// NULL to anything; within a type family regardless of precision (all
// character strings, DECIMALs, TIMESTAMPs, TIMEs, each interval kind); and
// numeric widening TINYINT < SMALLINT < INT < BIGINT < DECIMAL < FLOAT <
// DOUBLE. Nullability is ignored.
func ImplicitCast(from, to types.T) bool {
	if from.Kind == types.Null || from.Kind == to.Kind {
		return true
	}
	if from.IsNumeric() && to.IsNumeric() {
		return from.Kind < to.Kind
	}
	return false
}

// CommonType returns the least restrictive type of ts (for UNION, CASE
// branches, IN lists and comparisons), as Flink's type merging: NULL merges
// with anything; exact numerics merge to the widest integer or a DECIMAL
// wide enough for all integer digits and the largest scale (at most
// DECIMAL(38, s)); FLOAT with integers stays FLOAT, any DOUBLE (or FLOAT with
// DECIMAL) gives DOUBLE; TIMESTAMPs take the largest precision and DATE
// merges with TIMESTAMP to TIMESTAMP; strings merge to STRING. Other mixes
// have no common type. The result is NOT NULL only when all inputs are.
func CommonType(ts ...types.T) (types.T, bool) {
	if len(ts) == 0 {
		return types.NullType, false
	}
	res := types.NullType
	notNull := true
	for _, t := range ts {
		if !t.NotNull {
			notNull = false
		}
		t.NotNull = false
		var ok bool
		res, ok = merge2(res, t)
		if !ok {
			return types.T{}, false
		}
	}
	res.NotNull = notNull
	return res, true
}

func merge2(a, b types.T) (types.T, bool) {
	switch {
	case a.Kind == types.Null:
		return b, true
	case b.Kind == types.Null:
		return a, true
	}
	if a.IsNumeric() && b.IsNumeric() {
		return mergeNumeric(a, b), true
	}
	if a.Kind == types.Row || b.Kind == types.Row {
		return mergeRows(a, b)
	}
	if a.Kind == b.Kind {
		switch a.Kind {
		case types.Timestamp, types.Time:
			a.Precision = max(a.Precision, b.Precision)
		}
		return a, true
	}
	if (a.Kind == types.Date && b.Kind == types.Timestamp) || (a.Kind == types.Timestamp && b.Kind == types.Date) {
		if a.Kind == types.Date {
			return b, true
		}
		return a, true
	}
	return types.T{}, false
}

func mergeNumeric(a, b types.T) types.T {
	if a.IsInteger() && b.IsInteger() {
		if a.Kind >= b.Kind {
			return a
		}
		return b
	}
	if a.Kind == types.Double || b.Kind == types.Double {
		return types.DoubleType
	}
	if a.Kind == types.Float || b.Kind == types.Float {
		if a.Kind == types.Decimal || b.Kind == types.Decimal {
			return types.DoubleType
		}
		return types.FloatType
	}
	da, db := asDecimal(a), asDecimal(b)
	scale := max(da.Scale, db.Scale)
	digits := max(da.Precision-da.Scale, db.Precision-db.Scale)
	p := digits + scale
	if p > 38 {
		p = 38
		scale = min(scale, 38-digits)
		if scale < 0 {
			scale = 0
		}
	}
	return types.DecimalOf(p, scale)
}

// comparisonType is the type both sides of a comparison are cast to:
// CommonType, and also a temporal type when the other side is a string (a
// string compared with a DATE/TIME/TIMESTAMP is parsed as that type, as
// Flink does for literals).
func comparisonType(a, b types.T) (types.T, bool) {
	if a.Kind == types.Row || b.Kind == types.Row {
		return types.T{}, false // rows are not compared: their fields are
	}
	if a.Kind == types.String && b.IsTemporal() {
		return b.Nullable(), true
	}
	if b.Kind == types.String && a.IsTemporal() {
		return a.Nullable(), true
	}
	t, ok := CommonType(a, b)
	t.NotNull = false
	return t, ok
}

// adjustDecimal caps a derived DECIMAL at precision 38 as Flink does:
// keeping the integer digits and at least min(scale, 6) fractional digits.
func adjustDecimal(p, s int) types.T {
	if p <= 38 {
		return types.DecimalOf(p, s)
	}
	digits := p - s
	minScale := min(s, 6)
	return types.DecimalOf(38, max(38-digits, minScale))
}

// decimalArithType is Flink's result type of DECIMAL op DECIMAL.
func decimalArithType(op string, a, b types.T) types.T {
	p1, s1, p2, s2 := a.Precision, a.Scale, b.Precision, b.Scale
	switch op {
	case "+", "-":
		s := max(s1, s2)
		return adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
	case "*":
		return adjustDecimal(p1+p2+1, s1+s2)
	case "/":
		s := max(6, s1+p2+1)
		return adjustDecimal(p1-s1+s2+s, s)
	default: // %
		s := max(s1, s2)
		return adjustDecimal(min(p1-s1, p2-s2)+s, s)
	}
}

// mergeRows merges two ROWs of as many fields field by field, with the
// names of a.
func mergeRows(a, b types.T) (types.T, bool) {
	if a.Kind != b.Kind || len(a.Fields) != len(b.Fields) {
		return types.T{}, false
	}
	out := types.T{Kind: types.Row, Fields: make([]types.Column, len(a.Fields))}
	for i, f := range a.Fields {
		t, ok := CommonType(f.Type, b.Fields[i].Type)
		if !ok {
			return types.T{}, false
		}
		out.Fields[i] = types.Column{Name: f.Name, Type: t}
	}
	return out, true
}
