#!/bin/sh
# emuprof causal's predictions for the validation pairs (docs/TIME-MODEL.md),
# Coz-style, on the UNMODIFIED program: the changed line's cost in each
# version is what a 100 % virtual speedup of it removes (end to end: the
# program's virtual duration is the progress), the matching line speedup
# p = 1 - cost(opt)/cost(base), and the prediction is the program speedup
# `emuprof causal` measures on the unmodified program with the line sped up
# by p. pipeline's change (a second transform worker) halves the stage:
# p = 50. A change of several lines (soa's layout: the loop that fills the
# field and the one that sums it, "file.c:14+file.c:17") gets a row per
# line and one that adds their predictions: exact for one thread, where a
# virtual speedup saves s × the line's cost and two lines' savings add.
# Usage: [PAIRS="prog:file.c:line[+file.c:line] ..."] causal.sh EMUPROF MODEL > causal.tsv
emuprof=$1 model=${2:-zen4}
dur() { # PROG LINE SPEEDUP: the experiment's virtual duration
	d=$(mktemp -d)
	"$emuprof" causal -q --clear-env --out "$d" --cpus 2 --time-model "$model" --exact --fixed-line "$2" --fixed-speedup "$3" -- "$1" >/dev/null 2>&1
	sed -n 's/.*"type":"experiment".*"duration":\([0-9]*\).*/\1/p' "$d/profile.coz"
	rm -rf "$d"
}
total() { "$emuprof" run -q --clear-env --stats --cpus 2 --time-model "$model" -- "$1" 2>&1 >/dev/null | sed -n 's/^emuprof: virtual duration \([0-9]*\) ns.*/\1/p'; }
printf 'program\tline\tline_speedup_pct\tpredicted_pct\n'
for pl in ${PAIRS:-interchange:interchange.c:17 soa:soa.c:14+soa.c:17 falseshare:falseshare.c:13 locksplit:locksplit.c:17 hash:hash.c:29 pipeline:pipeline.c:36}; do
	p=${pl%%:*} lines=${pl#*:}
	tb=$(total bin/$p) to=
	sum=0
	for line in $(echo "$lines" | tr + ' '); do
		if [ "$p" = pipeline ]; then
			s=50
		else
			[ -n "$to" ] || to=$(total bin/$p-opt)
			lb=$((tb - $(dur bin/$p "$line" 100)))
			lo=$((to - $(dur bin/$p-opt "$line" 100)))
			s=$(echo "$lb $lo" | awk '{s = 100 * (1 - $2 / $1); if (s < 0) s = 0; printf "%d", s + 0.5}')
		fi
		dp=$(dur bin/$p "$line" "$s")
		pr=$(echo "$tb $dp" | awk '{printf "%.1f", 100 * (1 - $2 / $1)}')
		printf '%s\t%s\t%s\t%s\n' "$p" "$line" "$s" "$pr"
		sum=$(echo "$sum $pr" | awk '{printf "%.1f", $1 + $2}')
	done
	[ "$lines" = "${lines#*+}" ] || printf '%s\t%s\t-\t%s\n' "$p" "$lines" "$sum"
done
