#!/usr/bin/env python3
"""Stop-signal campaign: start `emuprof profile` of a guest, send SIGINT,
SIGTERM or SIGHUP at a random moment (from emuprof's first initializer,
seen as its handler in /proc/PID/status, to after the last file), and check
the documented outcome every time: exit status 128+signal (or 0 when
emuprof had ended), never killed by the signal, no Go trace, every profile of a complete run written
and whole, no temporary file left. Random per seed; the moments are wall
time, so which phase each hits varies, the verdict must not.

    scripts/signal-campaign.py ./emuprof [SEED [COUNT [MAX_MS [PROGRAM]]]]

PROGRAM is the guest (default testdata/bin/glibc-static/hello; the
dynamic one's ld.so runs before main: testdata/bin/glibc-dynamic/hello).
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIGS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def handler_installed(pid, sig):
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(r"SigCgt:\s*([0-9a-f]+)", f.read())
    except OSError:
        return True  # gone: nothing to wait for
    return bool(int(m.group(1), 16) & (1 << (sig - 1)))


def whole(path):
    data = open(path, "rb").read()
    if path.endswith(".json"):
        try:
            json.loads(data)
        except ValueError:
            return False
    if path.endswith(".html"):
        return data.rstrip().endswith(b"</html>")
    if path.endswith(".aprof"):
        return data.rstrip().splitlines()[-1].startswith(b"c end of report")
    return True


def main():
    emuprof = os.path.abspath(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    max_ms = float(sys.argv[4]) if len(sys.argv) > 4 else 400
    prog = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else os.path.join(HERE, "..", "testdata", "bin", "glibc-static", "hello")
    rng = random.Random(seed)
    bad, phases = [], {"guest stopped": 0, "after the guest": 0, "after emuprof": 0}
    with tempfile.TemporaryDirectory() as d:
        ref = os.path.join(d, "ref")
        subprocess.run([emuprof, "profile", "--out", ref, "--", prog], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        want = sorted(os.listdir(ref))
        for i in range(count):
            sig = rng.choice(SIGS)
            # Half the moments in the first 5 ms (runtime and package
            # start, flags, loading), the rest anywhere up to max_ms.
            delay = rng.uniform(0, 5) if rng.random() < 0.5 else rng.uniform(0, max_ms)
            out = os.path.join(d, str(i))
            p = subprocess.Popen([emuprof, "profile", "--out", out, "--", prog], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            while not handler_installed(p.pid, sig):
                time.sleep(0.00001)
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < delay / 1000:
                pass
            p.send_signal(sig)
            _, err = p.communicate()
            err = err.decode(errors="replace")
            code = p.returncode
            what = f"{i}: {signal.Signals(sig).name} at {delay:.2f} ms"
            files = sorted(os.listdir(out)) if os.path.isdir(out) else []
            if code < 0:
                bad.append(f"{what}: killed by {signal.Signals(-code).name}, files {files}")
            elif code not in (128 + sig, 0) or "goroutine " in err or "panic:" in err:
                bad.append(f"{what}: exit {code}: {err.strip()[:200]}")
            elif files != want or not all(whole(os.path.join(out, f)) for f in files):
                bad.append(f"{what}: files {files}")
            else:
                run = json.load(open(os.path.join(out, [f for f in files if f.endswith("_run.json")][0])))
                phases["guest stopped" if run.get("partial") else "after the guest" if code else "after emuprof"] += 1
    print(f"seed {seed}: {count - len(bad)} of {count} signals gave the documented outcome; moments hit: {phases}")
    for b in bad:
        print("  " + b)


if __name__ == "__main__":
    main()
