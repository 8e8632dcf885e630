#!/usr/bin/env python3
"""Issue 27 point 3, the second half: does a routine's share of virtual time
match its share of the native run's CPU time? For each program of sweep.py,
the top-10 routines by self share under `emuprof parallel` (the pprof's
`work` samples: per calling context, in the model's ns) against the top-10
by self share in `perf record -e cpu-clock` of the native run (no AVX, as
sweep.py), per time model.

Routines are emuprof's (a stripped binary's unnamed routines are DSO!0xSTART,
found from call targets): perf cannot name those, so each perf entry (perf
report --sort dso,sym -v gives its DSO and an address inside it) goes to the
emuprof routine of that DSO that starts at or below the address (named
routines' starts from nm). Only the grouping is shared: the times are
perf's. Kernel samples are one entry, [kernel] (emuprof charges kernel costs
to the calling routine, so it has no such entry: the kernel's share is lost
to the overlap by construction).

overlap = |top10(emuprof) ∩ top10(perf)|; mass = Σ over routines of
min(share_emuprof, share_perf), in % (100: the same distribution);
user mass: the same with perf's shares of its user-space samples.
Usage: shares.py EMUPROF [PERF_RUNS] [MODELS] > shares.tsv (MODELS: zen4,insns)"""
import bisect, collections, os, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep import ENV, programs

GO = shutil.which("go") or "/usr/local/go/bin/go"
LIBDIRS = ["/usr/bin", "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/local/bin"]


def emuprof_shares(emuprof, cmd, model, out):
    """{routine: share} of self work, and {routine: dso basename}."""
    subprocess.run([emuprof, "parallel", "-q", "--clear-env", "--env", "LC_ALL=C", "--cpus", "2",
                    "--time-model", model, "--out", out, "--"] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    pb = [os.path.join(out, f) for f in os.listdir(out) if f.endswith("_parallel.pb.gz")]
    if len(pb) != 1:
        sys.exit(f"{cmd[0]}: want one parallel profile in {out}, have {pb}")
    top = subprocess.run([GO, "tool", "pprof", "-top", "-noinlines", "-nodefraction=0", "-nodecount=1000000",
                          "-sample_index=work", "-unit=ns", pb[0]],
                         capture_output=True, text=True, check=True).stdout
    flat, total = {}, None
    for line in top.splitlines():
        m = re.search(r"Total samples = (\d+)ns", line)
        if m:
            total = int(m.group(1))
        f = line.split(None, 5)
        if len(f) == 6 and f[0].endswith("ns") and f[1].endswith("%"):
            flat[f[5]] = flat.get(f[5], 0) + int(f[0][:-2])
    # the DSO of each function: -raw's locations name it as the file
    raw = subprocess.run([GO, "tool", "pprof", "-raw", pb[0]], capture_output=True, text=True, check=True).stdout
    dso = {}
    for line in raw.split("Locations", 1)[1].split("Mappings", 1)[0].splitlines():
        m = re.match(r"\s*\d+: 0x[0-9a-f]+ M=\d+ (.*) (\S+):\d+:\d+ s=\d+$", line)
        if m:
            dso.setdefault(m.group(1), m.group(2))
    return {k: v / total for k, v in flat.items() if v > 0}, dso


def perf_shares(cmd, runs, tmp):
    """[(share, dso path, address in it, perf's name)] averaged over runs."""
    acc = collections.defaultdict(float)
    for r in range(runs):
        data = os.path.join(tmp, f"perf{r}.data")
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000", "-o", data, "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, check=True)
        rep = subprocess.run(["perf", "report", "-v", "-i", data, "--comms", os.path.basename(cmd[0]), "--no-children",
                              "--sort", "dso,sym", "-F", "period,dso,sym", "-t", "|", "--stdio"],
                             capture_output=True, text=True, check=True).stdout
        rows = []
        for line in rep.splitlines():
            if line.startswith("#") or line.count("|") != 2:
                continue
            period, d, sym = (x.strip() for x in line.split("|"))
            # -v's sym: "0xADDR  ORIGIN [.] NAME" ([k] for the kernel)
            m = re.match(r"(0x[0-9a-f]+)\s+\S+\s+\[(.)\]\s+(.*)$", sym)
            if not m:
                continue
            rows.append((int(period), d, int(m.group(1), 16), m.group(2) == "k", m.group(3)))
        total = sum(r[0] for r in rows)
        for p, d, a, k, n in rows:
            acc[("[kernel]", 0, "[kernel]") if k else (d, a, n)] += p / total / runs
    return acc


