#!/usr/bin/env python3
"""emuprof's engine against qemu-user (issue 26): whole-process CPU seconds of
each program natively, under qemu-x86_64, under `emuprof run --bare-engine` and
under `emuprof run`, the four run in turn in each round (alternated, so that a
drift of the machine's speed touches all four alike); medians over the rounds,
run/qemu and run/bare per program and their geometric means.

    bench/qemu.py [-n ROUNDS] [PROGRAM ...]     (default: all, 3 rounds)
    EMUPROF=./emuprof  QEMU_BIN=qemu-x86_64     the binaries measured
    QEMU_CPU=Nehalem                            qemu's -cpu (the default: emuprof's cpuid is
                                                x86-64-v2, as Nehalem, so both run the same
                                                code; QEMU_CPU= for qemu's own qemu64, which
                                                has no SSSE3: see PERFORMANCE.md, item 10)

CPU time is user + sys of the finished child (getrusage, microseconds). Each
program's stdout under qemu and emuprof is checked against the native run's
in the first round; a difference is printed (and the row marked "!").
Goals (issue 26): run/qemu <= 1.5 on each, geometric mean <= 1.3; run/bare <= 1.10.

    bench/qemu.py --analyses [-n ROUNDS] [PROGRAM ...]

instead measures the analyses over `emuprof run` on the same programs: run, memory
tracing alone (run --bench-mem-hooks), trms, paths, parallel, causal and profile
(trms+paths+parallel), CPU medians of alternated rounds and each one's ratio to run.

    bench/qemu.py --aprof [-n ROUNDS] [PROGRAM ...]     APROF_VALGRIND=valgrind

instead sets `emuprof trms` against aprof (`valgrind --tool=aprof --drms=yes`, the
TRMS of its paper) on the same programs and testdata's mallocstress: native, aprof,
trms, trms/aprof, and their geometric mean (issue 26: trms at or below aprof).
aprof is not packaged by Debian; APROF_VALGRIND names a valgrind that has it, and
both tools' stdout are checked against the native run's.
"""
import argparse
import hashlib
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile


def inputs(work):
    """Writes the programs' inputs into work; returns {name: argv}."""
    # 2 MB of a real binary: neither random nor trivially compressible.
    with open("/usr/bin/python3.11", "rb") as f:
        blob = f.read(2_000_000)
    data = os.path.join(work, "input.bin")
    with open(data, "wb") as f:
        f.write(blob)
    lines = os.path.join(work, "lines.txt")
    with open(lines, "w") as f:
        for i in range(1, 20001):
            f.write(f"{(i * 7919) % 20011} line {i}\n")
    rnd = random.Random(1)
    doc = json.dumps([{"id": i, "name": "n%d" % i, "tags": ["a", "b", str(i % 7)], "v": rnd.random()} for i in range(5600)])
    js = os.path.join(work, "data.json")
    with open(js, "w") as f:
        f.write(doc + "\n")
    cte = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<300000) SELECT sum(x) FROM c;"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {
        "qsort": [os.path.join(root, "testdata/bin/glibc-static/qsort")],
        "xz-6": ["/usr/bin/xz", "-6", "-T1", "-c", data],
        "bzip2-9": ["/bin/bzip2", "-9", "-c", data],
        "python3-sha": ["/usr/bin/python3", "-c", 'import hashlib; print(hashlib.sha256(b"x"*20000000).hexdigest())'],
        "sqlite3-cte": ["/usr/bin/sqlite3", ":memory:", cte],
        "perl-sort": ["/usr/bin/perl", "-e", "print sort <>", lines],
        "jq": ["/usr/bin/jq", "[.[]|.v]|add", js],
    }


def aprof_inputs(work):
    """The programs of --aprof: the engine's, and an allocator-heavy guest."""
    progs = inputs(work)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    progs["mallocstress"] = [os.path.join(root, "testdata/bin/glibc-static/mallocstress")]
    return progs


