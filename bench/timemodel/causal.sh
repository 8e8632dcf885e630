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
# A change that moves a line's work to other lines (hoist: the loop
# condition's strlen to a line before the loop; batchwrite: one write per
# record to a buffer and a write per 4 KiB) is "base.c:L=opt.c:M+opt.c:N":
# p = 1 - (cost(M) + cost(N) in opt) / cost(L in base), each cost measured
# as above; the line's cost includes what it calls out of scope (glibc,
# the kernel's work in a system call), as Coz charges it (§4.1).
# A line set, "file.c:17&file.c:19" (locksplit's lock and unlock, which the
# split makes both cheap), is one row: the lines sped up together in one
# experiment (`causal --fixed-line file.c:17+file.c:19`: every execution of
# either pauses the other threads), its cost in each version what a 100 %
# virtual speedup of the set removes, p = 1 - cost(opt set)/cost(base set);
# not the rows of "+", whose predictions add only for one thread.
# Usage: [PAIRS="prog:file.c:line[+file.c:line|&file.c:line] ..."] causal.sh EMUPROF MODEL > causal.tsv
emuprof=$1 model=${2:-zen4}
dur() { # PROG LINE[&LINE...] SPEEDUP: the experiment's virtual duration
	d=$(mktemp -d)
	"$emuprof" causal -q --clear-env --out "$d" --cpus 2 --time-model "$model" --exact --fixed-line "$(echo "$2" | tr '&' +)" --fixed-speedup "$3" -- "$1" >/dev/null 2>&1
	sed -n 's/.*"type":"experiment".*"duration":\([0-9]*\).*/\1/p' "$d/profile.coz"
	rm -rf "$d"
}
total() { "$emuprof" run -q --clear-env --stats --cpus 2 --time-model "$model" -- "$1" 2>&1 >/dev/null | sed -n 's/^emuprof: virtual duration \([0-9]*\) ns.*/\1/p'; }
printf 'program\tline\tline_speedup_pct\tpredicted_pct\n'
for pl in ${PAIRS:-interchange:interchange.c:17 soa:soa.c:14+soa.c:17 falseshare:falseshare.c:13 locksplit:locksplit.c:17&locksplit.c:19 hash:hash.c:29 pipeline:pipeline.c:36 hoist:hoist.c:18=hoist.c:15+hoist.c:16 batchwrite:batchwrite.c:18=batchwrite.c:12+batchwrite.c:13+batchwrite.c:14+batchwrite.c:16}; do
	p=${pl%%:*} lines=${pl#*:}
	tb=$(total bin/$p) to=
	sum=0
	case $lines in *=*) set -- "$lines" ;; *) set -- $(echo "$lines" | tr + ' ') ;; esac
	for line in "$@"; do
		if [ "$p" = pipeline ]; then
			s=50
		elif [ "$line" != "${line%%=*}" ]; then
			[ -n "$to" ] || to=$(total bin/$p-opt)
			olines=${line#*=} line=${line%%=*}
			lb=$((tb - $(dur bin/$p "$line" 100))) lo=0
			for ol in $(echo "$olines" | tr + ' '); do lo=$((lo + to - $(dur bin/$p-opt "$ol" 100))); done
			s=$(echo "$lb $lo" | awk '{s = 100 * (1 - $2 / $1); if (s < 0) s = 0; printf "%d", s + 0.5}')
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
	[ "$lines" = "${lines#*+}" ] || [ "$lines" != "${lines#*=}" ] || printf '%s\t%s\t-\t%s\n' "$p" "$lines" "$sum"
done
