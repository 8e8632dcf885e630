#!/usr/bin/env bash
# Installs emuprof's build and test dependencies when they are missing.
set -eu
need=()
if [ "$(uname -s)" = Darwin ]; then
	command -v brew >/dev/null || { echo "deps: install Homebrew, then: brew install unicorn go" >&2; exit 1; }
	brew list unicorn >/dev/null 2>&1 || brew install unicorn
	exit 0
fi
[ -f /usr/include/unicorn/unicorn.h ] || need+=(libunicorn-dev)
command -v gcc >/dev/null || need+=(gcc)
command -v musl-gcc >/dev/null || need+=(musl-tools)
command -v make >/dev/null || need+=(make)
for p in pigz xz gzip sort base64 md5sum; do
	command -v "$p" >/dev/null || case $p in
		pigz) need+=(pigz) ;; xz) need+=(xz-utils) ;; gzip) need+=(gzip) ;; *) need+=(coreutils) ;;
	esac
done
[ -x /usr/bin/python3 ] || need+=(python3-minimal)
[ -e /usr/lib/gcc/x86_64-linux-gnu/12/libgomp.a ] || ls /usr/lib/gcc/x86_64-linux-gnu/*/libgomp.a >/dev/null 2>&1 || need+=(libgomp1)
if [ ${#need[@]} -gt 0 ]; then
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	echo "deps: installing ${need[*]}" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
