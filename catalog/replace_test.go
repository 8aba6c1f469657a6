package catalog

import (
	"errors"
	"testing"

	"github.com/streamsql/streamsql/types"
)

func init() {
	RegisterConnector(Connector{Name: "replace-test", Source: true, Options: []string{"k"}})
}

// TestAlterAndReplacePersist: ALTER TABLE (a rename included), CREATE OR
// REPLACE TABLE and CREATE OR REPLACE VIEW are on disk when they return,
// and one that fails leaves the catalog, in memory and on disk, as it was.
func TestAlterAndReplacePersist(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl := func(name, v string) *Table {
		return &Table{Name: name, Columns: types.Schema{{Name: "a", Type: types.BigIntType}}, Connector: "replace-test", Options: map[string]string{"k": v}}
	}
	if err := c.CreateTable(tbl("t", "1"), false); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(tbl("u", "1"), false); err != nil {
		t.Fatal(err)
	}
	if err := c.AlterTable("t", tbl("t2", "2")); err != nil {
		t.Fatal(err)
	}
	if err := c.AlterTable("t2", tbl("u", "3")); !errors.Is(err, ErrTableExists) {
		t.Fatalf("renaming onto an existing table: %v, want ErrTableExists", err)
	}
	bad := tbl("t2", "4")
	bad.Options["nope"] = "x"
	if err := c.AlterTable("t2", bad); !errors.Is(err, ErrBadOption) {
		t.Fatalf("an unknown option: %v, want ErrBadOption", err)
	}
	if _, err := c.ReplaceTable(tbl("u", "5")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReplaceTable(tbl("u", "5")); !errors.Is(err, ErrSameDefinition) {
		t.Fatalf("the same definition again: %v, want ErrSameDefinition", err)
	}
	if err := c.ReplaceView(&View{Name: "v", Query: "SELECT 1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.ReplaceView(&View{Name: "v", Query: "SELECT 2"}); err != nil {
		t.Fatal(err)
	}
	if err := c.ReplaceView(&View{Name: "u", Query: "SELECT 2"}); !errors.Is(err, ErrTableExists) {
		t.Fatalf("a view over a table: %v, want ErrTableExists", err)
	}
	if _, err := c.ReplaceTable(tbl("v", "1")); !errors.Is(err, ErrTableExists) {
		t.Fatalf("a table over a view: %v, want ErrTableExists", err)
	}

	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Table("t"); ok {
		t.Error("t is still there after RENAME TO t2")
	}
	if got, ok := r.Table("t2"); !ok || got.Options["k"] != "2" {
		t.Errorf("t2 = %+v, %v; want k=2", got, ok)
	}
	if got, ok := r.Table("u"); !ok || got.Options["k"] != "5" {
		t.Errorf("u = %+v, %v; want k=5", got, ok)
	}
	if got, ok := r.View("v"); !ok || got.Query != "SELECT 2" {
		t.Errorf("v = %+v, %v; want SELECT 2", got, ok)
	}
}
