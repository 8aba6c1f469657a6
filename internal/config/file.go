package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Entry is one option of a configuration file: its key (the dotted path
// of the nested maps it is in, as Flink flattens them), its value's text
// as written (unquoted), and the line the value is on.
type Entry struct {
	Key, Value string
	Line       int
}

// FileError is an error at a line of a configuration file; it prints as
// "file:line: message" ("file: message" when Line is 0).
type FileError struct {
	File string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap is the error at the line (a *Error for a bad value).
func (e *FileError) Unwrap() error { return e.Err }

// ParseYAML reads a configuration file in the layout of Flink 2's
// config.yaml: one YAML document whose top is a map of options, each
// either a flat key ("execution.checkpointing.interval: 10 s") or nested
// maps whose keys join with dots ("execution: {checkpointing: {interval:
// 10 s}}"); the two forms mean the same and mix freely. Every value must
// be a non-empty scalar: a list, an empty map or a null is an error, so nothing in
// the file is accepted and ignored, and so is a key given twice, in
// whatever form. Values are returned as their text; checking the keys and
// values against the options' definitions is the caller's. An empty file
// (or one of comments only) has no entries. Every error is a *FileError
// naming file (as given) and, where there is one, the line.
func ParseYAML(file string, data []byte) ([]Entry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(file, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return nil, &FileError{File: file, Line: more.Line, Err: errors.New("a second YAML document: the file must be one map of options")}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(file, err)
	}
	top := &doc
	if top.Kind == yaml.DocumentNode {
		if len(top.Content) == 0 {
			return nil, nil
		}
		top = top.Content[0]
	}
	top = resolve(top)
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, &FileError{File: file, Line: top.Line, Err: errors.New("the file must be a map of options (key: value), one a line or nested")}
	}
	p := flattener{file: file, lines: map[string]int{}}
	if err := p.mapping("", top); err != nil {
		return nil, err
	}
	return p.out, nil
}

// flattener collects a mapping's entries under their dotted keys.
type flattener struct {
	file  string
	out   []Entry
	lines map[string]int // key -> line of the entry
}

func (p *flattener) mapping(prefix string, m *yaml.Node) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := resolve(m.Content[i]), resolve(m.Content[i+1])
		// An alias's line is where it is written, not its anchor's.
		line := m.Content[i+1].Line
		if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
			return &FileError{File: p.file, Line: k.Line, Err: errors.New("a key must be a name such as 'execution.checkpointing.interval'")}
		}
		key := prefix + strings.TrimSpace(k.Value)
		switch v.Kind {
		case yaml.MappingNode:
			if len(v.Content) == 0 {
				return &FileError{File: p.file, Line: k.Line, Err: fmt.Errorf("option '%s' has no value (an empty map)", key)}
			}
			if err := p.mapping(key+".", v); err != nil {
				return err
			}
		case yaml.SequenceNode:
			return &FileError{File: p.file, Line: v.Line, Err: fmt.Errorf("option '%s' takes one value, not a list", key)}
		case yaml.ScalarNode:
			if v.Tag == "!!null" || strings.TrimSpace(v.Value) == "" {
				return &FileError{File: p.file, Line: k.Line, Err: fmt.Errorf("option '%s' has no value", key)}
			}
			if first, ok := p.lines[key]; ok {
				return &FileError{File: p.file, Line: line, Err: fmt.Errorf("option '%s' is given twice (first at line %d)", key, first)}
			}
			p.lines[key] = line
			p.out = append(p.out, Entry{Key: key, Value: v.Value, Line: line})
		default:
			return &FileError{File: p.file, Line: v.Line, Err: fmt.Errorf("option '%s' has a value that is not text", key)}
		}
	}
	return nil
}

// resolve follows an alias (*anchor) to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// yamlLine finds the line in the YAML library's messages ("yaml: line 3:
// could not find expected ':'").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError makes the YAML library's error a *FileError at its line.
func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FileError{File: file, Line: line, Err: fmt.Errorf("not valid YAML: %s", m[2])}
	}
	return &FileError{File: file, Err: fmt.Errorf("not valid YAML: %s", strings.TrimPrefix(msg, "yaml: "))}
}
