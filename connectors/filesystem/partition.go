package filesystem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/types"
)

// Partitioned tables (PARTITIONED BY (dt, hm)), as Flink's filesystem
// connector writes them: the rows of each value of the partition columns
// go under a directory of their own, one level per column,
//
//	<path>/dt=2024-01-01/hm=00%3A00/part-0-3.csv
//
// and the files hold the other columns only. A value is written as text
// with the characters Flink escapes in a path escaped as %XX (':' is %3A,
// '/' is %2F, '=' is %3D, '%' is %25, ...); NULL (and the empty string) is
// 'partition.default-name' (default __DEFAULT_PARTITION__). A scan reads
// the partition columns back from the directories' names.
//
// Partition commit: with 'sink.partition-commit.policy.kind' =
// 'success-file' a partition gets an empty file named
// 'sink.partition-commit.success-file.name' (default _SUCCESS) once its
// rows are committed and the watermark has passed its time plus
// 'sink.partition-commit.delay' (trigger 'partition-time', the only one
// taken; Flink's 'process-time' and the 'metastore' and 'custom' policies
// are refused). Its time is 'partition.time-extractor.timestamp-pattern'
// with each $column replaced by the partition's value ('$dt $hm:00'), or
// the first partition value without a pattern, read as 'yyyy-MM-dd
// HH:mm:ss' or 'yyyy-MM-dd' in UTC. Each sink subtask decides with its
// own watermark, at each completed checkpoint, for every partition under
// the path: when it has passed, it leaves a hidden marker
// .committed-<subtask> in the partition; the subtask that finds the
// markers of all subtasks there writes the success file and deletes the
// markers. So a partition is committed once every subtask's watermark has
// passed it, as Flink's single committer does, and the markers on disk
// carry this across a restart. The end of a bounded input commits every
// partition.

const (
	defaultPartitionName = "__DEFAULT_PARTITION__"
	defaultSuccessFile   = "_SUCCESS"
	markerPrefix         = ".committed-"
)

