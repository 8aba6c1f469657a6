// Package statecodec encodes what the connectors keep in checkpoints (a
// source's position, a sink's commit handle) with the versioned header of
// checkpoint.AppendStateHeader, and decodes it strictly: a version this
// build does not read, bytes without the header, or a layout that does not
// fit (an unknown field, a field of another type, trailing bytes) is an
// error wrapping checkpoint.ErrIncompatibleState that names the owner (the
// connector and table) and what differs. State is never decoded as zeros.
//
// Each encoding has a golden file under its package's testdata/state
// (CheckGolden): an encoding that changes without a version bump fails
// its test.
package statecodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/streamsql/streamsql/checkpoint"
)

// EncodeJSON returns the header of version followed by v as JSON.
func EncodeJSON(version uint8, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(checkpoint.AppendStateHeader(make([]byte, 0, len(body)+2), version), body...), nil
}

// DecodeJSON checks the header of src (versions minVersion to maxVersion)
// and decodes the JSON object after it into v, a pointer to a struct. It
// returns the version read.
func DecodeJSON(src []byte, owner string, minVersion, maxVersion uint8, v any) (uint8, error) {
	version, body, err := checkpoint.ReadStateHeader(src, owner, minVersion, maxVersion)
	if err != nil {
		return 0, err
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		// null would decode to the zero value: never a position.
		return 0, Incompatible(owner, version, "the state is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return 0, Incompatible(owner, version, "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, Incompatible(owner, version, "trailing bytes after the state")
	}
	return version, nil
}

// Incompatible returns an error wrapping checkpoint.ErrIncompatibleState:
// owner's state of the given version does not fit the layout this build
// reads, for the reason given.
func Incompatible(owner string, version uint8, format string, args ...any) error {
	return fmt.Errorf("%w: %s: state format version %d: %s", checkpoint.ErrIncompatibleState, owner, version, fmt.Sprintf(format, args...))
}
