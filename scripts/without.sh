#!/usr/bin/env bash
# without.sh: run a command as on a machine that lacks some programs, to
# see that the tests needing them skip with the reason (and fail under CI).
#
#   scripts/without.sh bwrap chromium -- make test
#
# Each named program found on PATH (and the file its links lead to) is
# covered by /dev/null, which is not executable, in a mount namespace of
# the command's own: nothing changes for the rest of the machine, and the
# programs are hidden however they are looked up (PATH or a fixed path).
# It needs root, or unprivileged user namespaces (then it maps you to root
# inside, which the tests accept).
set -euo pipefail

hide=()
while (($# > 0)) && [[ $1 != -- ]]; do
	hide+=("$1")
	shift
done
if (($# < 2)) || ((${#hide[@]} == 0)); then
	echo "usage: $0 PROGRAM... -- COMMAND [ARG...]" >&2
	exit 2
fi
shift

if [[ ${WITHOUT_INSIDE:-} != 1 ]]; then
	userns=()
	((EUID == 0)) || userns=(-r)
	exec unshare -m "${userns[@]}" --propagation private env WITHOUT_INSIDE=1 "$0" "${hide[@]}" -- "$@"
fi

for name in "${hide[@]}"; do
	found=0
	while read -r path; do
		[[ -n $path ]] || continue
		for p in "$path" "$(readlink -f "$path")"; do
			mount --bind /dev/null "$p"
		done
		found=1
	done < <(which -a "$name" 2>/dev/null | sort -u)
	if ((found)); then
		echo "without.sh: $name hidden" >&2
	else
		echo "without.sh: $name is not here anyway" >&2
	fi
done
exec "$@"
