package catalog

import (
	"errors"
	"fmt"
	"sort"

	"github.com/streamsql/streamsql/types"
)

// Sentinel errors of functions; test with errors.Is.
var (
	ErrFunctionNotFound = errors.New("function not found")
	ErrFunctionExists   = errors.New("function already exists")
)

// Function is a user-defined function as CREATE FUNCTION declared it: a
// WebAssembly module and the signature it declared then.
type Function struct {
	Name string
	// Path is the module's file, absolute; SHA256 its content's hash (hex)
	// at CREATE FUNCTION: a module changed since is an error where the
	// function is called, not a different function.
	Path   string
	SHA256 string
	// Options are the WITH options (the sandbox's limits).
	Options map[string]string `json:",omitempty"`
	// Args, Ret and CalledOnNull are the signature the module declares.
	Args         []types.T
	Ret          types.T
	CalledOnNull bool `json:",omitempty"`
	// Temporary functions live as long as the session; they are not
	// written to the data dir.
	Temporary bool `json:",omitempty"`
}

// CreateFunction adds f. With ifNotExists an existing function of that
// name is left alone.
func (c *Catalog) CreateFunction(f *Function, ifNotExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.functions[key(f.Name)]; old != nil {
		if ifNotExists {
			return nil
		}
		if sameJSON(old, f) {
			return fmt.Errorf("function %s %w", f.Name, ErrSameDefinition)
		}
		return fmt.Errorf("%w: %s (with a different definition; DROP FUNCTION drops it, CREATE FUNCTION IF NOT EXISTS keeps it)",
			ErrFunctionExists, f.Name)
	}
	c.functions[key(f.Name)] = f
	if f.Temporary {
		return nil
	}
	return c.save()
}

// DropFunction removes a function. Missing is an error unless ifExists;
// temporary says the statement was DROP TEMPORARY FUNCTION, which drops a
// temporary function only, as DROP FUNCTION drops a catalog one only
// (Flink's rule).
func (c *Catalog) DropFunction(name string, ifExists, temporary bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.functions[key(name)]
	if f == nil {
		if ifExists {
			return nil
		}
		var names []string
		for _, f := range c.functions {
			names = append(names, f.Name)
		}
		return fmt.Errorf("%w: %s%s", ErrFunctionNotFound, name, closest(name, names))
	}
	if f.Temporary != temporary {
		if f.Temporary {
			return fmt.Errorf("%w: %s is a temporary function: DROP TEMPORARY FUNCTION %s drops it", ErrFunctionNotFound, f.Name, f.Name)
		}
		return fmt.Errorf("%w: %s is not a temporary function: DROP FUNCTION %s drops it", ErrFunctionNotFound, f.Name, f.Name)
	}
	delete(c.functions, key(name))
	if f.Temporary {
		return nil
	}
	return c.save()
}

// Function returns the function called name.
func (c *Catalog) Function(name string) (*Function, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.functions[key(name)]
	return f, ok
}

// Functions lists the user's functions, sorted by name.
func (c *Catalog) Functions() []*Function {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Function, 0, len(c.functions))
	for _, f := range c.functions {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
