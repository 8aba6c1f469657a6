package filesystem

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/types"

	_ "github.com/streamsql/streamsql/connectors/format/csv"      // registers csv
	_ "github.com/streamsql/streamsql/connectors/format/debezium" // registers debezium-json
	_ "github.com/streamsql/streamsql/connectors/format/json"     // registers json
)

// Name is the value of the 'connector' option.
const Name = "filesystem"

// Option keys.
const (
	OptPath   = "path"
	OptFormat = "format"
)

type config struct {
	path   string
	format *format.Format
}

func parse(schema types.Schema, opts map[string]string) (config, error) {
	var c config
	c.path = opts[OptPath]
	if c.path == "" {
		return c, fmt.Errorf("'%s' must not be empty", OptPath)
	}
	// Flink writes paths as URIs: file:///tmp/x is the local /tmp/x.
	if scheme, rest, ok := strings.Cut(c.path, "://"); ok {
		if scheme != "file" {
			return c, fmt.Errorf("'%s' = '%s': the %s:// file system is not supported (a local path or file:///path)", OptPath, c.path, scheme)
		}
		if !strings.HasPrefix(rest, "/") {
			return c, fmt.Errorf("'%s' = '%s': a file:// path must be absolute (file:///path)", OptPath, c.path)
		}
		c.path = rest
	}
	var err error
	if c.format, err = format.Lookup(opts[OptFormat]); err != nil {
		return c, fmt.Errorf("'%s': %v", OptFormat, err)
	}
	for k := range opts {
		name, _, ok := strings.Cut(k, ".")
		if ok && name != c.format.Name && slices.Contains(format.Names(), name) {
			return c, fmt.Errorf("option '%s' does not apply to format '%s'", k, c.format.Name)
		}
	}
	// Build a decoder and an encoder once to check the format's options.
	spec := format.Spec{Schema: schema, Options: opts, Prefix: c.format.Name + "."}
	d, err := c.format.NewDecoder(spec)
	if err != nil {
		return c, err
	}
	d.Release()
	if _, err := c.format.NewEncoder(spec); err != nil {
		return c, err
	}
	return c, nil
}

func validate(t *catalog.Table) error {
	_, err := parse(t.Columns, t.Options)
	return err
}

func optionKeys() []string {
	return append([]string{OptPath, OptFormat}, format.OptionKeys()...)
}
