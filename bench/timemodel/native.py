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
Every run is at real-time priority (chrt -f 10, so root): the host's other
load (this VM's two CPUs are shared with other work) then cannot preempt
the program, and a threaded program's two threads really run at the same
time; without it, under a load average of 5, falseshare's threads
overlapped so rarely that the false sharing did not show (2 % instead of
the 75 % measured with it). Threaded programs also report their CPU time (user + system of both
threads, from wait4): on a loaded host their wall time says as much about
the other load as about them, while CPU time shows what a line
ping-pong or a lock hand-off costs the threads whenever they do overlap.
The load average before and after is printed to stderr.
Usage: native.py [RUNS [PROG...]] > native.tsv"""
import os, statistics, subprocess, sys, time

THREADED = {"falseshare", "locksplit", "pipeline"}
PROGS = ["interchange", "soa", "falseshare", "hoist", "locksplit", "batchwrite", "hash", "pipeline"]
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
if len(sys.argv) > 2:
    PROGS = sys.argv[2:]

ENV = dict(os.environ, GLIBC_TUNABLES="glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-FMA4,-AVX512F")

def once(path, cpus):
    t = time.perf_counter()
    p = subprocess.Popen(["chrt", "-f", "10", "taskset", "-c", cpus, path], stdout=subprocess.DEVNULL, env=ENV)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{path}: exit {p.returncode}")
    return wall, ru.ru_utime + ru.ru_stime

def speedup(base, opt, empty):
    e = statistics.median(empty)
    b, o = statistics.median(base) - e, statistics.median(opt) - e
    # The spread: each alternated pair's own speedup, first and third quartiles.
    pairs = sorted(100 * (1 - (oo - e) / (bb - e)) for bb, oo in zip(base, opt))
    q = statistics.quantiles(pairs, n=4)
    return f"{b*1e3:.2f}\t{o*1e3:.2f}\t{100*(1-o/b):.1f}\t{q[0]:.1f}..{q[2]:.1f}"

print("load average", open("/proc/loadavg").read().split()[:3], file=sys.stderr)
print("program\tbase_ms\topt_ms\tspeedup_pct\tquartiles_pct")
for p in PROGS:
    cpus = "0,1" if p in THREADED else "0"
    wall, cpu = ([], [], []), ([], [], [])  # base, opt, empty runs
    for _ in range(runs):
        for k, path in ((0, "bin/" + p), (2, "bin/empty"), (1, "bin/" + p + "-opt")):
            w, c = once(path, cpus)
            wall[k].append(w), cpu[k].append(c)
    if p in THREADED:
        print(f"{p}\t{speedup(*wall)}", flush=True)
        print(f"{p} (CPU time)\t{speedup(*cpu)}", flush=True)
    else:
        print(f"{p}\t{speedup(*cpu)}", flush=True)
print("load average", open("/proc/loadavg").read().split()[:3], file=sys.stderr)
