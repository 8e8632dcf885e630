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
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
. bench/lib.sh

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
