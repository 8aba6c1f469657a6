// Package datadir holds the lock that gives one process at a time the use
// of a data directory.
//
// The lock is flock(2) (an exclusive, non-blocking lock on an open file
// description) held on the data directory itself, and on <dir>/LOCK as
// well. The kernel releases both when their holder closes them or dies in
// any way, kill -9 included, so a lock file left behind by a dead process
// is never stale: the next process takes it over and rewrites its content.
// The file's content, one line of JSON naming the owner (pid, host, start
// time, command line), is only there for the error a second process
// prints; the flocks alone decide.
//
// The lock on the directory is the one that matters: a directory cannot be
// removed while it holds files, so removing LOCK while its owner runs does
// not free the data directory (a lock on the file alone would be lost with
// it: the next process would create a new LOCK and lock that). When LOCK
// is gone or empty, the error names the owner from /proc/locks (Linux),
// by its pid and command line.
//
// flock locks belong to an open file description, not to a process: two
// Locks of one directory conflict within one process too. The directory
// and the file are opened close-on-exec, so child processes do not inherit
// the lock.
//
// The file is never removed by this package.
package datadir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FileName is the lock file's name inside the data directory.
const FileName = "LOCK"

// ErrLocked is returned (wrapped in a *LockedError) by Lock when another
// open lock, in this process or another, holds the directory.
var ErrLocked = errors.New("data directory is in use")

// processStart is when this process started (close enough: when the
// package was initialized, before main).
var processStart = time.Now()

// Owner is what the lock file says about the process holding the lock.
type Owner struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
	Started time.Time `json:"started"`
	Command string    `json:"command,omitempty"`
}

// LockedError says that a directory is locked and, when its lock file
// could be read, by whom.
type LockedError struct {
	Dir string
	// Owner is the owner the lock file names; nil when the file was empty
	// or unreadable (the owner may be writing it at that moment).
	Owner *Owner
}

func (e *LockedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "data directory %s is in use by ", e.Dir)
	if o := e.Owner; o != nil {
		fmt.Fprintf(&b, "process %d", o.PID)
		if o.Host != "" {
			fmt.Fprintf(&b, " on %s", o.Host)
		}
		if !o.Started.IsZero() {
			fmt.Fprintf(&b, ", started %s", o.Started.Local().Format("2006-01-02 15:04:05 MST"))
		}
		if o.Command != "" {
			fmt.Fprintf(&b, " (%s)", o.Command)
		}
	} else {
		b.WriteString("another process")
	}
	fmt.Fprintf(&b, "; only one process may use a data directory at a time: stop that one, or give this one another --data-dir (the lock is held on %s and %s)",
		e.Dir, filepath.Join(e.Dir, FileName))
	return b.String()
}

// Unwrap makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is a held lock of a data directory.
type Lock struct {
	dir *os.File // the data directory, flocked
	f   *os.File // dir/LOCK, flocked
}

// Acquire creates dir if needed and takes its lock without waiting. If the
// lock is held it returns a *LockedError (errors.Is ErrLocked) naming the
// owner, and changes nothing in dir. Otherwise it writes this process's
// Owner into the lock file, replacing what a dead owner left there.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot lock data directory %s: %w", dir, err)
	}
	if err := flock(d, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, Owner: lockedBy(dir, d)}
		}
		return nil, fmt.Errorf("cannot lock data directory %s: flock: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("cannot lock data directory %s: %w", dir, err)
	}
	// The file's own flock refuses a process that locks only the file
	// (as this package did before it locked the directory).
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer d.Close()
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Dir: dir, Owner: readOwner(f)}
		}
		return nil, fmt.Errorf("cannot lock data directory %s: flock %s: %w", dir, path, err)
	}
	if err := writeOwner(f); err != nil {
		f.Close()
		d.Close()
		return nil, fmt.Errorf("cannot lock data directory %s: writing %s: %w", dir, path, err)
	}
	return &Lock{dir: d, f: f}, nil
}

// lockedBy names the process holding the lock of dir (open as d): the one
// its lock file names, or, when the file is gone or empty, the one
// /proc/locks names; nil when neither says.
func lockedBy(dir string, d *os.File) *Owner {
	if o := ReadOwner(dir); o != nil {
		return o
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(d.Fd()), &st); err != nil {
		return nil
	}
	pid := flockHolder(uint64(st.Dev), st.Ino)
	if pid <= 0 {
		return nil
	}
	o := &Owner{PID: pid}
	if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
		o.Command = strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
		if len(o.Command) > maxCommand {
			o.Command = o.Command[:maxCommand] + "..."
		}
	}
	return o
}

// flockHolder returns the pid /proc/locks gives for the FLOCK lock of the
// inode ino on device dev, or 0. Lines read
// "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF", the device in hex.
func flockHolder(dev, ino uint64) int {
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil {
			return pid
		}
	}
	return 0
}

// Release empties the lock file and releases the lock. It is safe to call
// on a nil Lock and more than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// Empty it while still held, so the content never names a process
	// that no longer holds the lock.
	terr := f.Truncate(0)
	ferr := f.Close()     // releases the file's flock
	derr := l.dir.Close() // releases the directory's flock
	l.dir = nil
	return errors.Join(ferr, derr, terr)
}

// ReadOwner returns the owner named by dir's lock file, or nil when the
// file is missing, empty or unreadable. It says who took the lock last,
// not whether the lock is held now.
func ReadOwner(dir string) *Owner {
	f, err := os.Open(filepath.Join(dir, FileName))
	if err != nil {
		return nil
	}
	defer f.Close()
	return readOwner(f)
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// maxCommand bounds the command line kept in the lock file, so that the
// whole content fits the buffer readOwner reads.
const maxCommand = 512

func readOwner(f *os.File) *Owner {
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	var o Owner
	if n == 0 || json.Unmarshal(buf[:n], &o) != nil || o.PID == 0 {
		return nil
	}
	return &o
}

func writeOwner(f *os.File) error {
	host, _ := os.Hostname()
	cmd := strings.Join(os.Args, " ")
	if len(cmd) > maxCommand {
		cmd = cmd[:maxCommand] + "..."
	}
	data, err := json.Marshal(Owner{
		PID:     os.Getpid(),
		Host:    host,
		Started: processStart.UTC().Round(time.Millisecond),
		Command: cmd,
	})
	if err != nil {
		return err
	}
	data = append(data, '\n')
	// Rewrite in place (never by rename: the flock is on this inode).
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Sync()
}
