package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrNotFound is returned (wrapped, together with os.ErrNotExist) by Get of
// a key that has no object.
var ErrNotFound = errors.New("object not found")

// ErrExists is returned (wrapped) by PutIfAbsent of a key that already has
// an object.
var ErrExists = errors.New("object already exists")

// ErrCorrupt is returned (wrapped) by a read of an object whose content
// does not match the checksum the service stored with it.
var ErrCorrupt = errors.New("object damaged: checksum mismatch")

// ErrBadURI is returned (wrapped) by Open and ParseURI for a location they
// do not take.
var ErrBadURI = errors.New("bad storage location")

// Object is one listed object.
type Object struct {
	Key  string // relative to the store's root
	Size int64
}

// Store keeps named objects. Its methods are safe for concurrent use.
type Store interface {
	// Put writes the object key from r, size bytes, replacing any object
	// of that name. The object appears whole or not at all.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// PutIfAbsent writes the object key only if none of that name exists
	// (S3's If-None-Match: *); otherwise it writes nothing and returns an
	// error wrapping ErrExists. Of two concurrent calls at most one wins.
	PutIfAbsent(ctx context.Context, key string, data []byte) error
	// Get opens the object key; the caller closes it. An absent object is
	// an error wrapping ErrNotFound and os.ErrNotExist; a read of an
	// object whose content the service finds damaged, one wrapping
	// ErrCorrupt.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns every object whose key starts with prefix, in key
	// order.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Delete removes the objects keys; an absent one is not an error.
	Delete(ctx context.Context, keys ...string) error
	// String is the store's location, as Open takes it.
	String() string
}

// S3Options are how to reach an S3-compatible service. Empty fields are
// taken from the standard AWS environment variables and files
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, ~/.aws/config,
// ~/.aws/credentials...); without any region, us-east-1.
type S3Options struct {
	// Endpoint is the service's URL, such as http://127.0.0.1:9000 ("":
	// AWS's own).
	Endpoint string
	// PathStyle addresses buckets as endpoint/bucket/key rather than
	// bucket.endpoint/key.
	PathStyle bool
	// AccessKey and SecretKey are static credentials (both or neither).
	AccessKey, SecretKey string
}

// Location is a parsed storage location.
type Location struct {
	// Scheme is "s3" or "file".
	Scheme string
	// Bucket and Prefix of an s3 location (Prefix without leading or
	// trailing '/').
	Bucket, Prefix string
	// Dir of a file location: an absolute or relative local path.
	Dir string
}

// IsRemote reports whether a location names an object store rather than
// a local directory: it has a scheme other than file://.
func IsRemote(uri string) bool {
	scheme, _, ok := strings.Cut(uri, "://")
	return ok && scheme != "file"
}

// ParseURI parses s3://bucket[/prefix], file:///path or a plain path.
// Another scheme, an s3 URI without bucket, or a prefix with empty, "."
// or ".." elements is an error wrapping ErrBadURI.
func ParseURI(uri string) (Location, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		if uri == "" {
			return Location{}, fmt.Errorf("%w: empty path", ErrBadURI)
		}
		return Location{Scheme: "file", Dir: uri}, nil
	}
	switch strings.ToLower(scheme) {
	case "file":
		u, err := url.Parse(uri)
		if err != nil || u.Path == "" || (u.Host != "" && u.Host != "localhost") {
			return Location{}, fmt.Errorf("%w: %q: want file:///absolute/path", ErrBadURI, uri)
		}
		return Location{Scheme: "file", Dir: u.Path}, nil
	case "s3", "s3a":
		bucket, prefix, _ := strings.Cut(rest, "/")
		prefix = strings.Trim(prefix, "/")
		if bucket == "" {
			return Location{}, fmt.Errorf("%w: %q: no bucket (want s3://bucket/prefix)", ErrBadURI, uri)
		}
		if prefix != "" {
			for _, el := range strings.Split(prefix, "/") {
				if el == "" || el == "." || el == ".." {
					return Location{}, fmt.Errorf("%w: %q: the prefix has an empty, '.' or '..' element", ErrBadURI, uri)
				}
			}
		}
		return Location{Scheme: "s3", Bucket: bucket, Prefix: prefix}, nil
	default:
		return Location{}, fmt.Errorf("%w: %q: unknown scheme %q (want s3://bucket/prefix, file:///path or a path)", ErrBadURI, uri, scheme)
	}
}

// Open returns the store at uri (ParseURI); o is used for s3 locations.
func Open(ctx context.Context, uri string, o S3Options) (Store, error) {
	loc, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if loc.Scheme == "file" {
		return NewFS(loc.Dir), nil
	}
	return NewS3(ctx, loc.Bucket, loc.Prefix, o)
}

// Join joins key elements with '/'.
func Join(elem ...string) string { return path.Join(elem...) }

// checkKey refuses a key that is empty, absolute, or has empty, "." or
// ".." elements.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") {
		return fmt.Errorf("objstore: bad key %q", key)
	}
	for _, el := range strings.Split(key, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("objstore: bad key %q", key)
		}
	}
	return nil
}

// notFound is the error of Get of an absent key.
func notFound(where, key string) error {
	return fmt.Errorf("%s: %s: %w (%w)", where, key, ErrNotFound, os.ErrNotExist)
}

// localPath is key's path under dir.
func localPath(dir, key string) string { return filepath.Join(dir, filepath.FromSlash(key)) }
