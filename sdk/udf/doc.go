// Package udf is the guest side of streamsql's user-defined functions: a
// Go program built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared that
// imports it and registers one function in an init func becomes a module
// that CREATE FUNCTION ... LANGUAGE WASM accepts:
//
//	package main
//
//	import "github.com/streamsql/streamsql/sdk/udf"
//
//	func init() {
//		udf.Scalar2(func(s, c string) int64 { return int64(strings.Count(s, c)) })
//	}
//
//	func main() {}
//
// The package hides the ABI (docs/UDF.md): the engine calls the module once
// per batch of rows, with the argument columns in the module's memory, and
// the package calls the registered Go function once per row, writing the
// results where the engine reads them back. The function's Go types are its
// SQL signature: int32 is INT, int64 BIGINT, float64 DOUBLE, bool BOOLEAN,
// string STRING. A function registered with Scalar, Scalar2 or Scalar3 is
// not called on NULL: a row with a NULL argument gives NULL. One registered
// with NullableScalar, NullableScalar2 or NullableScalar3 takes and returns
// Nullable values and is called on every row.
//
// A string argument is valid only during the call: it points into the
// batch, which the next batch overwrites. A function that keeps one (in a
// map, a global) keeps a copy, strings.Clone(s).
//
// A panic in the function fails the batch with an error that names the
// row and the panic's value. A module registers exactly one function;
// registering a second panics when the module starts.
//
// The package compiles on every platform (its tests run on the host); the
// exports exist only under GOOS=wasip1 (export_wasip1.go). The engine never
// imports it.
package udf
