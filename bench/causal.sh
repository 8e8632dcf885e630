#!/usr/bin/env bash
# Causal profiling's overhead (issue 12's goal: at most 1.3x): CPU time
# (user+sys, best of REPS) of `emuprof causal` (in-run experiments, the
# default mode) over `emuprof run` on the same guest and arguments.
#   bench/causal.sh                 the causal test guests
#   REPS=5 bench/causal.sh          best of 5 runs per figure (default 3)
#   WALL=1 bench/causal.sh          wall seconds instead of CPU seconds
# Columns: run and causal in seconds, their ratio, and the number of
# experiments the causal run made.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
EMUPROF=${EMUPROF:-./emuprof}
BIN=testdata/bin/glibc-static
tf=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$tf" "$out"' EXIT

best() { # best time of REPS runs of "$@", output discarded
	local best="" t
	for _ in $(seq "$REPS"); do
		/usr/bin/time -o "$tf" -f "%U %S %e" "$@" >/dev/null 2>&1 </dev/null || true
		t=$(tail -1 "$tf" | awk -v w="${WALL:-}" '{t = (w != "" ? $3 : $1 + $2); print (t < 0.01 ? 0.01 : t)}')
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	echo "$best"
}

# guest, arguments, progress-point flags
cases=(
	"coz_rounds|3000|--progress round_done"
	"causal_context|3000|--progress round_done"
	"causal_single|20000|--progress step_done"
	"causal_latency|20000|--latency item_begin,item_end --progress serve"
)
printf '%-16s %8s %8s %7s %6s\n' guest run causal ratio exps
for c in "${cases[@]}"; do
	IFS='|' read -r g args pts <<<"$c"
	# shellcheck disable=SC2086
	r=$(best "$EMUPROF" run --clear-env -- "$BIN/$g" $args)
	# shellcheck disable=SC2086
	k=$(best "$EMUPROF" causal --clear-env --out "$out" $pts -- "$BIN/$g" $args)
	n=$(grep -c '"type":"experiment"' "$out/profile.coz" || true)
	printf '%-16s %8s %8s %6sx %6s\n' "$g" "$r" "$k" "$(echo "scale=2; $k / $r" | bc -l)" "$n"
done
