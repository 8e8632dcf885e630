#!/usr/bin/env bash
# Measures emuprof against native execution and valgrind in the same run and
# prints slowdown ratios and guest instructions per second.
#   bench/run.sh [guest ...]   (default: the CPU-bound guests)
# Each figure is the best of $REPS runs (default 3), wall-clock seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
EMUPROF=./emuprof
BIN=testdata/bin/glibc-static
guests=("$@")
[ ${#guests[@]} -gt 0 ] || guests=(qsort mallocstress printf)
have_valgrind=$(command -v valgrind >/dev/null && echo 1 || echo 0)

best() { # best wall time of REPS runs of "$@", output discarded
	local best="" t
	for _ in $(seq "$REPS"); do
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 </dev/null || true
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc -l)
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	echo "$best"
}
ratio() { echo "scale=1; $1 / $2" | bc -l; }

printf '%-14s %9s %9s %9s %9s %9s %9s %9s %9s %10s\n' guest native bare run trms vg-none memcheck callgrind run/bare "MIPS(run)"
for g in "${guests[@]}"; do
	prog=$BIN/$g
	[ -x "$prog" ] || { echo "missing $prog (make guests)" >&2; continue; }
	n=$(best "$prog")
	bare=$(best $EMUPROF run --bare-engine -- "$prog")
	run=$(best $EMUPROF run -- "$prog")
	trms=$(best $EMUPROF trms --out /tmp/emuprof-bench -- "$prog")
	if [ "$have_valgrind" = 1 ]; then
		vn=$(best valgrind --tool=none "$prog")
		vm=$(best valgrind --tool=memcheck "$prog")
		vc=$(best valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file=/dev/null "$prog")
	else
		vn=0; vm=0; vc=0
	fi
	insns=$($EMUPROF run --stats -- "$prog" 2>&1 >/dev/null | sed -n 's/.*ns (makespan), \([0-9]*\) instructions.*/\1/p')
	mips=$(echo "scale=0; $insns / $run / 1000000" | bc -l)
	printf '%-14s %9.3f %8.1fx %8.1fx %8.1fx %8.1fx %8.1fx %8.1fx %9.2f %10s\n' "$g" "$n" \
		"$(ratio "$bare" "$n")" "$(ratio "$run" "$n")" "$(ratio "$trms" "$n")" \
		"$(ratio "$vn" "$n")" "$(ratio "$vm" "$n")" "$(ratio "$vc" "$n")" \
		"$(echo "scale=3; $run / $bare" | bc -l)" "$mips"
done
