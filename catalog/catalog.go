package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/types"
)

// Sentinel errors; wrap them with context and test with errors.Is.
var (
	ErrTableNotFound    = errors.New("table not found")
	ErrTableExists      = errors.New("table already exists")
	ErrUnknownConnector = errors.New("unknown connector")
	ErrBadOption        = errors.New("bad connector option")
)

// MemoryConnector is the connector of a table created without WITH: an
// in-memory bounded table that INSERT INTO t VALUES fills.
const MemoryConnector = "memory"

// Table is a table as declared by CREATE TABLE.
type Table struct {
	Name string
	// Columns are all the columns in declared order: the physical ones,
	// which the connector reads and writes, and the computed ones.
	Columns types.Schema
	// Computed are the computed columns ("c AS expr"), kept as text and
	// bound when the table is read; their types are in Columns. A computed
	// column is never read or written by the connector: a scan computes it
	// from the physical columns of each row, and INSERT INTO the table
	// gives values to the physical columns only.
	Computed []ComputedColumn `json:",omitempty"`
	// WatermarkColumn and WatermarkExpr are the WATERMARK FOR clause
	// (empty when absent); the expression is kept as text and bound when used.
	WatermarkColumn string   `json:",omitempty"`
	WatermarkExpr   string   `json:",omitempty"`
	PrimaryKey      []string `json:",omitempty"`
	// PartitionKeys are the columns of PARTITIONED BY: the connector
	// writes the rows of each value of them under a directory of its own
	// (Connector.Partitioned).
	PartitionKeys []string `json:",omitempty"`
	Connector     string
	Options       map[string]string `json:",omitempty"`
	// AppendOnly (RisingWave's CREATE TABLE ... APPEND ONLY) makes the
	// table take inserts only: writing a query that produces updates into
	// it is an error.
	AppendOnly bool `json:",omitempty"`
}

// ComputedColumn is a computed column of a table: Name AS Expr.
type ComputedColumn struct {
	Name string
	Expr string
}

// ComputedExpr returns the expression text of computed column name (any
// case), and false for a physical column.
func (t *Table) ComputedExpr(name string) (string, bool) {
	for _, c := range t.Computed {
		if strings.EqualFold(c.Name, name) {
			return c.Expr, true
		}
	}
	return "", false
}

// Physical returns the physical columns, in order, and their indexes in
// Columns: what the connector reads and writes. Without computed columns it
// is Columns itself.
func (t *Table) Physical() (types.Schema, []int) {
	out, idx := make(types.Schema, 0, len(t.Columns)), make([]int, 0, len(t.Columns))
	for i, c := range t.Columns {
		if _, computed := t.ComputedExpr(c.Name); !computed {
			out, idx = append(out, c), append(idx, i)
		}
	}
	return out, idx
}

// PhysicalTable returns t as its connector sees it: the physical columns
// only (t itself when it has no computed columns).
func (t *Table) PhysicalTable() *Table {
	if len(t.Computed) == 0 {
		return t
	}
	c := *t
	c.Columns, _ = t.Physical()
	c.Computed = nil
	return &c
}

// View is a view as declared by CREATE VIEW. The query is kept as text and
// planned where the view is used.
type View struct {
	Name      string
	Columns   []string `json:",omitempty"`
	Query     string
	Temporary bool `json:",omitempty"`
}

// Catalog holds tables and views. It is safe for concurrent use. Names
// compare case-insensitively.
type Catalog struct {
	mu     sync.RWMutex
	path   string // "" for a catalog that is not persisted
	tables map[string]*Table
	views  map[string]*View
	// functions are the user's functions, by lower-cased name.
	functions map[string]*Function
}

type onDisk struct {
	Tables    []*Table
	Views     []*View
	Functions []*Function `json:",omitempty"`
}

// Open loads the catalog kept in dir (creating dir if needed). An empty dir
// gives an in-memory catalog that is never written.
func Open(dir string) (*Catalog, error) {
	c := &Catalog{tables: map[string]*Table{}, views: map[string]*View{}, functions: map[string]*Function{}}
	if dir == "" {
		return c, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c.path = filepath.Join(dir, "catalog.json")
	data, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	var d onDisk
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("catalog %s is damaged: %w", c.path, err)
	}
	for _, t := range d.Tables {
		c.tables[key(t.Name)] = t
	}
	for _, v := range d.Views {
		c.views[key(v.Name)] = v
	}
	for _, f := range d.Functions {
		c.functions[key(f.Name)] = f
	}
	return c, nil
}

