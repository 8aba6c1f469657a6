package checkpoint

import (
	"errors"
	"fmt"
)

// ErrIncompatibleState is returned when state in a checkpoint or savepoint
// cannot be restored into the job: an encoding of a version this streamsql
// does not read, or a layout that does not match the operator it is
// restored into (another key type, another list of aggregates). The error
// names the operator and what differs. State is never decoded as zeros.
var ErrIncompatibleState = errors.New("incompatible state")

// stateMagic opens every versioned state encoding, so that bytes written
// before encodings carried versions (or by something else) are refused
// rather than misread.
const stateMagic = 0xA7

// AppendStateHeader starts a state encoding of the given format version.
// Every encoding an operator, source or sink puts in a checkpoint starts
// with one, and its decoder checks it with ReadStateHeader.
func AppendStateHeader(dst []byte, version uint8) []byte {
	return append(dst, stateMagic, version)
}

// ReadStateHeader checks the header of a state encoding written by
// AppendStateHeader and returns its version and the bytes after it. A
// version outside [minVersion, maxVersion], or bytes without a header, is
// ErrIncompatibleState naming owner (the operator or connector whose state
// it is) and the versions this build reads.
func ReadStateHeader(src []byte, owner string, minVersion, maxVersion uint8) (uint8, []byte, error) {
	if len(src) < 2 || src[0] != stateMagic {
		return 0, nil, fmt.Errorf("%w: %s: state without a format header (written by an older streamsql?); this build reads versions %d to %d",
			ErrIncompatibleState, owner, minVersion, maxVersion)
	}
	v := src[1]
	if v < minVersion || v > maxVersion {
		return 0, nil, fmt.Errorf("%w: %s: state format version %d; this build reads versions %d to %d",
			ErrIncompatibleState, owner, v, minVersion, maxVersion)
	}
	return v, src[2:], nil
}
