package memory

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// upsertKey returns the indexes in schema of the columns changes upsert by:
// the primary key columns pk, unless the table has a watermark (the
// column watermark): then it is a versioned table, whose rows are the
// versions of each key, and none is returned.
func upsertKey(table string, schema types.Schema, pk []string, watermark string) ([]int, error) {
	if watermark != "" {
		return nil, nil
	}
	var key []int
	for _, k := range pk {
		i := schema.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("memory table %s: primary key column %s is not a column of the table", table, k)
		}
		key = append(key, i)
	}
	return key, nil
}

// applyChange commits the changes of an UPDATE or DELETE to the memory table t
// of dataDir atomically, as one commit of its sink would
// (catalog.Connector.Change): removed are the rows -U or -D remove (an
// equal row, or with an upsert key the row of its key), added those +U
// adds (with an upsert key, replacing the row of its key). The rows are
// values of t's physical columns. On error nothing changes.
func applyChange(dataDir string, t *catalog.Table, removed, added [][]types.Value) error {
	rows := append(append([][]types.Value(nil), removed...), added...)
	ops := make([]exec.RowKind, 0, len(rows))
	for range removed {
		ops = append(ops, exec.UpdateBefore)
	}
	for range added {
		ops = append(ops, exec.UpdateAfter)
	}
	if len(rows) == 0 {
		return nil
	}
	schema, _ := t.Physical()
	tb, err := open(dataDir, t.Name, schema)
	if err != nil {
		return err
	}
	key, err := upsertKey(t.Name, schema, t.PrimaryKey, t.WatermarkColumn)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, tb.schema)
	defer b.Release()
	for _, row := range rows {
		if len(row) != len(schema) {
			return fmt.Errorf("memory table %s: a row of %d values, the table has %d columns", t.Name, len(row), len(schema))
		}
		for c, v := range row {
			types.AppendValue(b.Field(c), v)
		}
	}
	c := change{rec: b.NewRecordBatch(), ops: ops}
	return tb.apply([]change{c}, schema, "", key)
}
