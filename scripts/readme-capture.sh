#!/usr/bin/env bash
# readme-capture.sh: capture the README's 120×40 picture of the workspace
# from `make demo` itself, so the picture is what a new user will see.
#
#   scripts/readme-capture.sh [OUT]   write the screen to OUT (default: stdout)
#
# It runs scripts/demo.sh, which `make demo` runs after building, in a
# detached 120×40 tmux session on a private tmux server (never yours), with
# a throwaway HOME and no provider keys: the model is offline/demo and the
# browser is infer-sim's default fake one, serving the demo site. There it
# types the demo's first hint (open demo.infer.localhost; read h1), approves
# the navigation with y, asks for a screenshot, then for `run touch
# notes.md`, and captures the screen while that command waits for approval.
#
# Needs tmux, and bin/infer and bin/infer-sim (run `make build` first);
# INFER_BIN names another directory that holds both. Progress goes to
# stderr; on a step that never happens it prints the last screen and exits 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${INFER_BIN:-$root/bin}
out=${1:-/dev/stdout}
for b in infer infer-sim; do
	if [[ ! -x $bin/$b ]]; then
		echo "readme-capture: $bin/$b is missing; run 'make build' first" >&2
		exit 1
	fi
done
if ! command -v tmux >/dev/null; then
	echo "readme-capture: tmux is not installed" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-readme.XXXXXX")
socket=infer-readme-$$
tm() { tmux -L "$socket" -f /dev/null -u "$@"; }
cleanup() {
	tm kill-server 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# A fixed, small environment: whatever keys or settings the caller has
# would change the model, the paths and the colours of the picture.
mkdir -p "$tmp/you"
env -i PATH="$PATH" HOME="$tmp/you" TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 \
	tmux -L "$socket" -f /dev/null -u new-session -d -s readme -x 120 -y 40 -c "$tmp/you" \
	"INFER_BIN='$bin' '$root/scripts/demo.sh'; echo \"demo exited \$?\"; sleep 600"

screen() { tm capture-pane -p -t readme; }

# wait_for TEXT... waits until the screen shows every TEXT; wait_gone TEXT
# until it no longer shows TEXT. The limit only guards against a hang.
wait_for() { wait_screen shows "$@"; }
wait_gone() { wait_screen hides "$@"; }
wait_screen() {
	local how=$1 deadline=$((SECONDS + 60)) sc t ok
	shift
	while :; do
		sc=$(screen)
		ok=true
		for t in "$@"; do
			if [[ $how == shows && $sc != *"$t"* ]] || [[ $how == hides && $sc == *"$t"* ]]; then
				ok=false
			fi
		done
		$ok && return 0
		if ((SECONDS > deadline)); then
			echo "readme-capture: the screen never $how: $*" >&2
			echo "$sc" >&2
			exit 1
		fi
		sleep 0.1
	done
}

type_line() {
	tm send-keys -t readme -l "$1"
	tm send-keys -t readme Enter
}

# approve waits until the approval on screen takes keys (one that has just
# appeared ignores them for a moment), then allows it once.
approve() {
	wait_for "$1" "y allow once"
	wait_gone "keys wait a moment"
	tm send-keys -t readme y
}

echo "readme-capture: starting make demo's workspace at 120×40" >&2
wait_for "type this first:" "press enter to open the workspace"
tm send-keys -t readme Enter
wait_for "● connected · extension infer-sim" "Message the agent"

echo "readme-capture: the demo's first hint, approved" >&2
type_line "open demo.infer.localhost; read h1"
approve "⚠ BrowserNavigate"
wait_for "✓ BrowserRead" "Welcome to Tidewater Library" "Done."

echo "readme-capture: a screenshot" >&2
type_line "screenshot"
wait_for "✓ BrowserScreenshot" "• BrowserScreenshot: Screenshot of"

echo "readme-capture: a command that waits for approval" >&2
type_line "run touch notes.md"
wait_for "⚠ Bash · from the agent" "\$ touch notes.md" "waiting for your approval"
wait_gone "keys wait a moment"
screen >"$out"

# Leave as a person would: reject the command, quit with ctrl+c twice, and
# let demo.sh stop infer-sim and remove its home.
tm send-keys -t readme n
tm send-keys -t readme C-c
wait_for "press ctrl+c again to quit"
tm send-keys -t readme C-c
wait_for "demo exited 0"
echo "readme-capture: done" >&2
