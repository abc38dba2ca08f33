#!/usr/bin/env bash
# demo.sh: show infer end to end, offline, without touching your real ~/.infer.
#
#   scripts/demo.sh [infer-sim flags...]   the workspace with a simulated browser
#   scripts/demo.sh --check                start both, browse the demo site once, exit 0 if it worked
#
# It makes a throwaway INFER_HOME, runs `infer init` on a free port and pairs
# infer-sim (the extension simulator, with its built-in fake browser and demo
# site) with infer. In a terminal, infer's workspace runs in the foreground
# and infer-sim in the background, logging to $INFER_HOME/infer-sim.log;
# otherwise `infer serve` runs in the background and infer-sim in the
# foreground. Everything is stopped and removed on exit. Extra arguments go to
# infer-sim (e.g. --browser chrome, --latency 500ms). `make demo` builds bin/
# and runs this; INFER_BIN names another directory holding infer and
# infer-sim (scripts/readme-capture.sh passes its own).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${INFER_BIN:-$root/bin}
check=false
if [[ ${1:-} == --check ]]; then
	check=true
	shift
fi
for b in infer infer-sim; do
	if [[ ! -x $bin/$b ]]; then
		echo "demo: $bin/$b is missing; run 'make build' first" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-demo.XXXXXX")
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

export INFER_HOME=$tmp/home
project=$tmp/project
mkdir -p "$project"

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
url="ws://127.0.0.1:$port/ws"

# serve starts `infer serve` in the background and waits until it listens.
serve() {
	local log=$tmp/serve.log
	(cd "$project" && exec "$bin/infer" serve --port "$port") >"$log" 2>&1 &
	pids+=($!)
	for _ in $(seq 1 100); do
		if grep -q "$url" "$log"; then
			return 0
		fi
		if ! kill -0 "${pids[-1]}" 2>/dev/null; then
			echo "demo: infer serve exited early:" >&2
			cat "$log" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "demo: infer serve did not report $url within 10s:" >&2
	cat "$log" >&2
	return 1
}

hint() {
	cat <<EOF
demo: infer and infer-sim are paired on $url (home $INFER_HOME).
demo: type this first:   open demo.infer.localhost; read h1
demo: then try:          open demo.infer.localhost/search.html; type sea into #q and press enter; read #summary
demo: browsing needs your approval in standard mode (shift+tab switches to auto); "help" lists the demo model's commands.
EOF
}

if $check; then
	# Start both, send one message through infer-sim's panel as a scenario,
	# and require that the agent browsed the demo site.
	serve
	if ! "$bin/infer-sim" run "$root/assets/scenarios/browse-demo.yaml" --port "$port" --token "$token" "$@" >"$tmp/check.log" 2>&1; then
		echo "demo --check: the agent did not browse the demo site:" >&2
		cat "$tmp/check.log" "$tmp/serve.log" >&2
		exit 1
	fi
	echo "demo --check: ok: infer served, infer-sim paired, the agent browsed the demo site"
	exit 0
fi

# The terminal workspace is `infer` with no arguments; a build without it
# (no --port flag on the root command) falls back to `infer serve`.
has_tui=false
if "$bin/infer" --help 2>/dev/null | grep -q -- '--port'; then
	has_tui=true
fi

if [[ -t 1 && -t 0 ]] && $has_tui; then
	"$bin/infer-sim" --port "$port" --token "$token" --browser fake "$@" >"$INFER_HOME/infer-sim.log" 2>&1 &
	pids+=($!)
	hint
	echo "demo: infer-sim logs to $INFER_HOME/infer-sim.log; quit infer to end the demo."
	sleep 1
	status=0
	(cd "$project" && "$bin/infer" --port "$port") || status=$?
	exit "$status"
fi

# No terminal workspace: infer serve in the background, infer-sim in the
# foreground, as the side panel too when there is a keyboard to type on.
serve
panel=()
if [[ -t 0 ]]; then
	panel=(--panel)
	hint
	echo "demo: infer runs without its terminal workspace here; type into infer-sim's panel below (quit ends the demo)."
else
	echo "demo: infer serve and infer-sim are paired on $url (home $INFER_HOME); Ctrl+C ends the demo."
fi
status=0
"$bin/infer-sim" --port "$port" --token "$token" --browser fake "${panel[@]}" "$@" || status=$?
exit "$status"
