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
# foreground. Everything is stopped and removed on exit; when the demo fails,
# its logs are kept first and their folder named. Extra arguments go to
# infer-sim (e.g. --browser chrome, --latency 500ms). `make demo` builds bin/
# and runs this; INFER_BIN names another directory holding infer and
# infer-sim (scripts/readme-capture.sh passes its own).
#
# All the demo keeps is in its temporary folder: infer's home and the XDG
# folders where infer writes its log (~/.local/state/infer) and caches
# (~/.cache/infer) point there, so your own are never touched.
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
# keep_logs copies the demo's logs out of its folder before cleanup removes
# it, and says where: a demo that failed is explained by them.
keep_logs() {
	local kept f
	kept=$(mktemp -d "${TMPDIR:-/tmp}/infer-demo-logs.XXXXXX")
	for f in "$INFER_HOME/infer-sim.log" "$XDG_STATE_HOME/infer/infer.log" "$tmp/serve.log"; do
		if [[ -s $f ]]; then
			cp "$f" "$kept/"
		fi
	done
	echo "demo: its logs are kept in $kept" >&2
}
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
export XDG_STATE_HOME=$tmp/state XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/data
project=$tmp/project
mkdir -p "$project" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME"

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
		if grep -qs "$url" "$log"; then
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

# start_sim starts infer-sim in the background and waits until its browser
# is up and it dials infer (its log says "dialling infer"). If it stops
# before that (--browser chrome without Chromium, say), the demo stops with
# its reason rather than open a workspace that waits for a browser forever.
start_sim() {
	local log=$INFER_HOME/infer-sim.log i
	"$bin/infer-sim" --port "$port" --token "$token" --browser fake "$@" >"$log" 2>&1 &
	sim_pid=$!
	pids+=("$sim_pid")
	# Up to 60 s: a first Chromium start on a slow machine takes a while.
	for i in $(seq 1 600); do
		if grep -qs "dialling infer" "$log"; then
			return 0
		fi
		if ! kill -0 "$sim_pid" 2>/dev/null; then
			echo "demo: infer-sim stopped before it could connect; the end of its log:" >&2
			tail -n 20 "$log" | sed 's/^/  /' >&2
			keep_logs
			return 1
		fi
		if ((i == 20)); then
			echo "demo: waiting for infer-sim's browser to start…"
		fi
		sleep 0.1
	done
	echo "demo: infer-sim's browser has not started within 60s; going on (see $log)" >&2
}

if [[ -t 1 && -t 0 ]] && $has_tui; then
	start_sim "$@" || exit 1
	hint
	echo "demo: infer-sim logs to $INFER_HOME/infer-sim.log; quit infer to end the demo."
	# The workspace covers the whole terminal: wait, so that the hints
	# above are read before it does. They are back when infer quits.
	read -r -p "demo: press enter to open the workspace " _ || true
	status=0
	(cd "$project" && "$bin/infer" --port "$port") || status=$?
	# infer-sim runs until cleanup stops it: gone already, it failed
	# while the workspace ran, and its log says why.
	if ! kill -0 "$sim_pid" 2>/dev/null; then
		echo "demo: infer-sim stopped while the workspace ran; the end of its log:" >&2
		tail -n 20 "$INFER_HOME/infer-sim.log" | sed 's/^/  /' >&2
		status=1
	fi
	if ((status != 0)); then
		keep_logs
	fi
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
if ((status != 0)); then
	keep_logs
fi
exit "$status"
