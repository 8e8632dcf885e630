#!/usr/bin/env bash
# Host cost of path profiling (issue 11, point 9): for each program,
#   run        `emuprof run` (no profiling): host CPU seconds
#   SBL        `emuprof paths` (Ball-Larus, every routine, one emulation)
#   plan       `emuprof paths --p3 K --plan-out` (the planning run: SBL plus P3's planning)
#   copy max   the slowest of the K copies `emuprof paths --copy i/K`, each run alone:
#              host CPU seconds of the slowest copy (what a machine per copy costs)
#   copies     `emuprof paths --copies K --plan PLAN`: the K copies run concurrently on
#              this machine, wall seconds of the whole (children included); only for K in
#              COPIES_KS (default 2: this is a 2-core machine), "-" otherwise
#   hits       probe executions (deterministic): SBL's, and the slowest copy's with its
#              reduction against SBL; PBL's slowest copy for comparison; with COST=profile
#              also the reduction against "placed" SBL: one copy with the copies' probe
#              placement (hottest successor first, event counting), i.e. what the partition
#              itself gains
# CPU seconds are user+sys from /usr/bin/time (best of REPS). The copies observe only the
# routines they profile (no Block event elsewhere), so their host time follows the code of
# their routines, not their probe counts.
#   bench/paths.sh                       the default programs, K = 2 4 8
#   KS="2 4" REPS=3 bench/paths.sh       other K, best of 3
#   PROGS="qsort sort" bench/paths.sh    some of the programs only
#   COST=profile CALLERS=any bench/paths.sh   P3 with profile costs (--p3-cost, --p3-callers)
set -euo pipefail
cd "$(dirname "$0")/.."
EMUPROF=${EMUPROF:-./emuprof}
KS=${KS:-"2 4 8"}
REPS=${REPS:-1}
COST=${COST:-static}
CALLERS=${CALLERS:-one}
COPIES_KS=${COPIES_KS:-2}
PROGS=${PROGS:-"qsort sort gzip sqlite3"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seq 1 50000 | awk '{print ($1*7919)%50021, "line", $1}' >"$work/sort.txt"
for i in $(seq 1 40); do cat README.md docs/*.md; done | head -c 1000000 >"$work/gzip.txt" || true
progs=(
	"qsort|testdata/bin/glibc-static/qsort 200000"
	"sort|/usr/bin/sort $work/sort.txt"
	"gzip|/usr/bin/gzip -c $work/gzip.txt"
	"sqlite3|/usr/bin/sqlite3 :memory: WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<50000) SELECT sum(x*x%7) FROM c;"
)
# cpu CMD...: best user+sys seconds of REPS runs (stdout discarded)
cpu() {
	local best=""
	for _ in $(seq 1 "$REPS"); do
		/usr/bin/time -f "%U %S %e" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { tail -3 "$work/err" >&2; return 1; }
		local s
		s=$(awk '{printf "%.2f", $1+$2}' "$work/t")
		if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
	done
	echo "$best"
}
wall() {
	/usr/bin/time -f "%e" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { tail -3 "$work/err" >&2; return 1; }
	cat "$work/t"
}
hits() { # FILE: the probe_hits array
	python3 -c 'import json,sys; print(" ".join(map(str, json.load(open(sys.argv[1]))["probe_hits"])))' "$1"
}
printf "# %s UTC, %d host CPUs, REPS=%s, P3 cost %s, callers %s\n" "$(date -u '+%Y-%m-%d %H:%M')" "$(nproc)" "$REPS" "$COST" "$CALLERS"
printf "%-8s %2s %7s %7s %7s %9s %8s %8s | %10s %10s %7s %8s %10s %9s\n" prog K run SBL plan "copy max" "copy/SBL" copies "SBL hits" "P3 max" "P3 red" "PBL red" "placed SBL" "vs placed"
for entry in "${progs[@]}"; do
	name=${entry%%|*}
	case " $PROGS " in *" $name "*) ;; *) continue ;; esac
	read -r -a cmd <<<"${entry#*|}"
	if [ "$name" = sqlite3 ]; then cmd=(/usr/bin/sqlite3 :memory: "${entry#*:memory: }"); fi
	app=$(basename "${cmd[0]}")
	t_run=$(cpu "$EMUPROF" run --clear-env -- "${cmd[@]}")
	t_sbl=$(cpu "$EMUPROF" paths --clear-env --out "$work/sbl" -- "${cmd[@]}")
	sbl_hits=$(hits "$work/sbl/${app}_paths.json")
	placed_hits=$sbl_hits
	if [ "$COST" = profile ]; then
		"$EMUPROF" paths --clear-env --p3 1 --p3-cost profile --out "$work/placed" -- "${cmd[@]}" >/dev/null 2>&1
		placed_hits=$(hits "$work/placed/${app}_paths.json")
	fi
	for k in $KS; do
		plan="$work/plan$k.json"
		t_plan=$(cpu "$EMUPROF" paths --clear-env --p3 "$k" --p3-cost "$COST" --p3-callers "$CALLERS" --plan-out "$plan" --out "$work/p3" -- "${cmd[@]}")
		p3_hits=$(hits "$work/p3/${app}_paths.json")
		"$EMUPROF" paths --clear-env --p3 "$k" --pbl --p3-cost "$COST" --out "$work/pbl" -- "${cmd[@]}" >/dev/null 2>&1
		pbl_hits=$(hits "$work/pbl/${app}_paths.json")
		worst=0
		for i in $(seq 0 $((k - 1))); do
			t=$(cpu "$EMUPROF" paths --clear-env --copy "$i/$k" --plan "$plan" --out "$work/c" -- "${cmd[@]}")
			worst=$(awk "BEGIN{print ($t > $worst) ? $t : $worst}")
		done
		t_copies=-
		case " $COPIES_KS " in *" $k "*)
			t_copies=$(wall "$EMUPROF" paths --clear-env --copies "$k" --plan "$plan" --out "$work/copies" -- "${cmd[@]}")
			cmp -s "$work/copies/${app}_paths.json" "$work/p3/${app}_paths.json" || echo "warning: $name k=$k: merged copies differ from --p3" >&2
			;;
		esac
		python3 - "$name" "$k" "$t_run" "$t_sbl" "$t_plan" "$worst" "$t_copies" "$sbl_hits" "$p3_hits" "$pbl_hits" "$placed_hits" <<'EOF'
import sys
name, k, run, sbl, plan, worst, copies, sblh, p3h, pblh, placed = sys.argv[1:]
sblh = int(sblh); p3 = max(map(int, p3h.split())); pbl = max(map(int, pblh.split())); placed = int(placed)
print("%-8s %2s %7s %7s %7s %9s %7.2fx %8s | %10d %10d %6.1f%% %7.1f%% %10d %8.1f%%" % (
    name, k, run, sbl, plan, worst, float(worst) / float(sbl), copies, sblh, p3,
    100 - 100.0 * p3 / sblh, 100 - 100.0 * pbl / sblh, placed, 100 - 100.0 * p3 / placed))
EOF
	done
done
