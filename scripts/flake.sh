#!/usr/bin/env bash
# flake.sh: hunt for tests that fail now and then. `make flake` runs it.
#
# Every package but cmd/infer runs FLAKE_COUNT times under the race
# detector, and cmd/infer (the long fault, soak and tmux tests) FLAKE_SLOW
# times, while a second `go test -race ./...` loops beside them, as on a CI
# machine shared with other work (FLAKE_LOAD=0 runs the hunt alone). The
# full output goes to flake.log; the summary counts every failing test.
# Exits non-zero when any test failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
count=${FLAKE_COUNT:-20}
slow=${FLAKE_SLOW:-5}
load=${FLAKE_LOAD:-1}
log=${FLAKE_LOG:-$root/flake.log}
go=${GO:-go}

mapfile -t pkgs < <($go list ./... | grep -v '/cmd/infer$')
: >"$log"

loader=
if [[ $load == 1 ]]; then
	# The load's own failures are not counted: they run with no lock on
	# the timing and only make the machine busy.
	# setsid makes it a process group of its own, so that the whole
	# group (go test and its test binaries) can be stopped at the end.
	setsid bash -c "while :; do $go test -race -count=1 ./... >/dev/null 2>&1; done" &
	loader=$!
	trap 'kill -- -$loader 2>/dev/null' EXIT
	echo "flake: a second suite loops beside the hunt (pid $loader)"
fi

start=$(date +%s)
echo "flake: ${#pkgs[@]} packages x$count under -race"
$go test -race -count="$count" -timeout 120m "${pkgs[@]}" >>"$log" 2>&1
echo "flake: cmd/infer x$slow under -race"
$go test -race -count="$slow" -timeout 120m ./cmd/infer/ >>"$log" 2>&1
took=$(( $(date +%s) - start ))

echo
echo "flake: finished in ${took}s; package results:"
grep -E '^(ok|FAIL|---) ' "$log" | grep -E '^(ok|FAIL)\s' || true
fails=$(grep -E '^\s*--- FAIL: ' "$log" | sed -E 's/^\s*--- FAIL: ([^ ]+).*/\1/' | sort | uniq -c | sort -rn)
if [[ -n $fails ]]; then
	echo
	echo "flake: failing tests (times failed):"
	echo "$fails"
	exit 1
fi
if grep -qE '^FAIL\s' "$log"; then
	echo "flake: a package failed without a failing test (build error, panic or timeout): see $log"
	exit 1
fi
echo "flake: no test failed"
