#!/usr/bin/env python3
"""Malformed-ELF campaign: mutate the static hello guest's headers at random
(program header fields, ELF header bytes, truncation), run each mutant
natively and under `emuprof run`, and count how often the two agree (same
exit status, where Linux refuses execve emuprof exits 2; same stdout when
the program ran). Deterministic for a seed.

    scripts/elf-campaign.py ./emuprof [SEED [COUNT]]
"""
import os
import random
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def status(cmd, cwd):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    except OSError:
        return 2, b""  # execve refused it: emuprof says so with exit 2
    return (128 - p.returncode if p.returncode < 0 else p.returncode), p.stdout


def mutate(rng, base):
    b = bytearray(base)
    phoff, = struct.unpack_from("<Q", base, 32)
    phnum, = struct.unpack_from("<H", base, 56)
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.6:  # a program header field
            field = rng.choice([0, 4, 8, 16, 32, 40, 48])
            o = phoff + 56 * rng.randrange(phnum) + field
            fmt = "<I" if field in (0, 4) else "<Q"
            bits = 32 if fmt == "<I" else 64
            old, = struct.unpack_from(fmt, b, o)
            v = rng.choice([0, 1, 0x1000, 0xFFFFFFFF, rng.getrandbits(bits), old ^ (1 << rng.randrange(bits))])
            struct.pack_into(fmt, b, o, v & ((1 << bits) - 1))
        elif kind < 0.8:  # an ELF header byte
            b[rng.randrange(64)] = rng.getrandbits(8)
        else:  # truncation
            b = b[: rng.randrange(64, len(b))]
    return bytes(b)


def main():
    emuprof = os.path.abspath(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    base = open(os.path.join(HERE, "..", "testdata", "bin", "glibc-static", "hello"), "rb").read()
    rng = random.Random(seed)
    differ = []
    with tempfile.TemporaryDirectory() as d:
        for i in range(count):
            name = f"m{i}"
            path = os.path.join(d, name)
            with open(path, "wb") as f:
                f.write(mutate(rng, base))
            os.chmod(path, 0o755)
            native, nout = status(["./" + name], d)
            native = 2 if native == 126 else native
            emu, eout = status([emuprof, "run", "--", "./" + name], d)
            if native != emu or (native == 0 and nout != eout):
                differ.append((name, native, emu))
    print(f"seed {seed}: {count - len(differ)} of {count} agree with native")
    for name, n, e in differ:
        print(f"  {name}: native {n}, emuprof {e}")


if __name__ == "__main__":
    main()
