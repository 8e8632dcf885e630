#!/usr/bin/env python3
"""Issue 27 point 3: does virtual duration track native CPU time over real
programs? Runs each Debian program natively (CPU time from wait4, median of
RUNS, the emulated CPU's code paths as native.py) and under emuprof run
--stats with each model, and prints the virtual/native ratio per program and
the Pearson correlation of log(virtual) with log(native) per model.
Usage: sweep.py EMUPROF [RUNS] > sweep.tsv"""
import math, os, statistics, subprocess, sys, tempfile

ENV = dict(os.environ, GLIBC_TUNABLES="glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-FMA4,-AVX512F", LC_ALL="C")


def programs(tmp):
    """The sweep's programs as (name, argv), their inputs written to tmp
    (shares.py runs the same ones)."""
    text = os.path.join(tmp, "words.txt")
    with open(text, "w") as f:  # 1 MB of deterministic words
        x = 1
        for i in range(150000):
            x = (x * 1103515245 + 12345) % 2**31
            f.write("w%d %d\n" % (x % 5000, i))
    sql = os.path.join(tmp, "q.sql")
    with open(sql, "w") as f:
        f.write("create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<60000) "
                "insert into t select x, x*7%1000 from c; select b, count(*), sum(a) from t group by b order by 2 desc limit 3;\n")
    return [
        ("gzip", ["/usr/bin/gzip", "-c", text]),
        ("bzip2", ["/usr/bin/bzip2", "-c", text]),
        ("xz", ["/usr/bin/xz", "-1", "-c", text]),
        ("zstd", ["/usr/bin/zstd", "-c", "-q", text]),
        ("sort", ["/usr/bin/sort", text]),
        ("sqlite3", ["/usr/bin/sqlite3", ":memory:", ".read " + sql]),
        ("perl", ["/usr/bin/perl", "-e", "my %h; $h{$_ % 1000} += $_ for 1..300000; print scalar(keys %h), \"\\n\""]),
        ("python3", ["/usr/bin/python3", "-S", "-c", "print(sum(i*i % 7 for i in range(300000)))"]),
    ]


def native(cmd):
    v = []
    for _ in range(runs):
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=ENV)
        _, st, ru = os.wait4(p.pid, 0)
        v.append(ru.ru_utime + ru.ru_stime)
    return statistics.median(v)

def virtual(cmd, model):
    r = subprocess.run([emuprof, "run", "-q", "--stats", "--cpus", "2", "--time-model", model, "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in r.stderr.splitlines():
        if line.startswith("emuprof: virtual duration "):
            return int(line.split()[3]) / 1e9
    sys.exit(f"{cmd[0]}: no virtual duration: {r.stderr[-300:]}")

def pearson(a, b):
    ma, mb = statistics.mean(a), statistics.mean(b)
    num = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    return num / math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))

def main():
    global emuprof, runs
    emuprof = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rows = []
    print("program\tnative_ms\tinsns_ms\tzen4_ms\tinsns/native\tzen4/native")
    for name, cmd in programs(tempfile.mkdtemp()):
        n, i, z = native(cmd), virtual(cmd, "insns"), virtual(cmd, "zen4")
        rows.append((n, i, z))
        print(f"{name}\t{n*1e3:.1f}\t{i*1e3:.1f}\t{z*1e3:.1f}\t{i/n:.2f}\t{z/n:.2f}", flush=True)
    for k, model in ((1, "insns"), (2, "zen4")):
        r = pearson([math.log(x[0]) for x in rows], [math.log(x[k]) for x in rows])
        ratios = [x[k] / x[0] for x in rows]
        print(f"# {model}: correlation of log durations {r:.3f}; virtual/native from {min(ratios):.2f} to {max(ratios):.2f}")


if __name__ == "__main__":
    main()