def cpu(cmd, cwd, keep=False):
    """CPU seconds of cmd, and the digest of its stdout when keep."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE if keep else subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return t, (hashlib.sha256(p.stdout).hexdigest() if keep else None), p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--analyses", action="store_true", help="the analyses over run instead")
    ap.add_argument("--aprof", action="store_true", help="trms against aprof --drms=yes instead")
    ap.add_argument("programs", nargs="*")
    args = ap.parse_args()
    emuprof = os.path.abspath(os.environ.get("EMUPROF", "./emuprof"))
    qemu = os.environ.get("QEMU_BIN", "qemu-x86_64")
    qemu_cpu = os.environ.get("QEMU_CPU", "Nehalem")
    if args.aprof:
        return against_aprof(emuprof, os.environ.get("APROF_VALGRIND", "valgrind"), args.programs, args.n)
    if not shutil.which(qemu):
        sys.exit(f"bench/qemu.py: {qemu} not found (scripts/deps.sh installs qemu-user)")
    work = tempfile.mkdtemp(prefix="emuprof-qemu-")
    try:
        progs = inputs(work)
        names = args.programs or list(progs)
        for n in names:
            if n not in progs:
                sys.exit(f"bench/qemu.py: unknown program {n} (known: {' '.join(progs)})")
        if args.analyses:
            return analyses(emuprof, progs, names, args.n, work)
        kinds = {
            "native": lambda c: c,
            "qemu": lambda c: [qemu] + (["-cpu", qemu_cpu] if qemu_cpu else []) + c,
            "bare": lambda c: [emuprof, "run", "-q", "--bare-engine", "--"] + c,
            "run": lambda c: [emuprof, "run", "-q", "--"] + c,
        }
        print(f"# {args.n} rounds, CPU s (user+sys) medians, {os.cpu_count()} host CPUs")
        print(f"{'program':<12} {'native':>8} {'qemu':>8} {'bare':>8} {'run':>8} {'run/qemu':>9} {'run/bare':>9}")
        rq, rb = [], []
        for n in names:
            times = {k: [] for k in kinds}
            bad = []
            for r in range(args.n):
                digests = {}
                for k, wrap in kinds.items():
                    t, d, rc = cpu(wrap(progs[n]), work, keep=(r == 0))
                    times[k].append(t)
                    if r == 0:
                        digests[k] = (d, rc)
                if r == 0:
                    bad = [k for k in kinds if digests[k] != digests["native"]]
            m = {k: statistics.median(v) for k, v in times.items()}
            rq.append(m["run"] / m["qemu"])
            rb.append(m["run"] / m["bare"])
            mark = "  ! output differs: " + ",".join(bad) if bad else ""
            print(f"{n:<12} {m['native']:8.3f} {m['qemu']:8.3f} {m['bare']:8.3f} {m['run']:8.3f} {rq[-1]:8.2f}x {rb[-1]:8.2f}x{mark}", flush=True)
        g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
        print(f"{'geomean':<12} {'':8} {'':8} {'':8} {'':8} {g(rq):8.2f}x {g(rb):8.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def analyses(emuprof, progs, names, rounds, work):
    out = os.path.join(work, "out")
    cols = [("run", ["run", "-q"]), ("memhooks", ["run", "-q", "--bench-mem-hooks"])] + [
        (a, [a, "-q", "--out", out]) for a in ("trms", "paths", "parallel", "causal", "profile")]
    print(f"# {rounds} rounds, CPU s (user+sys) medians; (x) = over run")
    print(f"{'program':<12} " + " ".join(f"{c:>15}" for c, _ in cols))
    for n in names:
        times = {c: [] for c, _ in cols}
        for _ in range(rounds):
            for c, argv in cols:
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                times[c].append(cpu([emuprof] + argv + ["--"] + progs[n], work)[0])
        m = {c: statistics.median(v) for c, v in times.items()}
        cells = [f"{m['run']:15.3f}"] + [f"{m[c]:7.2f} ({m[c] / m['run']:4.1f}x)" for c, _ in cols[1:]]
        print(f"{n:<12} " + " ".join(cells), flush=True)


def against_aprof(emuprof, valgrind, names, rounds):
    probe = subprocess.run([valgrind, "--tool=aprof", "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) \
        if shutil.which(valgrind) else None
    if probe is None or probe.returncode != 0:
        sys.exit(f"bench/qemu.py --aprof: {valgrind} has no aprof tool (aprof is not packaged: "
                 "set APROF_VALGRIND to a valgrind built with it)")
    work = tempfile.mkdtemp(prefix="emuprof-aprof-")
    try:
        progs = aprof_inputs(work)
        names = names or list(progs)
        out = os.path.join(work, "out")
        kinds = {
            "native": lambda c: c,
            "aprof": lambda c: [valgrind, "--tool=aprof", "--drms=yes", "--log-dir=" + out] + c,
            "trms": lambda c: [emuprof, "trms", "-q", "--out", out, "--"] + c,
        }
        print(f"# {rounds} rounds, CPU s (user+sys) medians, {os.cpu_count()} host CPUs")
        print(f"{'program':<12} {'native':>8} {'aprof':>8} {'trms':>8} {'trms/aprof':>11}")
        ratios = []
        for n in names:
            times = {k: [] for k in kinds}
            bad = []
            for r in range(rounds):
                digests = {}
                for k, wrap in kinds.items():
                    shutil.rmtree(out, ignore_errors=True)
                    os.makedirs(out)
                    t, d, rc = cpu(wrap(progs[n]), work, keep=(r == 0))
                    times[k].append(t)
                    digests[k] = (d, rc)
                if r == 0:
                    bad = [k for k in kinds if digests[k] != digests["native"]]
            m = {k: statistics.median(v) for k, v in times.items()}
            ratios.append(m["trms"] / m["aprof"])
            mark = "  ! output differs: " + ",".join(bad) if bad else ""
            print(f"{n:<12} {m['native']:8.3f} {m['aprof']:8.3f} {m['trms']:8.3f} {ratios[-1]:10.2f}x{mark}", flush=True)
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{'geomean':<12} {'':8} {'':8} {'':8} {g:10.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