// partitionOptions reads the partitioning options of a table partitioned
// by keys.
func (c *config) partitionOptions(schema types.Schema, keys []string, opts map[string]string) error {
	c.partitionKeys = keys
	c.defaultPartition = defaultPartitionName
	if v, ok := opts[OptDefaultPartition]; ok {
		if v == "" || strings.ContainsAny(v, `/\`) {
			return fmt.Errorf("'%s' = '%s': not a directory name", OptDefaultPartition, v)
		}
		c.defaultPartition = v
	}
	for _, k := range keys {
		i := schema.Index(k)
		if i < 0 {
			return fmt.Errorf("PARTITIONED BY column '%s' is not a column", k)
		}
		switch schema[i].Type.Kind {
		case types.String, types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		default:
			return fmt.Errorf("PARTITIONED BY column '%s' is %s; a partition column must be a STRING or an integer", k, schema[i].Type)
		}
	}
	if len(keys) == len(schema) && len(keys) > 0 {
		return fmt.Errorf("every column is a PARTITIONED BY column: the files would hold nothing")
	}
	policy, hasPolicy := opts[OptCommitPolicy]
	if !hasPolicy {
		for _, k := range []string{OptCommitTrigger, OptCommitDelay, OptSuccessFileName, OptTimePattern} {
			if _, ok := opts[k]; ok {
				return fmt.Errorf("'%s' needs '%s' = 'success-file' (no partition is committed without a policy)", k, OptCommitPolicy)
			}
		}
		return nil
	}
	if len(keys) == 0 {
		return fmt.Errorf("'%s' applies to a table with PARTITIONED BY", OptCommitPolicy)
	}
	if policy != "success-file" {
		return fmt.Errorf("'%s' = '%s' is not supported: only 'success-file' (no metastore here, nor custom policies)", OptCommitPolicy, policy)
	}
	c.commit = true
	if t, ok := opts[OptCommitTrigger]; !ok || t != "partition-time" {
		return fmt.Errorf("'%s' = '%s' is not supported with a commit policy: only 'partition-time' (the watermark passes the partition's time)", OptCommitTrigger, opts[OptCommitTrigger])
	}
	if v, ok := opts[OptCommitDelay]; ok {
		d, err := types.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("'%s' = '%s': not a duration such as '1 min'", OptCommitDelay, v)
		}
		c.delay = d
	}
	c.successFile = defaultSuccessFile
	if v, ok := opts[OptSuccessFileName]; ok {
		if !validName(v) {
			return fmt.Errorf("'%s' = '%s': not a file name", OptSuccessFileName, v)
		}
		c.successFile = v
	}
	c.timePattern = "$" + keys[0]
	if v, ok := opts[OptTimePattern]; ok {
		c.timePattern = v
	}
	// The pattern must name partition columns only.
	probe := make([]string, len(keys))
	for i := range probe {
		probe[i] = "x"
	}
	if _, err := c.expandPattern(probe); err != nil {
		return fmt.Errorf("'%s' = '%s': %v", OptTimePattern, c.timePattern, err)
	}
	return nil
}

// dataSchema is the columns a file holds: schema without the partition
// columns.
func dataSchema(schema types.Schema, keys []string) types.Schema {
	if len(keys) == 0 {
		return schema
	}
	out := make(types.Schema, 0, len(schema))
	for _, c := range schema {
		if !containsFold(keys, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

func containsFold(xs []string, s string) bool {
	for _, x := range xs {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// escapeChar reports whether Flink escapes c in a partition path.
func escapeChar(c byte) bool {
	return c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0
}

// appendEscaped appends v as a partition directory value.
func appendEscaped(dst []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if escapeChar(c) {
			dst = append(dst, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// unescape reads a partition directory value back.
func unescape(v string) (string, error) {
	if !strings.Contains(v, "%") {
		return v, nil
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		if i+2 >= len(v) {
			return "", fmt.Errorf("bad escape in %q", v)
		}
		n, err := strconv.ParseUint(v[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad escape in %q", v)
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

// partitionValues reads the values of the partition keys from the
// directories of rel (a file's path relative to the table's path); ok is
// false when they are not there, in order. A default-name value is "" with
// null set.
func (c *config) partitionValues(rel string) (vals []string, null []bool, err error) {
	dirs := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
	if len(dirs) < len(c.partitionKeys) || filepath.Dir(rel) == "." {
		return nil, nil, fmt.Errorf("file %s is not under the partition directories %s=...", rel, strings.Join(c.partitionKeys, "=.../"))
	}
	dirs = dirs[len(dirs)-len(c.partitionKeys):]
	for i, k := range c.partitionKeys {
		name, v, ok := strings.Cut(dirs[i], "=")
		if !ok || !strings.EqualFold(name, k) {
			return nil, nil, fmt.Errorf("file %s: directory %q is not the partition %s=...", rel, dirs[i], k)
		}
		if v == c.defaultPartition {
			vals, null = append(vals, ""), append(null, true)
			continue
		}
		u, err := unescape(v)
		if err != nil {
			return nil, nil, fmt.Errorf("file %s: %w", rel, err)
		}
		vals, null = append(vals, u), append(null, false)
	}
	return vals, null, nil
}

// expandPattern is the time pattern with $key replaced by vals (longest
// key names first, so $ab is not read as $a).
func (c *config) expandPattern(vals []string) (string, error) {
	out := c.timePattern
	order := make([]int, len(c.partitionKeys))
	for i := range order {
		order[i] = i
	}
	for i := range order {
		for j := i + 1; j < len(order); j++ {
			if len(c.partitionKeys[order[j]]) > len(c.partitionKeys[order[i]]) {
				order[i], order[j] = order[j], order[i]
			}
		}
	}
	for _, i := range order {
		out = strings.ReplaceAll(out, "$"+c.partitionKeys[i], vals[i])
	}
	if strings.Contains(out, "$") {
		return "", fmt.Errorf("it names a column that is not a partition column (%s)", strings.Join(c.partitionKeys, ", "))
	}
	return out, nil
}

// partitionTime is the time of a partition of values vals, in
// microseconds since the epoch (UTC).
func (c *config) partitionTime(vals []string) (int64, error) {
	s, err := c.expandPattern(vals)
	if err != nil {
		return 0, err
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMicro(), nil
		}
	}
	return 0, fmt.Errorf("partition time %q is not 'yyyy-MM-dd HH:mm:ss' nor 'yyyy-MM-dd' (from '%s' = '%s')", s, OptTimePattern, c.timePattern)
}

// commitPartitions marks, for subtask i of n, every partition under the
// table's path whose time plus the delay the watermark wm (microseconds)
// has passed, and writes the success file of each that all n subtasks
// have marked.
func (s *sink) commitPartitions(wm int64) error {
	if !s.cfg.commit {
		return nil
	}
	depth := len(s.cfg.partitionKeys)
	var dirs []string
	var walk func(dir string, level int) error
	walk = func(dir string, level int) error {
		entries, err := os.ReadDir(filepath.Join(s.cfg.path, dir))
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || !strings.HasPrefix(strings.ToLower(name), strings.ToLower(s.cfg.partitionKeys[level])+"=") {
				continue
			}
			if level+1 == depth {
				dirs = append(dirs, filepath.Join(dir, name))
			} else if err := walk(filepath.Join(dir, name), level+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk("", 0); err != nil {
		return s.errorf("listing the partitions: %w", err)
	}
	for _, d := range dirs {
		abs := filepath.Join(s.cfg.path, d)
		if _, err := os.Lstat(filepath.Join(abs, s.cfg.successFile)); err == nil {
			continue
		}
		if wm != maxWatermark {
			vals, _, err := s.cfg.partitionValues(filepath.Join(d, "f"))
			if err != nil {
				return s.errorf("%w", err)
			}
			t, err := s.cfg.partitionTime(vals)
			if err != nil {
				return s.errorf("partition %s: %w", d, err)
			}
			if t+s.cfg.delay.Microseconds() > wm {
				continue
			}
		}
		if err := s.markCommitted(abs); err != nil {
			return s.errorf("committing partition %s: %w", d, err)
		}
	}
	return nil
}

// maxWatermark is the watermark of an ended input.
const maxWatermark = 1<<63 - 1

// markCommitted leaves this subtask's marker in partition directory dir
// and, when every subtask's is there, writes the success file and deletes
// the markers.
func (s *sink) markCommitted(dir string) error {
	mine := filepath.Join(dir, markerPrefix+strconv.Itoa(s.spec.Subtask))
	if _, err := os.Lstat(mine); errors.Is(err, fs.ErrNotExist) {
		f, err := s.fs.Create(mine, false)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	n := max(s.spec.Parallelism, 1)
	for i := 0; i < n; i++ {
		if _, err := os.Lstat(filepath.Join(dir, markerPrefix+strconv.Itoa(i))); err != nil {
			return nil // not every subtask yet
		}
	}
	f, err := s.fs.Create(filepath.Join(dir, s.cfg.successFile), false)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.SyncDir(dir)
	}
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		s.fs.Remove(filepath.Join(dir, markerPrefix+strconv.Itoa(i)))
	}
	return nil
}
