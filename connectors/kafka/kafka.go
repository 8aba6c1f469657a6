package kafka

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/registry"
	"github.com/streamsql/streamsql/exec"
)

// Name is the value of the 'connector' option.
const Name = "kafka"

func init() {
	registry.Register(catalog.Connector{
		Name:               Name,
		Source:             true,
		Sink:               true,
		AcceptsUpdatesWith: changelogFormat,
		ProducesUpdates:    changelogFormat,
		Bounded:            isBounded,
		Options:            optionKeys(false),
		Required:           []string{OptBootstrapServers},
		Validate: func(t *catalog.Table) error {
			_, err := parse(t.Name, t.Columns, t.Options, false)
			return err
		},
	}, NewSource, NewSink)
}

// changelogFormat reports whether the value format is a changelog
// (debezium-json): the table then takes and produces -U/+U/-D rows.
func changelogFormat(opts map[string]string) bool {
	f := opts[OptFormat]
	if f == "" {
		f = opts[OptValueFormat]
	}
	return f == "debezium-json"
}

// NewSource builds a subtask of a kafka scan.
func NewSource(spec exec.TableSpec) (exec.Source, error) { return newSource(spec, false) }

// NewSink builds a subtask of a kafka sink.
func NewSink(spec exec.TableSpec) (exec.Sink, error) { return newSink(spec, false) }
