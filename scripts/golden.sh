#!/usr/bin/env bash
# Prints the sha256 of every profile emuprof writes for a fixed set of test
# guests and commands: run it before and after a refactoring, and the two
# listings must be equal (the profiles are byte-identical). Usage:
#   scripts/golden.sh [EMUPROF] > golden.txt
set -eu
cd "$(dirname "$0")/.."
emuprof=${1:-./emuprof}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
b=testdata/bin
run() { # name, then emuprof's arguments
	local name=$1; shift
	# A fixed environment: the guest's stack holds it, so its size moves
	# addresses and instruction counts (bash's $_ names the caller's path).
	env -i PATH=/usr/bin:/bin LANG=C "$emuprof" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr" || echo "$name: exit $?" >> "$out/$name.exit"
}
for f in glibc-static musl-static glibc-dynamic glibc-static-pie; do
	run profile-tolower-$f profile --out "$out/profile-tolower-$f" -- $b/$f/tolower
	run paths-pathfreq_mt-$f paths --out "$out/paths-pathfreq_mt-$f" -- $b/$f/pathfreq_mt
done
run profile-qsort profile --out "$out/profile-qsort" -- $b/glibc-static-O0/qsort
run profile-omp profile --out "$out/profile-omp" -- $b/glibc-static/omp_imbalance
run profile-cxxsort profile --out "$out/profile-cxxsort" -- $b/glibc-dynamic/cxxsort
run trms-wf trms --out "$out/trms-wf" -- $b/glibc-static-O0/wf
run paths-p3 paths --p3 2 --out "$out/paths-p3" -- $b/glibc-static/pathsig
run parallel-mutex parallel --out "$out/parallel-mutex" -- $b/glibc-static/mutex_counter
run causal-rounds causal --out "$out/causal-rounds" -- $b/glibc-static/coz_rounds
run causal-queue causal --out "$out/causal-queue" -- $b/glibc-static/coz_queue
run callgrind-strings callgrind --out "$out/callgrind-strings" -- $b/glibc-static/strings
run stats-signals run --stats -- $b/musl-static/signals
run stats-procs run --stats -- $b/glibc-dynamic/procs
run stats-sockets run --stats -- $b/glibc-static/sockets
cd "$out"
# The stderr status lines carry wall times; the profiles and stdout must not.
find . -type f ! -name '*.stderr' | LC_ALL=C sort | xargs sha256sum
