#!/usr/bin/env python3
"""Whole-process CPU medians of `emuprof parallel` for two builds, A and B,
against `emuprof run` (of B), run in turn: run(B), parallel(A), parallel(B),
repeated N times. CPU time is user + sys from getrusage (microseconds, not
GNU time's 10 ms ticks), which matters for runs of 0.1-0.3 s.

    bench/abcpu.py [-n N] A_BINARY B_BINARY -- GUEST [ARGS...]

Prints the medians, parallel/run for each build, and the median of the
per-round ratios parallel(B)/parallel(A). The guest runs with --clear-env,
so both builds see the same environment (see docs/PERFORMANCE.md).
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile


def cpu(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=11, help="rounds (default 11)")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("guest", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    guest = args.guest[1:] if args.guest[:1] == ["--"] else args.guest
    if not guest:
        ap.error("no guest after --")
    out = tempfile.mkdtemp(prefix="abcpu-")
    rows = []
    try:
        for _ in range(args.n):
            row = {"run": cpu([args.b, "run", "--clear-env", "--"] + guest)}
            for name, binary in (("a", args.a), ("b", args.b)):
                d = os.path.join(out, name)
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                row[name] = cpu([binary, "parallel", "--clear-env", "--out", d, "--"] + guest)
            rows.append(row)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    med = {k: statistics.median(r[k] for r in rows) for k in ("run", "a", "b")}
    ratio = statistics.median(r["b"] / r["a"] for r in rows)
    print(f"{guest[0]}: {args.n} rounds, CPU s medians: run {med['run']:.4f}, "
          f"parallel A {med['a']:.4f} ({med['a'] / med['run']:.3f}x), "
          f"parallel B {med['b']:.4f} ({med['b'] / med['run']:.3f}x); B/A {ratio:.3f}")


if __name__ == "__main__":
    sys.exit(main())
