#!/usr/bin/env python3
"""Whole-process CPU medians of `emuprof parallel` (or another command,
-c) for two builds, A and B, against `emuprof run` (of B), run in turn:
run(B), parallel(A), parallel(B), repeated N times. CPU time is user + sys
from getrusage (microseconds, not GNU time's 10 ms ticks), which matters
for runs of 0.1-0.3 s.

    bench/abcpu.py [-n N] [-c COMMAND] [--same] A_BINARY B_BINARY -- GUEST [ARGS...]

Prints the medians, COMMAND/run for each build, and the median of the
per-round ratios COMMAND(B)/COMMAND(A). The guest runs with --clear-env,
so both builds see the same environment (see docs/PERFORMANCE.md).
--same also checks, every round, that the two builds wrote the same files
byte for byte.
"""
import argparse
import filecmp
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
    ap.add_argument("-c", default="parallel", help="the emuprof command to compare, with any flags (default parallel)")
    ap.add_argument("--same", action="store_true", help="check that A and B write the same files")
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
                # -c may carry flags ("run --time-model zen4"); run writes no --out.
                cmd = args.c.split()
                out_flag = [] if cmd[0] == "run" else ["--out", d]
                row[name] = cpu([binary] + cmd + ["--clear-env"] + out_flag + ["--"] + guest)
            rows.append(row)
            if args.same:
                same(os.path.join(out, "a"), os.path.join(out, "b"))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    med = {k: statistics.median(r[k] for r in rows) for k in ("run", "a", "b")}
    ratio = statistics.median(r["b"] / r["a"] for r in rows)
    c = args.c
    print(f"{guest[0]}: {args.n} rounds, CPU s medians: run {med['run']:.4f}, "
          f"{c} A {med['a']:.4f} ({med['a'] / med['run']:.3f}x), "
          f"{c} B {med['b']:.4f} ({med['b'] / med['run']:.3f}x); B/A {ratio:.3f}")


def same(a, b):
    """Exits if directories a and b do not hold the same files."""
    cmp = filecmp.dircmp(a, b)
    names = sorted(cmp.common_files)
    _, diff, errs = filecmp.cmpfiles(a, b, names, shallow=False)
    if cmp.left_only or cmp.right_only or diff or errs or cmp.common_dirs:
        sys.exit(f"abcpu: A and B wrote different files: only A {cmp.left_only}, only B {cmp.right_only}, "
                 f"different {diff}, unreadable {errs}, directories {cmp.common_dirs}")


if __name__ == "__main__":
    sys.exit(main())
