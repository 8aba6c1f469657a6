// Package server tests `streamsql server` end to end: the binary as a
// subprocess on a free loopback port, driven over its REST API and by
// `streamsql --server URL -f`, killed and restarted; and its security: the
// token required off loopback (on 0.0.0.0), HTTPS with a certificate made
// by the test, --pprof, and the allowed paths.
package server
