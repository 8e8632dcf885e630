#!/usr/bin/env bash
# Installs emuprof's build and test dependencies when they are missing: what
# building emuprof and the test guests needs, and every host program the
# tests run. The tests fail (they do not skip) when one of these is missing,
# so this list must name all of them.
set -eu
need=()
if [ "$(uname -s)" = Darwin ]; then
	command -v brew >/dev/null || { echo "deps: install Homebrew, then: brew install unicorn go" >&2; exit 1; }
	brew list unicorn >/dev/null 2>&1 || brew install unicorn
	exit 0
fi

# Building emuprof (cgo binding of libunicorn) and the guests (testdata/Makefile).
[ -f /usr/include/unicorn/unicorn.h ] || need+=(libunicorn-dev)
command -v make >/dev/null || need+=(make)
command -v gcc >/dev/null || need+=(gcc)
command -v musl-gcc >/dev/null || need+=(musl-tools)
# The C++ guest (cxxsort: demangled names in .aprof reports): g++ and a static libstdc++.
command -v g++ >/dev/null || need+=(g++)
# Static glibc (libc.a, libm.a; rcrt1.o for static-pie): gcc only recommends libc6-dev.
for f in libc.a libm.a rcrt1.o; do
	[ -e "/usr/lib/x86_64-linux-gnu/$f" ] || need+=(libc6-dev)
done
# The OpenMP guest: omp.h and libgomp.a come with gcc's libgcc-N-dev,
# libgomp.so.1 (the dynamic build's) with libgomp1.
if command -v gcc >/dev/null; then
	case $(gcc -print-file-name=libgomp.a) in
	/*) ;;
	*) need+=("libgcc-$(gcc -dumpversion | cut -d. -f1)-dev") ;;
	esac
fi
[ -e /usr/lib/x86_64-linux-gnu/libgomp.so.1 ] || need+=(libgomp1)

# Host programs the tests run, at the paths they use: strip (loader), the
# Debian programs the end-to-end tests compare with their native runs, and
# chromium (the HTML report is rendered headless: cmd/emuprof/report_test.go).
while read -r path pkg; do
	[ -x "$path" ] || need+=("$pkg")
done <<'EOF'
/usr/bin/strip binutils
/usr/bin/readelf binutils
/usr/bin/objdump binutils
/usr/bin/gdb gdb
/usr/bin/pigz pigz
/usr/bin/xz xz-utils
/bin/gzip gzip
/usr/bin/tar tar
/bin/bash bash
/bin/ls coreutils
/usr/bin/sort coreutils
/usr/bin/wc coreutils
/usr/bin/md5sum coreutils
/usr/bin/sha256sum coreutils
/usr/bin/base64 coreutils
/usr/bin/tr coreutils
/usr/bin/uniq coreutils
/usr/bin/nproc coreutils
/usr/bin/chromium chromium
/usr/bin/perl perl-base
/usr/bin/sqlite3 sqlite3
/usr/bin/jq jq
/usr/bin/mawk mawk
/bin/bzip2 bzip2
/usr/bin/zstd zstd
/usr/bin/lz4 lz4
/usr/bin/bc bc
/usr/bin/xxd xxd
/usr/bin/file file
/usr/bin/tclsh tcl
/usr/bin/diff diffutils
/usr/bin/factor coreutils
/usr/bin/git git
/usr/bin/diff3 diffutils
/usr/bin/xargs findutils
/usr/bin/script bsdutils
/usr/bin/setsid util-linux
/usr/bin/taskset util-linux
/usr/bin/date coreutils
/usr/bin/stat coreutils
/usr/bin/mkfifo coreutils
/usr/bin/seq coreutils
/usr/bin/lbzip2 lbzip2
/usr/bin/pbzip2 pbzip2
/usr/bin/node nodejs
/usr/bin/callgrind_annotate valgrind
/usr/sbin/slurmctld slurm-wlm
/usr/sbin/slurmd slurm-wlm
/usr/bin/sbatch slurm-wlm
/usr/sbin/munged munge
/usr/sbin/mungekey munge
/usr/bin/timeout coreutils
/usr/bin/nice coreutils
/usr/bin/ruby ruby
/usr/bin/ps procps
/usr/bin/qemu-x86_64 qemu-user
/usr/bin/curl curl
/usr/bin/unshare util-linux
/usr/sbin/ip iproute2
/usr/bin/socat socat
/usr/bin/redis-server redis-server
/usr/bin/redis-cli redis-tools
/usr/bin/redis-benchmark redis-tools
/usr/sbin/nginx nginx-light
/usr/bin/memcached memcached
EOF
[ -f /usr/share/coz-profiler/viewer/js/profile.js ] || need+=(coz-profiler) # Coz's viewer, read by node in TestCausalCozViewer
# python3 with the standard library the tests import (python3-minimal lacks json and mmap).
/usr/bin/python3 -c 'import hashlib, json, mmap' 2>/dev/null || need+=(python3)
# perl with its XS modules (Time::HiRes: the signals tests; perl-base lacks it).
/usr/bin/perl -MTime::HiRes -e1 2>/dev/null || need+=(perl)

if [ ${#need[@]} -gt 0 ]; then
	mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	echo "deps: installing ${need[*]}" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
