# Sourced by the scripts that run a server in the background with its pid
# in DIR/server.pid (s3-server.sh, schema-registry.sh).

# stop_pidfile DIR: stops the process of DIR/server.pid (SIGTERM, then
# SIGKILL after 10 s) and removes the pid file; nothing if there is none.
stop_pidfile() {
	local pidfile=$1/server.pid pid
	[[ -f $pidfile ]] || return 0
	pid=$(cat "$pidfile")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$pidfile"
}
