package avro

import (
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/internal/option"
)

// Names are the values of the 'format' option.
const (
	Name          = "avro"
	ConfluentName = "avro-confluent"
)

// Option keys, without prefix.
const (
	// OptIgnoreParseErrors skips records that do not decode, and counts
	// them (both formats; Flink's avro formats lack it).
	OptIgnoreParseErrors = format.OptIgnoreParseErrors
	// OptURL is the schema registry's URL (avro-confluent); OptURLLegacy
	// is its older name.
	OptURL       = "url"
	OptURLLegacy = "schema-registry.url"
	// OptSubject is the subject the encoder registers its schema under
	// (avro-confluent); OptSubjectLegacy is its older name.
	OptSubject       = "subject"
	OptSubjectLegacy = "schema-registry.subject"
)

func init() {
	format.Register(format.Format{
		Name:       Name,
		Extension:  ".avro",
		Options:    []string{OptIgnoreParseErrors},
		Binary:     true,
		NewDecoder: func(s format.Spec) (format.Decoder, error) { return NewDecoder(s) },
		NewEncoder: func(s format.Spec) (format.Encoder, error) { return NewEncoder(s) },
	})
	format.Register(format.Format{
		Name:       ConfluentName,
		Extension:  ".avro",
		Options:    []string{OptIgnoreParseErrors, OptURL, OptURLLegacy, OptSubject, OptSubjectLegacy},
		Binary:     true,
		NewDecoder: func(s format.Spec) (format.Decoder, error) { return NewConfluentDecoder(s) },
		NewEncoder: func(s format.Spec) (format.Encoder, error) { return NewConfluentEncoder(s) },
	})
}

func ignoreParseErrors(s format.Spec) (bool, error) {
	return option.Bool(s.Options, s.Prefix+OptIgnoreParseErrors, false)
}
