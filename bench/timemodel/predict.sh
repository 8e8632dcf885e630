#!/bin/sh
# emuprof's predictions for the validation pairs (docs/TIME-MODEL.md): the
# virtual duration of NAME and NAME-opt under each time model, --cpus 2 as
# the host. Usage: predict.sh EMUPROF [MODELS...] > predict.tsv
emuprof=$1; shift
models=${*:-insns zen4}
printf 'program\tmodel\tbase_ns\topt_ns\tspeedup_pct\n'
for p in interchange soa falseshare hoist locksplit batchwrite hash pipeline; do
	for m in $models; do
		b=$("$emuprof" run -q --clear-env --stats --cpus 2 --time-model "$m" -- bin/$p 2>&1 >/dev/null | sed -n 's/^emuprof: virtual duration \([0-9]*\) ns.*/\1/p')
		o=$("$emuprof" run -q --clear-env --stats --cpus 2 --time-model "$m" -- bin/$p-opt 2>&1 >/dev/null | sed -n 's/^emuprof: virtual duration \([0-9]*\) ns.*/\1/p')
		printf '%s\t%s\t%s\t%s\t%s\n' "$p" "$m" "$b" "$o" "$(echo "$b $o" | awk '{printf "%.1f", 100*(1-$2/$1)}')"
	done
done
