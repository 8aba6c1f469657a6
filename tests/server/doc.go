// Package server tests `streamsql server` end to end: the binary as a
// subprocess on a free loopback port, driven over its REST API and by
// `streamsql --server URL -f`, killed and restarted.
package server
