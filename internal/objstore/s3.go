package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3 is a Store under a prefix of a bucket of an S3-compatible service:
// the object key is bucket/prefix/key.
type S3 struct {
	client         *s3.Client
	bucket, prefix string
}

// NewS3 returns the store under prefix of bucket. It does not reach the
// service: a wrong endpoint, bucket or credentials fail the first call.
func NewS3(ctx context.Context, bucket, prefix string, o S3Options) (*S3, error) {
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return nil, errors.New("objstore: an S3 access key needs its secret key, and a secret key its access key")
	}
	var lo []func(*config.LoadOptions) error
	if o.AccessKey != "" {
		lo = append(lo, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.AccessKey, o.SecretKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("objstore: reading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.UsePathStyle = o.PathStyle
	})
	return &S3{client: client, bucket: bucket, prefix: strings.Trim(prefix, "/")}, nil
}

func (s *S3) String() string {
	if s.prefix == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + s.prefix
}

func (s *S3) full(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

// Put implements Store. r is read once; a seekable r (a file, a
// bytes.Reader) lets the client retry.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(s.full(key)),
		Body: r, ContentLength: aws.Int64(size)})
	if err != nil {
		return fmt.Errorf("%s: put %s: %w", s, key, err)
	}
	return nil
}

// PutIfAbsent implements Store with a conditional PUT (If-None-Match: *).
func (s *S3) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(s.full(key)),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))), IfNoneMatch: aws.String("*")})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict") {
			return fmt.Errorf("%s: %s: %w", s, key, ErrExists)
		}
		return fmt.Errorf("%s: put %s if absent: %w", s, key, err)
	}
	return nil
}

// Get implements Store.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.full(key))})
	if err != nil {
		var nsk *types.NoSuchKey
		var re interface{ HTTPStatusCode() int }
		if errors.As(err, &nsk) || (errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound) {
			return nil, notFound(s.String(), key)
		}
		return nil, fmt.Errorf("%s: get %s: %w", s, key, err)
	}
	return &checkedBody{ReadCloser: out.Body, where: s.String() + "/" + key}, nil
}

// checkedBody marks the client's checksum failure of an object's content
// as ErrCorrupt. The client validates the CRC the service stored at the
// upload as the body is read, and fails the read that ends it with an
// error of an unexported type, known only by its message.
type checkedBody struct {
	io.ReadCloser
	where string
}

func (b *checkedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && strings.Contains(err.Error(), "checksum did not match") {
		err = fmt.Errorf("%s: %w: %w", b.where, ErrCorrupt, err)
	}
	return n, err
}

// List implements Store.
func (s *S3) List(ctx context.Context, prefix string) ([]Object, error) {
	full := s.full(prefix)
	if prefix == "" && s.prefix != "" {
		full = s.prefix + "/"
	}
	var out []Object
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(full)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: list %s: %w", s, prefix, err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if s.prefix != "" {
				key = strings.TrimPrefix(key, s.prefix+"/")
			}
			out = append(out, Object{Key: key, Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil
}

// Delete implements Store: one DELETE per key (a missing key is not an
// error in S3).
func (s *S3) Delete(ctx context.Context, keys ...string) error {
	for _, key := range keys {
		if err := checkKey(key); err != nil {
			return err
		}
		if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.full(key))}); err != nil {
			return fmt.Errorf("%s: delete %s: %w", s, key, err)
		}
	}
	return nil
}
