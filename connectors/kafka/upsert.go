package kafka

import (
	"fmt"
	"maps"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// upsertOptions returns the options of an upsert-kafka table as the kafka
// code reads them: 'key.fields' holds the PRIMARY KEY (set by
// ValidateUpsert at CREATE TABLE, as exec.TableSpec carries no key).
func upsertOptions(schema types.Schema, opts map[string]string) (map[string]string, error) {
	if opts[OptKeyFields] == "" {
		return nil, fmt.Errorf("upsert-kafka needs a PRIMARY KEY: it is the message key")
	}
	out := maps.Clone(opts)
	// Flink's upsert-kafka always reads the whole topic, from its start.
	delete(out, OptStartupMode)
	return out, nil
}

// ValidateUpsert checks an upsert-kafka table at CREATE TABLE: it needs a
// PRIMARY KEY, which becomes the message key. The key columns are recorded
// in the table's options as 'key.fields' (written by the user, it must be
// the primary key).
func ValidateUpsert(t *catalog.Table) error {
	if len(t.PrimaryKey) == 0 {
		return fmt.Errorf("upsert-kafka table %s needs a PRIMARY KEY (... PRIMARY KEY (col) NOT ENFORCED): it is the message key, and rows with the same key replace each other", t.Name)
	}
	pk := strings.Join(t.PrimaryKey, ";")
	if kf, ok := t.Options[OptKeyFields]; ok && !strings.EqualFold(strings.Join(splitList(kf, ";"), ";"), pk) {
		return fmt.Errorf("upsert-kafka table %s: the message key is the PRIMARY KEY (%s); '%s' = '%s' names other columns", t.Name, strings.Join(t.PrimaryKey, ", "), OptKeyFields, kf)
	}
	if t.Options == nil {
		t.Options = map[string]string{}
	}
	t.Options[OptKeyFields] = pk
	opts, err := upsertOptions(t.Columns, t.Options)
	if err != nil {
		return err
	}
	_, err = parse(t.Name, t.Columns, opts, true)
	return err
}

// NewUpsertSource builds a subtask of an upsert-kafka scan: a changelog
// normalised from the topic's upserts (see the package documentation).
func NewUpsertSource(spec exec.TableSpec) (exec.Source, error) { return newSource(spec, true) }

// NewUpsertSink builds a subtask of an upsert-kafka sink.
func NewUpsertSink(spec exec.TableSpec) (exec.Sink, error) { return newSink(spec, true) }

// UpsertOptions lists the option keys of upsert-kafka.
func UpsertOptions() []string { return optionKeys(true) }

// IsBounded reports whether a scan of a kafka or upsert-kafka table with
// these options ends ('scan.bounded.mode' other than 'unbounded').
func IsBounded(opts map[string]string) bool { return isBounded(opts) }
