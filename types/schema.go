package types

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Column is a named, typed column of a row type.
type Column struct {
	Name string
	Type T
}

// Schema is an ordered row type. Column names are matched case-insensitively,
// as Flink does by default for unquoted identifiers in our dialect.
type Schema []Column

// Index returns the position of the column named name, or -1.
func (s Schema) Index(name string) int {
	for i, c := range s {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// Names returns the column names in order.
func (s Schema) Names() []string {
	out := make([]string, len(s))
	for i, c := range s {
		out[i] = c.Name
	}
	return out
}

// Arrow returns the Arrow schema of a batch with these columns.
func (s Schema) Arrow() *arrow.Schema {
	fs := make([]arrow.Field, len(s))
	for i, c := range s {
		fs[i] = c.Type.Field(c.Name)
	}
	return arrow.NewSchema(fs, nil)
}

// String prints the row type as ROW<`a` BIGINT, `b` STRING>.
func (s Schema) String() string {
	var b strings.Builder
	b.WriteString("ROW<")
	for i, c := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("`" + c.Name + "` " + c.Type.String())
	}
	b.WriteString(">")
	return b.String()
}
