// Package udf runs user-defined functions compiled to WebAssembly: it
// compiles a module (wazero, pure Go, ahead of time), reads the signature
// its exports declare, and calls it once per batch of rows over the ABI of
// docs/UDF.md (version 1), the argument columns copied into the module's
// memory and the results read back into an Arrow array.
//
// A Module is a compiled function, safe for concurrent use; its instances
// are not: Acquire gives an Instance that one goroutine (an operator
// subtask) uses for as long as it likes, and Release gives it back to the
// module's pool of idle instances. Every instance runs in a sandbox: no
// file system, no network, no clock beyond WASI's, no environment; its
// memory is bounded by the function's 'memory-limit' option and each call
// by 'call-timeout' (the call is stopped, the instance closed). A trap, a
// panic or an exit of the module is an error naming the function and the
// row of the batch it was at; with 'ignore-errors', that row is NULL and
// counted (Module.FailedRows) and the batch goes again without it.
//
// A compiled module stays in the process (Load's cache, keyed by the
// function's name, the module's hash and its options) until the process
// ends: a server that sees many versions of a module keeps each.
//
// The planner reads a function's Signature (Load at planning, Signature to
// type-check a call); exec calls it (Instance.Call). The module's guest
// side, for Go, is package sdk/udf.
package udf
