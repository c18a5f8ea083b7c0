# shellcheck shell=bash
# port-file.sh - waiting for a loopback test server that picks its own
# port and writes it to a file (faultproxy.py, sigv4-check.py,
# hubspot-server.py: --port-file, written whole by a rename).
#
#   . tests/lib/port-file.sh
#   python3 tests/lib/faultproxy.py --upstream "$U" --port-file "$f" &
#   PROXY="http://127.0.0.1:$(lb_port_file "$f" $!)"
#
# A loaded machine (CI) may take seconds to start Python: this waits up
# to 30 s, and fails at once, naming the file, if the server has exited.

lb_port_file() { # FILE PID: prints the port
	local file=$1 pid=$2 i
	for i in $(seq 1 300); do
		if [ -s "$file" ]; then
			cat "$file"
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "port-file.sh: the server (pid $pid) exited before writing $file" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "port-file.sh: no port in $file after 30 s" >&2
	return 1
}
