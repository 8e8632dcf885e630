#!/bin/sh
# check_native.sh - runs every built guest (make list) natively, twice, with
# the standard arguments below, and compares stdout + exit status with
# expected/NAME.out. `./check_native.sh --update` rewrites expected/ from the
# glibc-static variant. Run from anywhere; needs `make` to have been run.
#
# Standard invocations (paths relative to testdata/):
#   args          env -i A=1 B=two PATH=/bin args one "two words" ""
#   filecopy      filecopy inputs/data.bin TMPFILE
#   listdir       listdir inputs/dir
#   cat           cat < inputs/words.txt          (stdout must equal the input)
#   readbuf       readbuf inputs/words.txt
#   wf            wf < inputs/words.txt
#   deadlock      must still be running after 2 s (it always deadlocks)
#   mmap_shared   mmap_shared run, then mmap_shared show, in TMPDIR
#   pathsfs       pathsfs twice in a new directory, then cat log.txt
#   racy_counter  output depends on the interleaving: only the status is checked
#   cpuconf       output depends on the libc and the host CPU (glibc's libm picks
#                 FMA variants where the CPU has FMA): two runs must agree, exit 0
#   everything else: no arguments, stdin from /dev/null
# Native exit statuses are shell-style: a guest killed by signal S gives 128+S.
set -u
cd "$(dirname "$0")" || exit 2
update=0
[ "${1:-}" = "--update" ] && update=1
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

run() { # run VARIANT NAME: prints stdout then "exit=STATUS"
	b=bin/$1/$2
	case $2 in
	args) env -i A=1 B=two PATH=/bin "$b" one "two words" "" ;;
	filecopy) "$b" inputs/data.bin "$tmp/copy" </dev/null ;;
	listdir) "$b" inputs/dir </dev/null ;;
	cat) "$b" <inputs/words.txt >"$tmp/cat" && cmp -s "$tmp/cat" inputs/words.txt && echo "same as input" ;;
	readbuf) "$b" inputs/words.txt </dev/null ;;
	wf) "$b" <inputs/words.txt ;;
	deadlock) timeout 2 "$b" </dev/null ;;
	smc) d=$PWD && cd "$tmp" && "$d/$b" </dev/null ;;
	mmap_shared) d=$PWD && cd "$tmp" && "$d/$b" run </dev/null && "$d/$b" show ;; # in $(...): cd stays local
	pathsfs) d=$PWD && w=$(mktemp -d "$tmp/fs.XXXXXX") && cd "$w" && "$d/$b" </dev/null && "$d/$b" </dev/null && cat log.txt ;;
	*) timeout 60 "$b" </dev/null ;;
	esac 2>/dev/null
	echo "exit=$?"
}

fail=0
for t in $(make -s list); do
	v=${t%/*} n=${t#*/}
	out1=$(run "$v" "$n")
	case $n in
	deadlock) out2=$out1 ;;
	*) out2=$(run "$v" "$n") ;;
	esac
	case $n in
	racy_counter)
		[ "${out1##*exit=}" = 0 ] || { echo "FAIL $t: status ${out1##*exit=}"; fail=1; }
		continue ;;
	deadlock)
		[ "${out1##*exit=}" = 124 ] || { echo "FAIL $t: did not hang"; fail=1; }
		continue ;;
	cpuconf)
		[ "${out1##*exit=}" = 0 ] && [ "$out1" = "$out2" ] || { echo "FAIL $t: status ${out1##*exit=} or two runs differ"; fail=1; }
		continue ;;
	esac
	if [ "$out1" != "$out2" ]; then
		echo "FAIL $t: two runs differ"
		fail=1
		continue
	fi
	case $n in args) out1=$(printf '%s\n' "$out1" | sed "s|bin/$v/|bin/VARIANT/|g") ;; esac
	exp=expected/$n.out
	if [ $update = 1 ] && [ "$v" = glibc-static ]; then
		mkdir -p expected
		printf '%s\n' "$out1" >"$exp"
	elif [ ! -f "$exp" ]; then
		echo "FAIL $t: no $exp"
		fail=1
	elif [ "$(cat "$exp")" != "$out1" ]; then
		echo "FAIL $t: output differs from $exp"
		fail=1
	fi
done
[ $fail = 0 ] && echo "all native runs ok"
exit $fail
