// Package crash tests that streamsql's jobs survive being killed, as a
// user would see it.
package crash
