#!/usr/bin/env python3
"""Mutation pass over emuprof's core rules (docs/TESTING.md).

Each mutant is a plausible one-line bug: a snippet of code, its
replacement, the go test command that should catch it, and a name. The
snippet is looked up by content in the repository's non-test sources (not
by path and line, so code may move between files and packages): found in
no file, or more than once, the mutant is "stale" and is not run. A found
mutant is applied in a scratch copy of the tree (never the working tree),
its test runs, and the table says whether the tests killed it (a test
failed), it survived (they passed), or it does not build ("invalid");
a mutant listed with the reason it is equivalent (no behaviour tells it
apart) and that survives is "equivalent".
Before the mutants, each distinct test command runs once unmutated: a
command that fails there makes its mutants "baseline-fail".

Usage: scripts/mutate.py [--only NAME[,NAME...]] [--list] [--keep]
                         [--timeout SECONDS] [--markdown]
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# (name, snippet, replacement, test command: go test arguments after
# -count=1[, why the mutant is equivalent: no test can kill it])
MUTANTS = [
    # --- scheduler (sched/)
    ("sched-tie-least-work", "if t.RunNs < best.RunNs {", "if t.RunNs > best.RunNs {", "./sched"),
    ("sched-timeout-at-clock", "return max(t.Clock, t.Wait.Deadline), true", "return t.Clock, true", "./sched"),
    ("sched-futex-timeout-result", "result = -ETIMEDOUT", "result = 0", "./sched"),
    ("sched-cpu-best-fit", "if f <= t.Clock && (fit < 0 || f > s.cpuFree[fit]) {",
     "if f <= t.Clock && (fit < 0 || f < s.cpuFree[fit]) {", "./sched"),
    ("sched-charge-ignores-busy-cpu", "start := max(t.Clock, s.cpuFree[c])", "start := t.Clock", "./sched"),
    ("sched-seeded-quantum-range", "return lo + s.quantumRNG.bounded(2*q-lo+1)",
     "return lo + s.quantumRNG.bounded(q-lo+1)", "./sched"),
    # --- call tracking (analyses/calls)
    ("calls-tailcall-cond-jump", "case trace.EndJump, trace.EndCond:", "case trace.EndJump:", "./analyses/calls"),
    ("calls-call-next-pop", "if ev.Addr != s.prevNext && !again {", "if !again {", "./analyses/calls"),
    ("calls-tailcall-keeps-entry-sp", "ret, entrySP := top.ret, top.sp", "ret, entrySP := top.ret, sp",
     "./analyses/calls"),
    ("calls-unwind-root", "for len(s.frames) > 1 && s.frames[len(s.frames)-1].sp < sp {",
     "for len(s.frames) > 0 && s.frames[len(s.frames)-1].sp < sp {", "./analyses/calls"),
    # --- trms: RMS and TRMS counting
    ("trms-first-access", "if old < top.ts { // first access", "if old <= top.ts { // first access", "./analyses/trms"),
    ("trms-ancestor-rms", "th.stack[i].rms--", "th.stack[i].rms -= 0", "./analyses/trms"),
    ("trms-ancestor-trms", "th.stack[i].trms--", "th.stack[i].trms -= 0", "./analyses/trms"),
    ("trms-parent-partial", "p.rms += f.rms", "p.rms += 0", "./analyses/trms"),
    ("trms-kernel-write-external", "wc.ext[idx>>6] |= 1 << (idx & 63)", "wc.ext[idx>>6] |= 0", "./analyses/trms"),
    ("trms-induced-not-first", "} else if old < w { // Fig. 11 lines 1-2", "} else if false {", "./analyses/trms"),
    # trms's .aprof writer, checked against aprof's format without our reader
    ("aprof-self-min-max-order", "t.RealSum, t.SelfSum, t.SelfMin, t.SelfMax, t.SelfSumSq)",
     "t.RealSum, t.SelfSum, t.SelfMax, t.SelfMin, t.SelfSumSq)", "./cmd/emuprof -run TestAprofFormatInvariants"),
    ("aprof-drms-rms-sum-is-input", "t.RMSSum, t.RMSSumSq, t.ExtSum", "t.N, t.RMSSumSq, t.ExtSum",
     "./cmd/emuprof -run TestAprofFormatInvariants"),
    # --- paths: Ball-Larus numbering and the P3 merge
    ("paths-bl-edge-value", "n.Val[ei] = np", "n.Val[ei] = 0", "./analyses/paths"),
    ("paths-bl-overflow-bound", "if c != 0 || np >= MaxPaths {", "if c != 0 {", "./analyses/paths"),
    ("p3-owner-divergence", "if e.count != 0 && e.count != n {", "if false {", "./analyses/paths"),
    ("p3-copy-divergence", "case e.count != 0 && e.count != n:", "case false:", "./analyses/paths",
     "equivalent on the plans PlanP3 builds in the tests: a path is counted by two copies at most, the one"
     " that does not own it first, so the owner's check sees every difference"),
    ("p3-unowned-path", "if !e.owned {", "if false {", "./analyses/paths"),
    # --- causal: delays and experiment windows
    ("causal-thread-inherits-count", "t.local = par.local // inherits",
     "t.local = max(p.global, par.local) // inherits",
     "./analyses/causal"),
    ("causal-own-share", "t.local += cost * int64(e.speedup)", "t.local += cost", "./analyses/causal"),
    ("causal-wake-credit", "t.local = p.global - max(t.blockEnd-ev.Time*scale, 0)", "t.local = p.global",
     "./analyses/causal"),
    ("causal-remainder-owed", "t.local += owed * scale", "t.local = p.global", "./analyses/causal"),
    ("causal-effective-window", "return now - m.t - (p.global-m.global)/scale", "return now - m.t",
     "./analyses/causal"),
    ("coz-duration-with-delays", "jsonString(x.Line), sp, x.Duration, x.Selected)",
     "jsonString(x.Line), sp, x.Elapsed, x.Selected)", "./cmd/emuprof -run TestCausalCozViewer$"),
    # --- parallel: work, idleness, overhead
    ("parallel-idle-cores", "s.ni = n - s.nw", "s.ni = n", "./analyses/parallel"),
    ("parallel-unattributed-idle", "a.unattr += int64(s.ni) * (s.end - s.start)", "a.unattr += int64(s.ni)",
     "./analyses/parallel"),
    ("parallel-runtime-overhead", "if spinning || runtime {", "if spinning {", "./analyses/parallel"),
    ("parallel-idleness-weight", "st.idle[s.nw] += int64(s.ni) * o", "st.idle[s.nw] += o", "./analyses/parallel"),
    # --- callgrind: inclusive cost
    ("callgrind-inclusive-ir", "e.ir += t.ir - f.ir", "e.ir += t.ir", "./analyses/callgrind"),
    ("callgrind-call-count", "e.calls++", "e.calls += 2", "./analyses/callgrind"),
    # --- syscalls: offsets, errnos, iovecs, seeks, big transfers
    ("stat-size-offset", "le.PutUint64(b[48:], uint64(st.size))", "le.PutUint64(b[40:], uint64(st.size))",
     "./syscalls"),
    ("statx-time-offsets", "}{{64, st.atime}, {96, st.ctime}, {112, st.mtime}} {",
     "}{{64, st.atime}, {112, st.ctime}, {96, st.mtime}} {", "./syscalls"),
    ("seek-hole-valid", "\t\t\t\treturn fail(eNXIO)\n\t\t\t}\n\t\t\tn = st.size\n",
     "\t\t\t\treturn fail(eNXIO)\n\t\t\t}\n\t\t\tn = off\n", "./syscalls"),
    ("seek-data-at-end", "case seekData:\n\t\t\tif off < 0 || off >= st.size {",
     "case seekData:\n\t\t\tif off < 0 || off > st.size {", "./syscalls"),
    ("lseek-opath-ebadf", "\tif f.flags&oPATH != 0 {\n\t\treturn fail(eBADF)\n\t}\n\tif !f.ops.seekable() {",
     "\tif !f.ops.seekable() {", "./syscalls"),
    ("pread-rereads-first-chunk", "p := offsetAfter(pos, done)\n\t\tn, e := k.fileRead(f, buf, p)",
     "p := offsetAfter(pos, 0)\n\t\tn, e := k.fileRead(f, buf, p)", "./syscalls"),
    ("pwrite-rewrites-first-chunk", "p := offsetAfter(pos, done)\n\t\tn, e := k.fileWrite(f, buf, p)",
     "p := offsetAfter(pos, 0)\n\t\tn, e := k.fileWrite(f, buf, p)", "./syscalls"),
    ("read-stops-at-one-chunk", "if n < len(buf) || !fills(f.ops) {", "if true {", "./syscalls"),
    ("preadv-offset", "k.readToGuest(f, v.base, v.len, offsetAfter(pos, done))",
     "k.readToGuest(f, v.base, v.len, offsetAfter(pos, 0))", "./syscalls"),
    ("pwritev-offset", "p := offsetAfter(pos, done)\n\t\tn, e := k.writeFromGuest(f, v.base, v.len, p)",
     "p := offsetAfter(pos, 0)\n\t\tn, e := k.writeFromGuest(f, v.base, v.len, p)", "./syscalls"),
    ("iovec-negative-length", "if int64(iov[i].len) < 0 {", "if false {", "./syscalls"),
    ("iovec-bad-base-efault", "if !accessOK(iov[i].base, iov[i].len) {", "if false {", "./syscalls"),
    ("pread-negative-offset", "if int64(a) < 0 {", "if false {", "./syscalls"),
    ("readv-write-only-ebadf", "if write && !f.writable() || !write && !f.readable() {",
     "if write && !f.writable() {", "./syscalls"),
    ("copyout-partial-efault", "\tif n < uint64(len(p)) {\n\t\treturn eFAULT", "\tif false {\n\t\treturn eFAULT",
     "./syscalls"),
    # --- loader: auxv and load bias (the kernel's relocation of an ET_DYN)
    ("loader-phdr-bias", "Phdr:     exe.PhdrVaddr + bias,", "Phdr:     exe.PhdrVaddr,", "./loader"),
    ("loader-brk-bias", "BrkStart: hi + bias,", "BrkStart: hi,", "./loader"),
    ("auxv-entry-is-program", "{atEntry, l.ExeEntry},", "{atEntry, l.Entry},", "./loader"),
    ("auxv-base-interp", "{atBase, l.InterpBase},", "{atBase, 0},", "./loader"),
]

SOURCE_EXT = (".go", ".c", ".h")
SKIP_DIRS = {".git", "testdata", "node_modules"}


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sources(root):
    """Yields the non-test source files of the tree, relative to root."""
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for f in sorted(files):
            if f.endswith(SOURCE_EXT) and not f.endswith("_test.go"):
                yield os.path.relpath(os.path.join(d, f), root)


def locate(root, snippet, texts):
    """Returns the one file holding snippet once, or None (stale) with why."""
    hits = [(p, t.count(snippet)) for p, t in texts.items() if snippet in t]
    total = sum(n for _, n in hits)
    if total == 1:
        return hits[0][0], ""
    if total == 0:
        return None, "not found"
    return None, "found %d times in %s" % (total, ", ".join(p for p, _ in hits))


def failed_tests(output):
    names = re.findall(r"^\s*--- FAIL: (\S+)", output, re.M)
    top = []
    for n in names:
        t = n.split("/")[0]
        if t not in top:
            top.append(t)
    if not top and "panic:" in output:
        top.append("panic")
    return top


def run_test(tree, cmd, timeout):
    """Runs go test cmd in tree: returns (status, detail)."""
    args = ["go", "test", "-count=1", "-timeout", "%ds" % timeout] + shlex.split(cmd)
    env = dict(os.environ, GOFLAGS=os.environ.get("GOFLAGS", ""))
    try:
        r = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout + 120)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    out = r.stdout + r.stderr
    if r.returncode == 0:
        return "pass", ""
    if "[build failed]" in out or "[setup failed]" in out or re.search(r"^# emuprof", out, re.M):
        return "build", out.strip().splitlines()[-1] if out.strip() else ""
    return "fail", ",".join(failed_tests(out)) or out.strip().splitlines()[-1]


def scratch_copy(root):
    tmp = tempfile.mkdtemp(prefix="emuprof-mutate-")
    tree = os.path.join(tmp, "tree")
    shutil.copytree(root, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    return tmp, tree


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated mutant names to run")
    ap.add_argument("--list", action="store_true", help="locate the snippets, run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy")
    ap.add_argument("--timeout", type=int, default=900, help="go test -timeout per run, seconds")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    a = ap.parse_args()

    names = [m[0] for m in MUTANTS]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit("mutate.py: duplicate mutant names: %s" % ", ".join(sorted(dup)))
    chosen = MUTANTS
    if a.only:
        want = a.only.split(",")
        unknown = [n for n in want if n not in names]
        if unknown:
            sys.exit("mutate.py: no mutant named %s" % ", ".join(unknown))
        chosen = [m for m in MUTANTS if m[0] in want]

    root = repo_root()
    texts = {}
    for p in sources(root):
        with open(os.path.join(root, p), encoding="utf-8", errors="surrogateescape") as f:
            texts[p] = f.read()

    rows = []  # name, file, result, detail
    todo = []
    equivalent = {m[0]: m[4] for m in MUTANTS if len(m) > 4}
    for name, snippet, repl, cmd, *_ in chosen:
        path, why = locate(root, snippet, texts)
        if path is None:
            rows.append([name, "-", "stale", why])
        else:
            rows.append([name, path, "found" if a.list else "", cmd])
            todo.append((len(rows) - 1, path, snippet, repl, cmd))

    if not a.list and todo:
        tmp, tree = scratch_copy(root)
        try:
            baseline = {}
            for cmd in sorted({t[4] for t in todo}):
                baseline[cmd] = run_test(tree, cmd, a.timeout)
                print("baseline %-22s %s %s" % (cmd, *baseline[cmd]), file=sys.stderr, flush=True)
            for i, path, snippet, repl, cmd in todo:
                if baseline[cmd][0] != "pass":
                    rows[i][2:] = ["baseline-fail", cmd]
                    continue
                target = os.path.join(tree, path)
                original = texts[path]
                with open(target, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(original.replace(snippet, repl, 1))
                t0 = time.time()
                try:
                    status, detail = run_test(tree, cmd, a.timeout)
                finally:
                    with open(target, "w", encoding="utf-8", errors="surrogateescape") as f:
                        f.write(original)
                result = {"pass": "survived", "fail": "killed", "timeout": "killed (timeout)",
                          "build": "invalid"}[status]
                rows[i][2:] = [result, detail if status != "pass" else cmd]
                if status == "pass" and rows[i][0] in equivalent:
                    rows[i][2:] = ["equivalent", equivalent[rows[i][0]]]
                print("%-32s %-9s %s (%.0fs)" % (rows[i][0], rows[i][2], rows[i][3], time.time() - t0),
                      file=sys.stderr, flush=True)
        finally:
            if a.keep:
                print("scratch copy kept: %s" % tree, file=sys.stderr)
            else:
                shutil.rmtree(tmp, ignore_errors=True)

    if a.markdown:
        print("| mutant | file | result | by (test, or the command it survived) |")
        print("|---|---|---|---|")
        for r in rows:
            print("| %s | %s | %s | %s |" % tuple(x.replace("|", "\\|") for x in r))
    else:
        w = max(len(r[0]) for r in rows)
        for r in rows:
            print("%-*s  %-9s  %-32s  %s" % (w, r[0], r[2], r[1], r[3]))
    counts = {}
    for r in rows:
        counts[r[2]] = counts.get(r[2], 0) + 1
    print("\n" + ", ".join("%s %d" % kv for kv in sorted(counts.items())), file=sys.stderr)
    return 1 if counts.get("survived") else 0


if __name__ == "__main__":
    sys.exit(main())
