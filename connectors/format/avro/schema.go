package avro

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// ErrUnmappable is the error of a column whose type has no Avro
// counterpart (errors.Is).
var ErrUnmappable = errors.New("type without an Avro counterpart")

// RecordName is the full name of the record derived from a table, Flink's.
const RecordName = "org.apache.flink.avro.generated.record"

// Schema returns the Avro schema (as JSON) of rows of s, as Flink's
// AvroSchemaConverter derives it; an error names the first column whose
// type cannot be mapped.
func Schema(s types.Schema) (string, error) {
	var b strings.Builder
	if err := writeRecord(&b, RecordName, s, ""); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeRecord(b *strings.Builder, name string, cols []types.Column, path string) error {
	b.WriteString(`{"type":"record","name":`)
	writeString(b, name)
	b.WriteString(`,"fields":[`)
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":`)
		writeString(b, c.Name)
		b.WriteString(`,"type":`)
		if !c.Type.NotNull {
			b.WriteString(`["null",`)
		}
		if err := writeType(b, name+"_"+c.Name, c.Type, path+c.Name); err != nil {
			return err
		}
		if !c.Type.NotNull {
			b.WriteString(`],"default":null`)
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return nil
}

func writeType(b *strings.Builder, name string, t types.T, path string) error {
	switch t.Kind {
	case types.Boolean:
		b.WriteString(`"boolean"`)
	case types.TinyInt, types.SmallInt, types.Int:
		b.WriteString(`"int"`)
	case types.BigInt:
		b.WriteString(`"long"`)
	case types.Float:
		b.WriteString(`"float"`)
	case types.Double:
		b.WriteString(`"double"`)
	case types.String:
		b.WriteString(`"string"`)
	case types.Bytes:
		b.WriteString(`"bytes"`)
	case types.Decimal:
		fmt.Fprintf(b, `{"type":"bytes","logicalType":"decimal","precision":%d,"scale":%d}`, t.Precision, t.Scale)
	case types.Date:
		b.WriteString(`{"type":"int","logicalType":"date"}`)
	case types.Time:
		b.WriteString(`{"type":"int","logicalType":"time-millis"}`)
	case types.Timestamp:
		switch {
		case t.Precision <= 3:
			b.WriteString(`{"type":"long","logicalType":"timestamp-millis"}`)
		case t.Precision <= 6:
			b.WriteString(`{"type":"long","logicalType":"timestamp-micros"}`)
		default:
			return fmt.Errorf("%w: column '%s' of type %s (Avro timestamps hold at most microseconds: use TIMESTAMP(6))", ErrUnmappable, path, t)
		}
	case types.Row:
		return writeRecord(b, name, t.Fields, path+".")
	default:
		return fmt.Errorf("%w: column '%s' of type %s cannot be written as Avro", ErrUnmappable, path, t)
	}
	return nil
}

func writeString(b *strings.Builder, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}
