//go:build wasip1

package udf

import "unsafe"

// The module's exports, ABI version 1 (docs/UDF.md).

// state is the fixed descriptor the engine reads after every call:
// status, row, then the result's validity pointer, values pointer, values
// length and offsets pointer, then an error message's pointer and length.
var state [8]uint32

const (
	stStatus = iota
	stRow
	stValid
	stValues
	stValuesLen
	stOffsets
	stErr
	stErrLen
)

var (
	buffer []byte
	args   []Column
	result Result
	errMsg []byte
)

func ptr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

// bytesAt returns the n bytes at address p, which the engine put in the
// buffer of streamsql_udf_buffer (where all of a batch is).
func bytesAt(p, n uint32) []byte {
	if n == 0 {
		return nil
	}
	off := p - ptr(buffer)
	return buffer[off : off+n : off+n]
}

func int32sAt(p, n uint32) []int32 {
	b := bytesAt(p, 4*n)
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), n)
}

//go:wasmexport streamsql_udf_abi
func exportABI() int32 { return ABIVersion }

var sigText []byte

//go:wasmexport streamsql_udf_signature
func exportSignature() int64 {
	sigText = []byte(Signature())
	return int64(ptr(sigText))<<32 | int64(len(sigText))
}

//go:wasmexport streamsql_udf_state
func exportState() int32 { return int32(uintptr(unsafe.Pointer(&state[0]))) }

//go:wasmexport streamsql_udf_buffer
func exportBuffer(size int32) int32 {
	if int(size) > len(buffer) {
		buffer = make([]byte, int(size)+int(size)/4)
	}
	return int32(ptr(buffer))
}

//go:wasmexport streamsql_udf_call
func exportCall(in, n int32) int32 {
	if registered == nil {
		return fail("no function registered")
	}
	nargs := registered.nargs
	if cap(args) < nargs {
		args = make([]Column, nargs)
	}
	args = args[:nargs]
	hdr := unsafe.Slice((*uint32)(unsafe.Pointer(&bytesAt(uint32(in), uint32(16*nargs))[0])), 4*nargs)
	rows := uint32(n)
	for k := range args {
		valid, values, vlen, offs := hdr[4*k], hdr[4*k+1], hdr[4*k+2], hdr[4*k+3]
		c := &args[k]
		c.Valid = nil
		if valid != 0 {
			c.Valid = bytesAt(valid, rows)
		}
		c.Values = bytesAt(values, vlen)
		c.Offsets = nil
		if offs != 0 {
			c.Offsets = int32sAt(offs, rows+1)
		}
	}
	state[stStatus], state[stRow] = 0, 0
	if err := Run(int(n), args, &result, &state[stRow]); err != nil {
		return fail(err.Error())
	}
	state[stValid] = ptr(result.Valid)
	state[stValues] = ptr(result.Values)
	state[stValuesLen] = uint32(len(result.Values))
	state[stOffsets] = 0
	if len(result.Offsets) > 0 {
		state[stOffsets] = uint32(uintptr(unsafe.Pointer(&result.Offsets[0])))
	}
	return 0
}

func fail(msg string) int32 {
	errMsg = append(errMsg[:0], msg...)
	state[stStatus] = 1
	state[stErr], state[stErrLen] = ptr(errMsg), uint32(len(errMsg))
	return 1
}
