package jdbc

import "time"

// SetLockTimeout sets lockTimeout until the returned function restores it.
func SetLockTimeout(d time.Duration) (restore func()) {
	old := lockTimeout
	lockTimeout = d
	return func() { lockTimeout = old }
}
