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
	"encoding/binary"
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

// AppendSplits returns the header of version followed by the splits of a
// sequence source: their number, then each split's values, as uvarints.
// The second value of a split is its step.
func AppendSplits(version uint8, splits [][]uint64) []byte {
	width := 0
	if len(splits) > 0 {
		width = len(splits[0])
	}
	b := make([]byte, 0, 2+binary.MaxVarintLen64*(1+width*len(splits)))
	b = checkpoint.AppendStateHeader(b, version)
	b = binary.AppendUvarint(b, uint64(len(splits)))
	for _, sp := range splits {
		for _, v := range sp {
			b = binary.AppendUvarint(b, v)
		}
	}
	return b
}

// DecodeSplits reads what AppendSplits wrote (versions minVersion to
// maxVersion), width values a split; a split whose step is 0 does not fit.
func DecodeSplits(src []byte, owner string, minVersion, maxVersion uint8, width int) ([][]uint64, error) {
	version, state, err := checkpoint.ReadStateHeader(src, owner, minVersion, maxVersion)
	if err != nil {
		return nil, err
	}
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(state)
		if n <= 0 {
			return 0, false
		}
		state = state[n:]
		return v, true
	}
	n, ok := next()
	if !ok || n > 1<<20 {
		return nil, Incompatible(owner, version, "bad number of splits")
	}
	out := make([][]uint64, n)
	for i := range out {
		out[i] = make([]uint64, width)
		for j := range out[i] {
			if out[i][j], ok = next(); !ok {
				return nil, Incompatible(owner, version, "split %d of %d truncated", i, n)
			}
		}
		if out[i][1] == 0 {
			return nil, Incompatible(owner, version, "split %d has step 0", i)
		}
	}
	if len(state) > 0 {
		return nil, Incompatible(owner, version, "%d bytes after the splits", len(state))
	}
	return out, nil
}
