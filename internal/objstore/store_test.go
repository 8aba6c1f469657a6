package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopS3()
	os.Exit(code)
}

// s3Options are the options of the test binary's S3 server.
func s3Options(t *testing.T) S3Options {
	srv := testenv.S3(t)
	return S3Options{Endpoint: srv.Endpoint, PathStyle: true,
		AccessKey: srv.Var("AWS_ACCESS_KEY_ID"), SecretKey: srv.Var("AWS_SECRET_ACCESS_KEY")}
}

// stores returns the stores under test: a directory, and a fresh prefix
// of the real S3 server's bucket.
func stores(t *testing.T) map[string]Store {
	ctx := context.Background()
	s3, err := Open(ctx, fmt.Sprintf("s3://%s/%s-%d", testenv.S3Bucket, t.Name(), time.Now().UnixNano()), s3Options(t))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Store{"fs": NewFS(t.TempDir()), "s3": s3}
}

func get(t *testing.T, s Store, key string) string {
	t.Helper()
	r, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStore(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			put := func(key, data string) {
				t.Helper()
				if err := s.Put(ctx, key, strings.NewReader(data), int64(len(data))); err != nil {
					t.Fatalf("put %s: %v", key, err)
				}
			}
			put("chk-2/op-1/MANIFEST", "manifest two")
			put("chk-10/_metadata", "ten")
			put("shared/op-1/000001.sst", "sst one")
			put("shared/op-1/000001.sst", "sst one again") // replaced
			if got := get(t, s, "shared/op-1/000001.sst"); got != "sst one again" {
				t.Errorf("after a second put: %q", got)
			}
			// Create-if-absent: the first wins, the second writes nothing.
			if err := s.PutIfAbsent(ctx, "chk-2/_metadata", []byte("first")); err != nil {
				t.Fatal(err)
			}
			err := s.PutIfAbsent(ctx, "chk-2/_metadata", []byte("second"))
			if !errors.Is(err, ErrExists) {
				t.Fatalf("second PutIfAbsent: %v, want ErrExists", err)
			}
			if got := get(t, s, "chk-2/_metadata"); got != "first" {
				t.Errorf("after a refused PutIfAbsent: %q", got)
			}
			// Listing: by prefix, in key order, with sizes.
			all, err := s.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			want := "chk-10/_metadata:3 chk-2/_metadata:5 chk-2/op-1/MANIFEST:12 shared/op-1/000001.sst:13"
			if got := listed(all); got != want {
				t.Errorf("List(\"\") = %s, want %s", got, want)
			}
			chk2, err := s.List(ctx, "chk-2/")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := listed(chk2), "chk-2/_metadata:5 chk-2/op-1/MANIFEST:12"; got != want {
				t.Errorf("List(chk-2/) = %s, want %s", got, want)
			}
			// Deletes: an absent key is no error; a deleted key is not found.
			if err := s.Delete(ctx, "chk-2/_metadata", "chk-2/op-1/MANIFEST", "no/such/key"); err != nil {
				t.Fatal(err)
			}
			_, err = s.Get(ctx, "chk-2/_metadata")
			if !errors.Is(err, ErrNotFound) || !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("get of a deleted object: %v, want ErrNotFound and os.ErrNotExist", err)
			}
			left, err := s.List(ctx, "chk-2/")
			if err != nil || len(left) != 0 {
				t.Fatalf("List(chk-2/) after the deletes: %v, %v", listed(left), err)
			}
			if err := s.Put(ctx, "../escape", strings.NewReader("x"), 1); err == nil {
				t.Error("a key with '..' was accepted")
			}
		})
	}
}

// TestPutIfAbsentRace: of many concurrent creates of one key, exactly one
// wins, and the object holds the winner's data.
func TestPutIfAbsentRace(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					errs[i] = s.PutIfAbsent(context.Background(), "owner", []byte(fmt.Sprint("writer-", i)))
				})
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("writers %d and %d both won", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, ErrExists):
					t.Fatalf("writer %d: %v", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("no writer won")
			}
			if got := get(t, s, "owner"); got != fmt.Sprint("writer-", winner) {
				t.Errorf("object holds %q, the winner was %d", got, winner)
			}
		})
	}
}

// TestS3LargeObject: an object of several MiB round-trips byte for byte.
func TestS3LargeObject(t *testing.T) {
	s := stores(t)["s3"]
	data := bytes.Repeat([]byte("0123456789abcdef"), 5<<16) // 5 MiB
	data[12345] = 'X'
	if err := s.Put(context.Background(), "big", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "big"); got != string(data) {
		t.Fatalf("read back %d bytes, not what was written", len(got))
	}
}

// TestS3BadCredentials: a wrong secret is an error, not an empty answer.
func TestS3BadCredentials(t *testing.T) {
	o := s3Options(t)
	o.SecretKey = "wrong"
	s, err := NewS3(context.Background(), testenv.S3Bucket, "x", o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(context.Background(), ""); err == nil {
		t.Fatal("listing with a wrong secret key succeeded")
	}
	if _, err := NewS3(context.Background(), testenv.S3Bucket, "x", S3Options{AccessKey: "a"}); err == nil {
		t.Fatal("an access key without a secret key was accepted")
	}
}

func TestParseURI(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"s3://bucket/a/b/", "s3 bucket a/b"},
		{"s3://bucket", "s3 bucket "},
		{"s3a://bucket/x", "s3 bucket x"},
		{"file:///var/chk", "file /var/chk"},
		{"relative/dir", "file relative/dir"},
		{"/abs/dir", "file /abs/dir"},
		{"s3:///nobucket", "error"},
		{"s3://b/a//c", "error"},
		{"s3://b/a/../c", "error"},
		{"gs://bucket/x", "error"},
		{"file://host/x", "error"},
		{"", "error"},
	} {
		loc, err := ParseURI(c.in)
		got := "error"
		if err == nil {
			got = loc.Scheme + " " + loc.Bucket + " " + loc.Prefix
			if loc.Scheme == "file" {
				got = "file " + loc.Dir
			}
		} else if !errors.Is(err, ErrBadURI) {
			t.Errorf("%q: %v does not wrap ErrBadURI", c.in, err)
		}
		if got != c.want {
			t.Errorf("ParseURI(%q) = %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

func listed(objs []Object) string {
	var b strings.Builder
	for i, o := range objs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", o.Key, o.Size)
	}
	return b.String()
}

// TestS3DamagedObject: an object damaged on the server's disk (a byte
// flipped in the file its POSIX backend keeps) is read as an error
// wrapping ErrCorrupt, found by the checksum the client sent at the upload.
func TestS3DamagedObject(t *testing.T) {
	ctx := context.Background()
	prefix := fmt.Sprintf("damaged-%d", time.Now().UnixNano())
	s, err := NewS3(ctx, testenv.S3Bucket, prefix, s3Options(t))
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("sstable block "), 1000)
	if err := s.Put(ctx, "shared/000001.sst", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(testenv.S3(t).Dir, "data", testenv.S3Bucket, prefix, "shared", "000001.sst")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, "shared/000001.sst")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadAll(r); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading a damaged object: %v, want ErrCorrupt", err)
	}
}
