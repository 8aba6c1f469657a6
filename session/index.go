package session

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
)

// index executes SQLite's CREATE INDEX, DROP INDEX and REINDEX. Tables
// have no indexes (a query scans the table, a join keeps its own state by
// key), so on an in-memory table (created without WITH) they are no-ops
// that say so; on a table with a connector CREATE INDEX is refused. The
// names of the indexes are the session's, not the catalog's: DROP INDEX
// of an unknown name is an error, as in SQLite, and DROP TABLE drops the
// table's indexes (dropIndexesOf).
func (s *Session) index(st *sql.Index) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.indexes == nil {
		s.indexes = map[string]string{}
	}
	key := strings.ToLower(st.Name)
	switch st.Kind {
	case sql.CreateIndex:
		t, ok := s.cat.Table(st.Table)
		if !ok {
			if _, isView := s.cat.View(st.Table); isView {
				return nil, sql.Errorf(st.TablePos, "cannot create an index on view %s", st.Table)
			}
			return nil, sql.Errorf(st.TablePos, "table not found: %s", st.Table)
		}
		if t.Connector != catalog.MemoryConnector {
			e := sql.Errorf(st.Pos(), "CREATE INDEX is not supported on table %s (connector '%s')", st.Table, t.Connector)
			e.Hint = "only tables created without WITH take CREATE INDEX, as a no-op"
			return nil, e
		}
		if old, ok := s.indexes[key]; ok {
			if _, live := s.cat.Table(old); live {
				if st.IfNotExists {
					return &Result{Message: fmt.Sprintf("[INFO] Index %s already exists.", st.Name)}, nil
				}
				return nil, sql.Errorf(st.NamePos, "index %s already exists", st.Name)
			}
		}
		s.indexes[key] = t.Name
		return &Result{Message: fmt.Sprintf("[INFO] Index %s accepted as a no-op: in-memory tables have no indexes, queries scan %s.", st.Name, t.Name)}, nil
	case sql.DropIndex:
		if _, ok := s.indexes[key]; !ok {
			if st.IfExists {
				return &Result{Message: fmt.Sprintf("[INFO] Index %s does not exist: nothing dropped.", st.Name)}, nil
			}
			e := sql.Errorf(st.NamePos, "index not found: %s", st.Name)
			e.Hint = "use DROP INDEX IF EXISTS to ignore a missing one"
			return nil, e
		}
		delete(s.indexes, key)
		return &Result{Message: fmt.Sprintf("[INFO] Index %s dropped (it was a no-op).", st.Name)}, nil
	default: // REINDEX
		if st.Name != "" {
			_, isIndex := s.indexes[key]
			t, isTable := s.cat.Table(st.Name)
			if !isIndex && !isTable {
				return nil, sql.Errorf(st.NamePos, "no table or index named %s", st.Name)
			}
			if isTable && t.Connector != catalog.MemoryConnector {
				return nil, sql.Errorf(st.Pos(), "REINDEX is not supported on table %s (connector '%s')", st.Name, t.Connector)
			}
		}
		return &Result{Message: "[INFO] REINDEX is a no-op: in-memory tables have no indexes."}, nil
	}
}

// dropIndexesOf forgets the indexes of table, which DROP TABLE dropped.
func (s *Session) dropIndexesOf(table string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, t := range s.indexes {
		if strings.EqualFold(t, table) {
			delete(s.indexes, name)
		}
	}
}
