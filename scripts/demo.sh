#!/usr/bin/env bash
# demo.sh: show infer end to end without touching your real ~/.infer.
#
# It uses a throwaway INFER_HOME, runs `infer init` on a free port, starts
# `infer serve`, then connects the extension simulator to it. Extra
# arguments go to infer-sim. Run it through `make demo`, which builds bin/.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
for b in infer infer-sim; do
	if [[ ! -x $bin/$b ]]; then
		echo "demo: $bin/$b is missing; run 'make build' first" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-demo.XXXXXX")
serve_pid=
cleanup() {
	if [[ -n $serve_pid ]] && kill -0 "$serve_pid" 2>/dev/null; then
		kill -TERM "$serve_pid" 2>/dev/null || true
		wait "$serve_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export INFER_HOME=$tmp/home

# free_port picks a random high port that nothing accepts connections on.
free_port() {
	local port
	for _ in $(seq 1 50); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	echo "demo: found no free port" >&2
	return 1
}

port=$(free_port)
"$bin/infer" init --port "$port" >/dev/null
# The token is the value of extension.token, possibly quoted by the YAML writer.
token=$(sed -n 's/^[[:space:]]*token:[[:space:]]*//p' "$INFER_HOME/browser_use.yaml" | tr -d "\"'")
if [[ -z $token ]]; then
	echo "demo: no token in $INFER_HOME/browser_use.yaml" >&2
	exit 1
fi

# Serve from a scratch project so the demo's conversations stay in $tmp.
mkdir -p "$tmp/project"
log=$tmp/serve.log
(cd "$tmp/project" && exec "$bin/infer" serve --port "$port") >"$log" 2>&1 &
serve_pid=$!

url="ws://127.0.0.1:$port/ws"
for _ in $(seq 1 100); do
	if grep -q "$url" "$log"; then
		break
	fi
	if ! kill -0 "$serve_pid" 2>/dev/null; then
		echo "demo: infer serve exited early:" >&2
		cat "$log" >&2
		exit 1
	fi
	sleep 0.1
done
if ! grep -q "$url" "$log"; then
	echo "demo: infer serve did not report $url within 10s:" >&2
	cat "$log" >&2
	exit 1
fi
echo "demo: infer serve is listening on $url (home $INFER_HOME)"

"$bin/infer-sim" --port "$port" --token "$token" "$@"
