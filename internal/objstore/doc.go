// Package objstore is the seam between checkpoint storage and where
// checkpoints are kept: a Store of named objects (put, get, list, delete,
// and create-if-absent), with two implementations, a directory of the
// local filesystem (FS) and a bucket of an S3-compatible object store
// (S3, through aws-sdk-go-v2). Open picks one by URI: s3://bucket/prefix,
// file:///path, or a plain path.
//
// Keys are '/'-separated names relative to the store's root (its prefix
// in the bucket, its directory on disk); they never start with '/' nor
// hold "." or ".." elements. Objects are written whole: a reader never
// sees part of a Put. Nothing here retries beyond what the S3 client
// itself does; a caller bounds each call with its context.
//
// Of ours it imports only internal/fsutil (the FS store writes through
// its seam, so fault tests can inject failures).
package objstore