def find(base):
    for d in LIBDIRS:
        p = os.path.join(d, base)
        if os.path.exists(p):
            return p
    return None


_syms = {}


def symbols(path):
    """{name: address} of path's defined symbols (dynsym and symtab)."""
    if path not in _syms:
        s = {}
        for flags in (["-D"], []):
            out = subprocess.run(["nm", "--defined-only"] + flags + [path], capture_output=True, text=True).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "TtWwiI":
                    s.setdefault(f[2].split("@")[0], int(f[0], 16))
        _syms[path] = s
    return _syms[path]


_loads = {}


def vaddr(path, off):
    """The ELF address of file offset off of path: perf -v gives a DSO's
    addresses as file offsets (a non-PIE python3's 0x1fd01d is 0x5fd01d),
    emuprof's names and nm as ELF addresses."""
    if path not in _loads:
        segs = []
        out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == "LOAD":
                segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # offset, vaddr, filesz
        _loads[path] = segs
    for o, v, n in _loads[path]:
        if o <= off < o + n:
            return off - o + v
    return off


def group(perf, dsos):
    """perf's shares keyed by emuprof's routine containing each address."""
    starts = collections.defaultdict(list)  # dso basename -> [(start, routine)]
    for fn, d in dsos.items():
        # emuprof names a DSO as it was opened (python3), perf by its
        # file (python3.11): key both by the file
        p = find(d)
        real = os.path.basename(os.path.realpath(p)) if p else d
        m = re.match(r"(.*)!0x([0-9a-f]+)$", fn)
        if m:
            starts[real].append((int(m.group(2), 16), fn))
        elif p and fn in symbols(p):
            starts[real].append((symbols(p)[fn], fn))
    for v in starts.values():
        v.sort()
    out = collections.defaultdict(float)
    for (d, a, n), s in perf.items():
        if d == "[kernel]":
            out["[kernel]"] += s
            continue
        st = starts.get(os.path.basename(os.path.realpath(d)), [])
        a = vaddr(d, a) if os.path.exists(d) else a
        i = bisect.bisect_right(st, (a, "\U0010ffff")) - 1
        out[st[i][1] if i >= 0 else f"{os.path.basename(d)}!{n}"] += s
    return out


def top(shares, n=10):
    return [k for k, _ in sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def main():
    emuprof = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    models = (sys.argv[3] if len(sys.argv) > 3 else "zen4,insns").split(",")
    tmp = tempfile.mkdtemp()
    detail = os.environ.get("SHARES_DETAIL")  # a file for the per-routine lists
    dout = open(detail, "w") if detail else None
    print("program\tmodel\toverlap\tmass_pct\tkernel_pct\tuser_mass_pct\temuprof_top3\tperf_top3")
    only = os.environ.get("SHARES_ONLY", "").split(",")  # a subset of the programs
    for name, cmd in programs(tmp):
        if only != [""] and name not in only:
            continue
        perf = perf_shares(cmd, runs, tmp)
        for model in models:
            out = os.path.join(tmp, f"{name}-{model}")
            emu, dsos = emuprof_shares(emuprof, cmd, model, out)
            nat = group(perf, dsos)
            te, tn = top(emu), top(nat)
            overlap = len(set(te) & set(tn))
            mass = sum(min(s, nat.get(k, 0)) for k, s in emu.items())
            # the same with perf's user-space samples only (renormalized)
            user = 1 - nat.get("[kernel]", 0)
            umass = sum(min(s, nat.get(k, 0) / user) for k, s in emu.items())
            fmt = lambda ks, sh: ", ".join(f"{k} {100*sh.get(k, 0):.0f}" for k in ks[:3])
            print(f"{name}\t{model}\t{overlap}\t{100*mass:.1f}\t{100*nat.get('[kernel]', 0):.1f}\t{100*umass:.1f}\t{fmt(te, emu)}\t{fmt(tn, nat)}",
                  flush=True)
            if dout:
                print(f"## {name} {model}", file=dout)
                for k in sorted(set(te) | set(tn), key=lambda k: -max(emu.get(k, 0), nat.get(k, 0))):
                    print(f"{100*emu.get(k, 0):6.2f} {100*nat.get(k, 0):6.2f}  {k}", file=dout)
                dout.flush()
            shutil.rmtree(out)


if __name__ == "__main__":
    main()
