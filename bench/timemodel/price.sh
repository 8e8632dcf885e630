#!/bin/sh
# The time model's price in host time: CPU seconds (user + sys, best of
# REPS) of `emuprof run` under --time-model insns and zen4, and with the
# block and memory hooks alone (--bench-mem-hooks, events discarded: the
# memory path trms takes), on a few guests. Usage: price.sh EMUPROF [GUEST...]
emuprof=$1; shift
REPS=${REPS:-3}
cpu() { # best CPU seconds of REPS runs of "$@"
	best=
	for _ in $(seq "$REPS"); do
		f=$(mktemp)
		/usr/bin/time -o "$f" -f '%U %S' "$@" >/dev/null 2>&1
		t=$(awk '{print $1 + $2}' "$f")
		rm -f "$f"
		if [ -z "$best" ] || [ "$(echo "$t < $best" | awk '{print ($1 < $3)}')" = 1 ]; then best=$t; fi
	done
	echo "$best"
}
printf 'guest\tinsns_s\tmemhooks_s\tzen4_s\tzen4/insns\n'
for g in ${*:-../../testdata/bin/glibc-static/qsort bin/soa bin/hash}; do
	a=$(cpu "$emuprof" run -q --time-model insns -- "$g")
	m=$(cpu "$emuprof" run -q --bench-mem-hooks -- "$g")
	z=$(cpu "$emuprof" run -q --time-model zen4 -- "$g")
	printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$g")" "$a" "$m" "$z" "$(echo "$a $z" | awk '{printf "%.2f", $2 / $1}')"
done
