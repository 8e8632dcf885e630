#!/usr/bin/env bash
# Measures emuprof against native execution and valgrind, in the same run,
# and prints slowdown ratios (CPU time / native CPU time), guest MIPS and
# peak memory. CPU time (user+sys) rather than wall time: on a shared VM
# wall time varies with steal time by ±20 %; CPU time much less.
#   bench/run.sh [guest ...]        default: the CPU-bound guests
#   REPS=5 bench/run.sh qsort       best of 5 runs per figure (default 3)
#   THREADS=1 bench/run.sh          the multithreaded guests instead
#   INTERP=1 bench/run.sh           interpreter-heavy Debian programs (perl, sqlite3,
#                                   jq, python3): native, bare, run, run/bare
#   QEMU=1 bench/run.sh [prog ...]  the engine against qemu-x86_64 (issue 26): native, qemu,
#                                   bare, run, run/qemu, run/bare and geometric means, CPU
#                                   medians of alternated rounds (ROUNDS, default 3;
#                                   bench/qemu.py); ANALYSES=1 with QEMU=1: the analyses
#                                   over run on the same programs; `QEMU=1 bench/run.sh --aprof`: trms
#                                   against aprof --drms=yes (APROF_VALGRIND)
#   PARALLEL=1 bench/run.sh         `emuprof parallel` over `emuprof run` on the threaded
#                                   guests, xz -T2 and pigz, CPU and wall time, medians of
#                                   paired rounds (bench/parallel.py; issue 13's goal: 1.2x)
# The overlap of the analyses with the engine (they run on a goroutine of
# their own) shows in wall time, not CPU time: the columns trms-wall,
# memhooks-wall and their ratio are wall seconds (best of REPS).
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
#   aprof       valgrind --tool=aprof --drms=yes, when installed (not packaged: "-" otherwise;
#               APROF_VALGRIND names a valgrind built with it; `QEMU=1 bench/run.sh --aprof`
#               sets trms against it on real programs)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-3}
EMUPROF=${EMUPROF:-./emuprof}
BIN=testdata/bin/glibc-static
guests=("$@")
if [ ${#guests[@]} -eq 0 ]; then
	if [ -n "${THREADS:-}" ]; then
		guests=(mutex_counter condvar_pc threadpool pipe_threads coz_fig1 omp_reduce)
	else
		guests=(qsort mallocstress)
	fi
fi
have_valgrind=$(command -v valgrind >/dev/null && echo 1 || echo 0)
# aprof (a valgrind tool, not packaged by Debian): its reference figure
# when it is installed, "-" otherwise.
have_aprof=0
APROF_VALGRIND=${APROF_VALGRIND:-valgrind}
if "$APROF_VALGRIND" --tool=aprof --help >/dev/null 2>&1; then have_aprof=1; fi

. bench/lib.sh
ratio() { echo "scale=1; $1 / $2" | bc -l; }
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null </dev/null | tail -1; }

if [ -n "${QEMU:-}" ]; then
	EMUPROF=$EMUPROF exec python3 bench/qemu.py ${ANALYSES:+--analyses} -n "${ROUNDS:-3}" "$@"
fi
if [ -n "${PARALLEL:-}" ]; then
	# Paired rounds and microsecond CPU times: see bench/parallel.py.
	EMUPROF=$EMUPROF exec python3 bench/parallel.py "$@"
fi
date -u +"# %Y-%m-%d %H:%M UTC, $(nproc) cores, REPS=$REPS"
if [ -n "${INTERP:-}" ]; then
	# Interpreter-heavy programs: is the time in our hooks or in the engine?
	work=$(mktemp -d)
	seq 1 20000 | awk '{print ($1*7919)%20011, "line", $1}' >"$work/lines.txt"
	python3 -c 'import json,random
random.seed(1)
print(json.dumps([{"id":i,"name":"n%d"%i,"tags":["a","b",str(i%7)],"v":random.random()} for i in range(6000)]))' >"$work/data.json"
	cte='WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<1000000) SELECT sum(x) FROM c;'
	printf '%-10s %8s %8s %8s %9s\n' program native bare run run/bare
	for name in perl sqlite3 jq python3; do
		case $name in
		perl) cmd=(/usr/bin/perl -e 'print sort <>' "$work/lines.txt") ;;
		sqlite3) cmd=(/usr/bin/sqlite3 :memory: "$cte") ;;
		jq) cmd=(/usr/bin/jq '[.[]|.v]|add' "$work/data.json") ;;
		python3) cmd=(/usr/bin/python3 -c 'import hashlib; print(hashlib.sha256(b"x"*10000000).hexdigest())') ;;
		esac
		n=$(best "${cmd[@]}")
		bare=$(best $EMUPROF run --bare-engine -- "${cmd[@]}")
		run=$(best $EMUPROF run -- "${cmd[@]}")
		printf '%-10s %8.3f %7.1fx %7.1fx %9.3f\n' "$name" "$n" "$(ratio "$bare" "$n")" "$(ratio "$run" "$n")" "$(echo "scale=3; $run / $bare" | bc -l)"
	done
	rm -rf "$work"
	exit 0
fi
printf '%-14s %8s %7s %7s %8s %7s %8s %8s %9s %8s %13s %6s %13s %22s\n' guest native bare run memhooks trms vg-none memcheck callgrind run/bare trms/memhooks MIPS "RSS MB g/trms" "wall trms/memhooks" aprof
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
	aprof=-
	if [ "$have_aprof" = 1 ]; then
		ap=$( (cd /tmp && best "$APROF_VALGRIND" --tool=aprof --drms=yes "$OLDPWD/$prog"))
		aprof="$(ratio "$ap" "$n")x"
	fi
	insns=$($EMUPROF run --stats -- "$prog" 2>&1 >/dev/null | sed -n 's/.*ns (makespan), \([0-9]*\) instructions.*/\1/p')
	mips=$(echo "scale=0; $insns / $run / 1000000" | bc -l)
	grss=$(rss "$prog")
	trss=$(rss $EMUPROF trms --out /tmp/emuprof-bench -- "$prog")
	memw=$(WALL=1 best $EMUPROF run --bench-mem-hooks -- "$prog")
	trmsw=$(WALL=1 best $EMUPROF trms --out /tmp/emuprof-bench -- "$prog")
	printf '%-14s %8.3f %6.1fx %6.1fx %7.1fx %6.1fx %7.1fx %7.1fx %8.1fx %8.2f %13.2f %6s %6d/%-6d %7.2f/%-7.2f= %5.2f %6s\n' "$g" "$n" \
		"$(ratio "$bare" "$n")" "$(ratio "$run" "$n")" "$(ratio "$mem" "$n")" "$(ratio "$trms" "$n")" \
		"$(ratio "$vn" "$n")" "$(ratio "$vm" "$n")" "$(ratio "$vc" "$n")" \
		"$(echo "scale=3; $run / $bare" | bc -l)" "$(echo "scale=3; $trms / $mem" | bc -l)" "$mips" \
		"$((grss / 1024))" "$((trss / 1024))" "$trmsw" "$memw" "$(echo "scale=3; $trmsw / $memw" | bc -l)" "$aprof"
done
