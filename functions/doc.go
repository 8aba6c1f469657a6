// Package functions is streamsql's scalar function library: every operator
// and function a query may call, how each resolves against argument types
// (result type, implicit casts), and the kernels that evaluate them over
// Arrow arrays a batch at a time.
package functions