func key(name string) string { return strings.ToLower(name) }

// save writes the catalog atomically. The caller holds mu.
func (c *Catalog) save() error {
	if c.path == "" {
		return nil
	}
	var d onDisk
	for _, t := range c.tables {
		d.Tables = append(d.Tables, t)
	}
	for _, v := range c.views {
		if !v.Temporary {
			d.Views = append(d.Views, v)
		}
	}
	for _, f := range c.functions {
		if !f.Temporary {
			d.Functions = append(d.Functions, f)
		}
	}
	sort.Slice(d.Functions, func(i, j int) bool { return d.Functions[i].Name < d.Functions[j].Name })
	sort.Slice(d.Tables, func(i, j int) bool { return d.Tables[i].Name < d.Tables[j].Name })
	sort.Slice(d.Views, func(i, j int) bool { return d.Views[i].Name < d.Views[j].Name })
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(c.path, data)
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// ErrSameDefinition is returned (wrapped) by CreateTable and CreateView when
// the object exists with exactly the definition given: running the same
// script again on the same data directory is not an error, the caller
// reports it and goes on.
var ErrSameDefinition = errors.New("already exists with the same definition")

// CreateTable adds t after checking its options against its connector. With
// ifNotExists an existing table or view of that name is left alone.
func (c *Catalog) CreateTable(t *Table, ifNotExists bool) error {
	if t.Connector == "" {
		t.Connector = MemoryConnector
	}
	if err := checkOptions(t); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.tables[key(t.Name)]; old != nil || c.views[key(t.Name)] != nil {
		if ifNotExists {
			return nil
		}
		if old != nil && sameJSON(old, t) {
			return fmt.Errorf("table %s %w", t.Name, ErrSameDefinition)
		}
		return fmt.Errorf("%w: %s (with a different definition; CREATE OR REPLACE TABLE replaces it, ALTER TABLE changes it, "+
			"DROP TABLE drops it, CREATE TABLE IF NOT EXISTS keeps it)", ErrTableExists, t.Name)
	}
	c.tables[key(t.Name)] = t
	return c.save()
}

// CreateView adds v.
func (c *Catalog) CreateView(v *View, ifNotExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.views[key(v.Name)]; old != nil || c.tables[key(v.Name)] != nil {
		if ifNotExists {
			return nil
		}
		if old != nil && sameJSON(old, v) {
			return fmt.Errorf("view %s %w", v.Name, ErrSameDefinition)
		}
		return fmt.Errorf("%w: %s (with a different definition; CREATE OR REPLACE VIEW replaces it, "+
			"DROP VIEW drops it, CREATE VIEW IF NOT EXISTS keeps it)", ErrTableExists, v.Name)
	}
	c.views[key(v.Name)] = v
	return c.save()
}

// DropTable removes a table. Missing is an error unless ifExists.
func (c *Catalog) DropTable(name string, ifExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables[key(name)] == nil {
		if ifExists {
			return nil
		}
		return fmt.Errorf("%w: %s%s", ErrTableNotFound, name, closest(name, c.namesLocked()))
	}
	delete(c.tables, key(name))
	return c.save()
}

// DropView removes a view. Missing is an error unless ifExists.
func (c *Catalog) DropView(name string, ifExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.views[key(name)] == nil {
		if ifExists {
			return nil
		}
		return fmt.Errorf("%w: view %s", ErrTableNotFound, name)
	}
	delete(c.views, key(name))
	return c.save()
}

// Table returns the table called name.
func (c *Catalog) Table(name string) (*Table, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[key(name)]
	return t, ok
}

// View returns the view called name.
func (c *Catalog) View(name string) (*View, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.views[key(name)]
	return v, ok
}

// Tables lists table names, sorted.
func (c *Catalog) Tables() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, t := range c.tables {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// Views lists view names, sorted.
func (c *Catalog) Views() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	for _, v := range c.views {
		out = append(out, v.Name)
	}
	sort.Strings(out)
	return out
}

// Names lists every table and view name (for "did you mean" hints).
func (c *Catalog) Names() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.namesLocked()
}

func (c *Catalog) namesLocked() []string {
	var out []string
	for _, t := range c.tables {
		out = append(out, t.Name)
	}
	for _, v := range c.views {
		out = append(out, v.Name)
	}
	sort.Strings(out)
	return out
}
