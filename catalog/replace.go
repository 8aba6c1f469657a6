package catalog

import "fmt"

// ReplaceTable puts t in the catalog whether or not a table of its name
// exists (CREATE OR REPLACE TABLE), after checking its options as
// CreateTable does, and returns the table it replaced (nil: none). A table
// with exactly t's definition is left as it is: the error wraps
// ErrSameDefinition. A view of t's name is ErrTableExists. On any error
// the catalog is unchanged.
func (c *Catalog) ReplaceTable(t *Table) (*Table, error) {
	if t.Connector == "" {
		t.Connector = MemoryConnector
	}
	if err := checkOptions(t); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.views[key(t.Name)] != nil {
		return nil, fmt.Errorf("%w: %s is a view (CREATE OR REPLACE VIEW replaces it; DROP VIEW drops it)", ErrTableExists, t.Name)
	}
	old := c.tables[key(t.Name)]
	if old != nil && sameJSON(old, t) {
		return old, fmt.Errorf("table %s %w", t.Name, ErrSameDefinition)
	}
	c.tables[key(t.Name)] = t
	if err := c.save(); err != nil {
		c.restore(key(t.Name), old)
		return nil, err
	}
	return old, nil
}

// AlterTable puts t in place of the table called name (ALTER TABLE), after
// checking t's options as CreateTable does. When t.Name is another name
// (RENAME TO) no table or view may hold it. On any error the catalog is
// unchanged.
func (c *Catalog) AlterTable(name string, t *Table) error {
	if t.Connector == "" {
		t.Connector = MemoryConnector
	}
	if err := checkOptions(t); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.tables[key(name)]
	if old == nil {
		return fmt.Errorf("%w: %s%s", ErrTableNotFound, name, closest(name, c.namesLocked()))
	}
	renamed := key(t.Name) != key(name)
	if renamed && (c.tables[key(t.Name)] != nil || c.views[key(t.Name)] != nil) {
		return fmt.Errorf("%w: %s", ErrTableExists, t.Name)
	}
	if renamed {
		delete(c.tables, key(name))
	}
	c.tables[key(t.Name)] = t
	if err := c.save(); err != nil {
		if renamed {
			delete(c.tables, key(t.Name))
		}
		c.tables[key(name)] = old
		return err
	}
	return nil
}

// ReplaceView puts v in the catalog whether or not a view of its name
// exists (CREATE OR REPLACE VIEW). A view with exactly v's definition is
// left as it is (the error wraps ErrSameDefinition); a table of v's name
// is ErrTableExists.
func (c *Catalog) ReplaceView(v *View) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tables[key(v.Name)] != nil {
		return fmt.Errorf("%w: %s is a table (CREATE OR REPLACE TABLE replaces it; DROP TABLE drops it)", ErrTableExists, v.Name)
	}
	old := c.views[key(v.Name)]
	if old != nil && sameJSON(old, v) {
		return fmt.Errorf("view %s %w", v.Name, ErrSameDefinition)
	}
	c.views[key(v.Name)] = v
	if err := c.save(); err != nil {
		if old == nil {
			delete(c.views, key(v.Name))
		} else {
			c.views[key(v.Name)] = old
		}
		return err
	}
	return nil
}

// restore puts old back under k (removing k's entry when old is nil).
// The caller holds mu.
func (c *Catalog) restore(k string, old *Table) {
	if old == nil {
		delete(c.tables, k)
		return
	}
	c.tables[k] = old
}
