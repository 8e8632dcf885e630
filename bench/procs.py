#!/usr/bin/env python3
"""Process-tree benchmarks (issue 9, point 5).

  bench/procs.py fork [REPS]   the cost of a fork: python3 touching N MB then
                               forking a child that exits at once, against the
                               same program without the fork (N = 0, 100)
  bench/procs.py make [REPS]   `make -j2` of a small C project (6 gcc, 5 cc1,
                               5 as, collect2, ld) under `emuprof run`, against
                               the sum of its processes' own `emuprof run`s

Figures are CPU seconds (user+sys of emuprof and its children, best of REPS,
default 3): on a shared VM, wall time varies with steal time.

The sum of the processes: the native `make -j2` is traced (strace -f) for every
execve (path, argv, environment, in order). A program that starts no other
(cc1, as, ld) is run alone under `emuprof run` with its argv and environment,
in the traced order, so each finds the files the ones before it wrote (cc1's
/tmp/cc*.s for as). A driver (make, gcc, collect2) is run alone with its
children replaced by a stub that exits at once (make: gcc on PATH; gcc: -B;
collect2: COMPILER_PATH), and the stubs' own emulations (each measured alone)
are taken out again, so the driver's figure is its own work and its forks.
Environment: EMUPROF (default ./emuprof).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

EMUPROF = os.path.abspath(os.environ.get("EMUPROF", "./emuprof"))

SOURCES = {
    "h.h": "int f1(int);int f2(int);int f3(int);int f4(int);\n",
    "main.c": '#include <stdio.h>\n#include "h.h"\nint main(void) { printf("%d\\n", f1(3)+f2(4)+f3(5)+f4(6)); return 0; }\n',
    "Makefile": "OBJS = main.o f1.o f2.o f3.o f4.o\np: $(OBJS)\n\tgcc -o p $(OBJS)\n%.o: %.c h.h\n\tgcc -O2 -c $<\n",
}
for i in range(1, 5):
    SOURCES[f"f{i}.c"] = f'#include "h.h"\nint f{i}(int x) {{ int s = 0; for (int i = 0; i < x; i++) s += i * {i}; return s; }}\n'


def cpu(argv, cwd=None, env=None, stdin=subprocess.DEVNULL):
    """CPU seconds (user+sys) of running argv and its children."""
    pid = os.fork()
    if pid == 0:
        try:
            if cwd:
                os.chdir(cwd)
            fd = os.open(os.devnull, os.O_RDWR)
            os.dup2(fd, 0)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execve(argv[0], argv, env if env is not None else os.environ)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)[:200]}: exit {os.waitstatus_to_exitcode(status)}")
    return ru.ru_utime + ru.ru_stime


def best(reps, f):
    return min(f() for _ in range(reps))


def stats(argv, cwd=None):
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd).stderr
    m = re.search(r"(\d+) processes created, (\d+) bytes", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def fork_bench(reps):
    tmp = tempfile.mkdtemp()
    prog = os.path.join(tmp, "fk.py")
    with open(prog, "w") as f:
        f.write("import os, sys\nn = int(sys.argv[1])\nb = bytearray(n << 20)\n"
                "for i in range(0, len(b), 4096):\n    b[i] = 1\n"
                "if len(sys.argv) < 3:\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n    os.waitpid(pid, 0)\n")
    print("touched MB  copied MB  with fork s  without s  fork s")
    for n in (0, 100):
        run = [EMUPROF, "run", "--stats", "--", "/usr/bin/python3", prog, str(n)]
        _, copied = stats(run)
        w = best(reps, lambda: cpu(run))
        wo = best(reps, lambda: cpu(run[:-1] + [str(n), "nofork"]))
        print(f"{n:10d}  {copied / 2**20:9.1f}  {w:11.2f}  {wo:9.2f}  {w - wo:6.2f}")
    shutil.rmtree(tmp)


def project(d):
    for name, text in SOURCES.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)


def parse_strace(log):
    """execve records (pid, path, argv, env) in order, and the pids that fork."""
    execs, forkers, pending = [], set(), {}

    def record(pid, args):
        # strace prints C string literals: evaluate them as Python's.
        path, argv, env = eval("(" + args + ")")
        execs.append((pid, path, argv, env))

    for line in open(log):
        line = line.rstrip()
        m = re.match(r"(\d+)\s+execve\((.*)\) = 0$", line)
        if m:
            record(int(m.group(1)), m.group(2))
            continue
        m = re.match(r"(\d+)\s+execve\((.*) <unfinished \.\.\.>$", line)
        if m:
            pending[int(m.group(1))] = m.group(2)
            continue
        m = re.match(r"(\d+)\s+<\.\.\. execve resumed>\) += (\S+)", line)
        if m:
            args = pending.pop(int(m.group(1)), None)
            if args is not None and m.group(2) == "0":
                record(int(m.group(1)), args)
            continue
        m = re.match(r"(\d+)\s+(clone3?|v?fork)\(", line)
        if m:
            forkers.add(int(m.group(1)))
        m = re.match(r"(\d+)\s+<\.\.\. (clone3?|v?fork) resumed>", line)
        if m:
            forkers.add(int(m.group(1)))
    return execs, forkers


def make_bench(reps):
    if not shutil.which("strace"):
        sys.exit("strace is needed (apt-get install strace)")
    tmp = tempfile.mkdtemp()
    proj = os.path.join(tmp, "proj")
    os.mkdir(proj)
    project(proj)
    log = os.path.join(tmp, "log")
    subprocess.run(["strace", "-f", "-qq", "-v", "-s", "1000000", "-e", "trace=execve,clone,clone3,fork,vfork",
                    "-e", "signal=none", "-o", log, "make", "-j2"], cwd=proj, check=True, capture_output=True)
    execs, forkers = parse_strace(log)

    def clean():
        for f in os.listdir(proj):
            if f.endswith(".o") or f == "p":
                os.remove(os.path.join(proj, f))

    def tree():
        clean()
        return cpu([EMUPROF, "run", "--", "/usr/bin/make", "-j2"], cwd=proj)

    t_tree = best(reps, tree)
    n_procs, copied = stats([EMUPROF, "run", "--stats", "--", "/usr/bin/make", "-B", "-j2"], cwd=proj)

    stubdir = os.path.join(tmp, "stub")
    os.mkdir(stubdir)
    stub_c = os.path.join(tmp, "stub.c")
    with open(stub_c, "w") as f:
        f.write("int main(void) { return 0; }\n")
    subprocess.run(["gcc", "-static", "-O2", "-o", os.path.join(stubdir, "true"), stub_c], check=True)
    for name in ("gcc", "cc1", "as", "collect2", "ld", "real-ld"):
        os.link(os.path.join(stubdir, "true"), os.path.join(stubdir, name))
    t_stub = best(reps, lambda: cpu([EMUPROF, "run", "--", os.path.join(stubdir, "true")]))

    def envdict(env):
        return dict(e.split("=", 1) for e in env if "=" in e)

    def emu(path, argv, env):
        flags = [EMUPROF, "run", "--clear-env"]
        for k, v in env.items():
            flags += ["--env", f"{k}={v}"]
        return flags + ["--", path] + argv[1:]

    total, rows = 0.0, []
    clean()
    for pid, path, argv, env in execs:
        e = envdict(env)
        name = os.path.basename(path)
        children = 0
        if pid in forkers:  # a driver: its children become stubs
            if name == "make":
                e["PATH"] = stubdir + ":" + e.get("PATH", "")
                argv = argv + ["-B"]  # rebuild everything, like the traced run
                children = 6
            elif name == "gcc":
                argv = argv[:1] + ["-B" + stubdir + "/"] + argv[1:]
                children = 3 if "-c" in argv else 1
            elif name == "collect2":
                e["COMPILER_PATH"] = stubdir
                children = 1
            else:
                children = 1
        t = best(reps, lambda: cpu(emu(path, argv, e), cwd=proj))
        own = t - children * t_stub
        total += own
        rows.append((name, t, children, own))
    ok = "nothing: not linked"
    if os.path.exists(os.path.join(proj, "p")):
        ok = subprocess.run(["./p"], cwd=proj, capture_output=True, text=True).stdout.strip()
    print(f"make -j2 under emuprof run: {t_tree:.2f} s CPU ({n_procs} processes created, {copied / 2**20:.1f} MB copied at forks)")
    print(f"stub (a static program that exits) alone: {t_stub:.3f} s")
    print("process     alone s  stubbed children  own s")
    for name, t, ch, own in rows:
        print(f"{name:10s}  {t:7.3f}  {ch:16d}  {own:5.3f}")
    print(f"sum of the processes: {total:.2f} s; make -j2 / sum = {t_tree / total:.2f}x (the p it linked prints {ok})")
    shutil.rmtree(tmp)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("fork", "make"):
        sys.exit(__doc__)
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    (fork_bench if sys.argv[1] == "fork" else make_bench)(reps)


if __name__ == "__main__":
    main()
