#!/usr/bin/env bash
# Measures emuprof against native execution and valgrind, in the same run,
# and prints slowdown ratios (CPU time / native CPU time), guest MIPS and
# peak memory. CPU time (user+sys) rather than wall time: on a shared VM
# wall time varies with steal time by ±20 %; CPU time much less.
#   bench/run.sh [guest ...]        default: the CPU-bound guests
#   REPS=5 bench/run.sh qsort       best of 5 runs per figure (default 3)
#   THREADS=1 bench/run.sh          the multithreaded guests instead
# Columns:
#   native      CPU seconds of the guest run natively
#   bare        emuprof with no block hook: Unicorn's own floor
#   run         `emuprof run` (block hook: virtual time, scheduling)
#   memhooks    block + C memory hooks, events discarded (the tracing cost)
#   trms        `emuprof trms` (tracing + call tracking + RMS/TRMS)
#   vg-none, memcheck, callgrind   valgrind tools (callgrind with --cache-sim=yes)
#   run/bare, trms/memhooks        the two ratios the issues set goals for
#   MIPS        guest instructions per second under `emuprof run`
#   RSS MB      peak resident memory: guest native, emuprof trms
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
EMUPROF=./emuprof
BIN=testdata/bin/glibc-static
guests=("$@")
if [ ${#guests[@]} -eq 0 ]; then
	if [ -n "${THREADS:-}" ]; then
		guests=(mutex_counter condvar_pc threadpool pipe_threads coz_fig1 omp_reduce)
	else
		guests=(qsort mallocstress)
	fi
fi
tf=$(mktemp)
trap 'rm -f "$tf"' EXIT
have_valgrind=$(command -v valgrind >/dev/null && echo 1 || echo 0)

best() { # best CPU time (user+sys) of REPS runs of "$@", output discarded
	local best="" t
	for _ in $(seq "$REPS"); do
		/usr/bin/time -o "$tf" -f "%U %S" "$@" >/dev/null 2>&1 </dev/null || true
		# GNU time counts in 10 ms ticks: floor at one tick.
		t=$(tail -1 "$tf" | awk '{t = $1 + $2; print (t < 0.01 ? 0.01 : t)}')
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	echo "$best"
}
ratio() { echo "scale=1; $1 / $2" | bc -l; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null </dev/null | tail -1; }

date -u +"# %Y-%m-%d %H:%M UTC, $(nproc) cores, REPS=$REPS"
printf '%-14s %8s %7s %7s %8s %7s %8s %8s %9s %8s %13s %6s %13s\n' guest native bare run memhooks trms vg-none memcheck callgrind run/bare trms/memhooks MIPS "RSS MB g/trms"
for g in "${guests[@]}"; do
	prog=$BIN/$g
	[ -x "$prog" ] || { echo "missing $prog (make guests)" >&2; continue; }
	n=$(best "$prog")
	bare=$(best $EMUPROF run --bare-engine -- "$prog")
	run=$(best $EMUPROF run -- "$prog")
	mem=$(best $EMUPROF run --bench-mem-hooks -- "$prog")
	trms=$(best $EMUPROF trms --out /tmp/emuprof-bench -- "$prog")
	if [ "$have_valgrind" = 1 ]; then
		vn=$(best valgrind --tool=none "$prog")
		vm=$(best valgrind --tool=memcheck "$prog")
		vc=$(best valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=/dev/null "$prog")
	else
		vn=0 vm=0 vc=0
	fi
	insns=$($EMUPROF run --stats -- "$prog" 2>&1 >/dev/null | sed -n 's/.*ns (makespan), \([0-9]*\) instructions.*/\1/p')
	mips=$(echo "scale=0; $insns / $run / 1000000" | bc -l)
	grss=$(rss "$prog")
	trss=$(rss $EMUPROF trms --out /tmp/emuprof-bench -- "$prog")
	printf '%-14s %8.3f %6.1fx %6.1fx %7.1fx %6.1fx %7.1fx %7.1fx %8.1fx %8.2f %13.2f %6s %6d/%-6d\n' "$g" "$n" \
		"$(ratio "$bare" "$n")" "$(ratio "$run" "$n")" "$(ratio "$mem" "$n")" "$(ratio "$trms" "$n")" \
		"$(ratio "$vn" "$n")" "$(ratio "$vm" "$n")" "$(ratio "$vc" "$n")" \
		"$(echo "scale=3; $run / $bare" | bc -l)" "$(echo "scale=3; $trms / $mem" | bc -l)" "$mips" \
		"$((grss / 1024))" "$((trss / 1024))"
done
