#!/usr/bin/env python3
"""Native timings of the time model's validation pairs (docs/TIME-MODEL.md):
the median over alternated runs of NAME and NAME-opt, pinned with taskset
(one CPU for single-threaded programs, both for threaded ones). Single-
threaded programs are timed by their CPU time (user + system, from
wait4), which other load on the host does not inflate; threaded ones by
wall time, since their speedups are about running in parallel. Both are
net of process start-up: the same measure of an empty static program
(bin/empty, taskset's own exec included), run alternately with the pair,
is subtracted, since emuprof's virtual time starts at the guest's first
instruction. The runs take the emulated CPU's code paths (no AVX, as the
tests' native runs: docs/CPU.md), so that glibc's ifuncs pick the
same strlen and memcpy natively as under emuprof.
Usage: native.py [RUNS] > native.tsv"""
import os, statistics, subprocess, sys, time

THREADED = {"falseshare", "locksplit", "pipeline"}
PROGS = ["interchange", "soa", "falseshare", "hoist", "locksplit", "batchwrite", "hash", "pipeline"]
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7

ENV = dict(os.environ, GLIBC_TUNABLES="glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-FMA4,-AVX512F")

def once(path, cpus):
    t = time.perf_counter()
    p = subprocess.Popen(["taskset", "-c", cpus, path], stdout=subprocess.DEVNULL, env=ENV)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{path}: exit {p.returncode}")
    return wall if cpus != "0" else ru.ru_utime + ru.ru_stime

print("program\tbase_ms\topt_ms\tspeedup_pct\tquartiles_pct")
for p in PROGS:
    cpus = "0,1" if p in THREADED else "0"
    base, opt, empty = [], [], []
    for _ in range(runs):
        base.append(once("bin/" + p, cpus))
        empty.append(once("bin/empty", cpus))
        opt.append(once("bin/" + p + "-opt", cpus))
    e = statistics.median(empty)
    b, o = statistics.median(base) - e, statistics.median(opt) - e
    # The spread: each alternated pair's own speedup, first and third quartiles.
    pairs = sorted(100 * (1 - (oo - e) / (bb - e)) for bb, oo in zip(base, opt))
    q = statistics.quantiles(pairs, n=4)
    print(f"{p}\t{b*1e3:.2f}\t{o*1e3:.2f}\t{100*(1-o/b):.1f}\t{q[0]:.1f}..{q[2]:.1f}", flush=True)
