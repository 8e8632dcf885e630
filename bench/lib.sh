# What the bench scripts share; they source it (after setting REPS).

# best "$@": the best CPU time (user+sys; wall seconds with WALL=1) of REPS
# runs of "$@", its output and input discarded. GNU time counts in 10 ms
# ticks: the figure is floored at one tick.
best() {
	local best="" t tf
	tf=$(mktemp)
	for _ in $(seq "$REPS"); do
		/usr/bin/time -o "$tf" -f "%U %S %e" "$@" >/dev/null 2>&1 </dev/null || true
		t=$(tail -1 "$tf" | awk -v w="${WALL:-}" '{t = (w != "" ? $3 : $1 + $2); print (t < 0.01 ? 0.01 : t)}')
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
	done
	rm -f "$tf"
	echo "$best"
}
