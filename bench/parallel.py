#!/usr/bin/env python3
"""Issue 13's benchmark: host time of `emuprof parallel` over `emuprof run`
(goal: at most 1.2x), on the threaded test guests, xz -T2 and pigz.

    bench/parallel.py [-n ROUNDS] [GUEST ...]     (bench/run.sh with PARALLEL=1)

Each round runs `emuprof run` and then `emuprof parallel` (into a fresh
directory) on the guest; the ratio of a round is parallel over run, and
the figure is the median of the rounds' ratios: pairing keeps it true while
the machine's speed drifts, and the median ignores a slow or lucky round.
CPU is user + sys from getrusage (microseconds; GNU time's 10 ms ticks are
a sixth of a short guest's run), wall a monotonic clock around the child.
The guests run with --clear-env, so both commands see the same environment
(docs/PERFORMANCE.md). xz and pigz read the first 400,000 bytes of python3.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GUESTS = ["mutex_counter", "condvar_pc", "threadpool", "coz_fig1", "omp_reduce",
          "par_serial", "omp_imbalance", "hello", "xz", "pigz"]


def measure(cmd):
    """CPU and wall seconds of one run of cmd, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL, check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=int(os.environ.get("ROUNDS", "11")),
                    help="rounds per guest (default 11, or $ROUNDS)")
    ap.add_argument("guests", nargs="*", default=GUESTS)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    emuprof = os.environ.get("EMUPROF", os.path.join(root, "emuprof"))
    bin_dir = os.path.join(root, "testdata", "bin", "glibc-static")
    work = tempfile.mkdtemp(prefix="emuprof-parallel-bench-")
    try:
        data = os.path.join(work, "input")
        with open(os.path.realpath("/usr/bin/python3"), "rb") as src, open(data, "wb") as dst:
            dst.write(src.read(400000))
        print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
              f"{args.n} rounds, medians")
        print(f"{'guest':<14} {'run cpu':>8} {'par cpu':>8} {'par/run':>8} {'run wall':>9} {'par wall':>9} {'par/run':>8}")
        for g in args.guests:
            guest = {"xz": ["/usr/bin/xz", "-T2", "-c", data],
                     "pigz": ["/usr/bin/pigz", "-c", data]}.get(g, [os.path.join(bin_dir, g)])
            if not os.access(guest[0], os.X_OK):
                print(f"missing {guest[0]} (make guests, or scripts/deps.sh)", file=sys.stderr)
                continue
            rows = []
            for _ in range(args.n):
                run = measure([emuprof, "run", "--clear-env", "--"] + guest)
                out = os.path.join(work, "out")
                shutil.rmtree(out, ignore_errors=True)
                par = measure([emuprof, "parallel", "--clear-env", "--out", out, "--"] + guest)
                rows.append((run, par))
            med = lambda f: statistics.median(f(r) for r in rows)
            print(f"{g:<14} {med(lambda r: r[0][0]):8.3f} {med(lambda r: r[1][0]):8.3f} "
                  f"{med(lambda r: r[1][0] / r[0][0]):7.2f}x {med(lambda r: r[0][1]):9.3f} "
                  f"{med(lambda r: r[1][1]):9.3f} {med(lambda r: r[1][1] / r[0][1]):7.2f}x", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
