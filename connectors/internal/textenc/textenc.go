package textenc

import (
	"encoding/base64"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// AppendValue appends the text of row i of arr, of type t, to dst. The
// caller handles NULL (arr.IsNull(i)) itself.
func AppendValue(dst []byte, t types.T, arr arrow.Array, i int) []byte {
	switch a := arr.(type) {
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i))
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int64:
		if t.IsInterval() {
			return append(dst, types.Format(t, a.Value(i))...)
		}
		return strconv.AppendInt(dst, a.Value(i), 10)
	case *array.Float32:
		return append(dst, types.FormatFloat(float64(a.Value(i)))...)
	case *array.Float64:
		return append(dst, types.FormatFloat(a.Value(i))...)
	case *array.Decimal128:
		return append(dst, types.FormatDecimal(a.Value(i), t.Scale)...)
	case *array.String:
		return append(dst, a.Value(i)...)
	case *array.Binary:
		return base64.StdEncoding.AppendEncode(dst, a.Value(i))
	case *array.Date32:
		return append(dst, types.FormatDate(int32(a.Value(i)))...)
	case *array.Time32:
		return append(dst, types.FormatTime(int32(a.Value(i)), t.Precision)...)
	case *array.Timestamp:
		return append(dst, types.FormatTimestamp(int64(a.Value(i)), t.Precision)...)
	}
	return append(dst, types.Format(t, types.ValueAt(arr, i))...)
}

// IsNumber reports whether values of t are written as JSON numbers.
func IsNumber(t types.T) bool {
	return t.IsInteger() || t.Kind == types.Decimal || t.IsApproximate()
}
