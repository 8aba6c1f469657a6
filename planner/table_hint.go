package planner

import (
	"errors"
	"maps"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/internal/config"
	"github.com/streamsql/streamsql/sql"
)

// hintedTable returns t with the options of a table hint
// (FROM t /*+ OPTIONS('k'='v') */) over its own, as Flink's dynamic table
// options: for this scan only. The options are checked as CREATE TABLE
// checks a table's; the connector cannot be changed.
func hintedTable(t *catalog.Table, hint []sql.Option) (*catalog.Table, error) {
	ht := *t
	ht.Options = maps.Clone(t.Options)
	if ht.Options == nil {
		ht.Options = map[string]string{}
	}
	for _, o := range hint {
		if strings.EqualFold(o.Key, "connector") {
			return nil, errAt(ErrUnsupported, o.Pos, "", "an OPTIONS hint cannot change the connector of table '%s'", t.Name)
		}
		ht.Options[o.Key] = o.Value
	}
	if err := catalog.CheckOptions(&ht); err != nil {
		pos := hint[0].Pos
		for _, o := range hint {
			if strings.Contains(err.Error(), "'"+o.Key+"'") {
				pos = o.Pos
				break
			}
		}
		var ce *config.Error
		if errors.As(err, &ce) {
			return nil, errAt(catalog.ErrBadOption, pos, "", "OPTIONS hint on table '%s': %v", t.Name, ce)
		}
		return nil, errAt(catalog.ErrBadOption, pos, "", "OPTIONS hint on table '%s': %v", t.Name, err)
	}
	return &ht, nil
}
