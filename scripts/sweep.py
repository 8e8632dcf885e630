#!/usr/bin/env python3
"""Sweep of real programs: each command line runs natively and under
`emuprof run`, in a fresh directory each, and the outcome is classified:

  same      stdout, stderr and exit status equal to the native run
  differs   the program ran to its end but something differs
  stops     emuprof stopped it at a system call it does not emulate
  error     emuprof stopped with another error (its one line is shown)
  timeout   it did not finish in --timeout seconds under emuprof

The cases are the kinds of program issue 28's sweep found stopping (runtimes,
sockets, servers with clients, timers, /proc, pidfds, inotify, splice...),
plus ordinary tools as a control. Usage:

  scripts/sweep.py [--emuprof ./emuprof] [--timeout 120] [--only NAME,...]

It prints one line per case and a summary; exit status 1 when a case stops,
errors or times out. Debian's programs are used (/usr/bin first on PATH).
Output that names a pid, a port or a time is normalised by the case itself
(it prints facts, not values).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"

CASES = [
    # Runtimes.
    ("node-fs-crypto", "node -e \"const c=require('crypto');const fs=require('fs');"
     "fs.writeFileSync('x','abc');console.log(c.createHash('sha256').update(fs.readFileSync('x')).digest('hex'))\""),
    ("node-json", "node -e \"console.log(JSON.stringify(Array.from({length:5},(_, i)=>i*i)))\""),
    ("node-worker", "node -e \"const {Worker}=require('worker_threads');"
     "const w=new Worker('require(\\'worker_threads\\').parentPort.postMessage(6*7)',{eval:true});"
     "w.on('message',m=>{console.log(m)})\""),
    ("node-net", "node -e \"const net=require('net');const s=net.createServer(c=>{c.end('hi '+1)});"
     "s.listen(0,'127.0.0.1',()=>{net.connect(s.address().port,'127.0.0.1').on('data',d=>{console.log(String(d));s.close()})})\""),
    ("ruby", "ruby -e 'puts [3,1,2].sort.inspect; puts File.basename(Dir.pwd).size > 0'"),
    ("ruby-thread", "ruby -e 't=Thread.new{ 6*7 }; puts t.value'"),
    ("timeout", "timeout 1 sleep 5; echo $?"),
    ("timeout-ok", "timeout 5 true; echo $?"),
    ("nice", "nice -n 5 nice"),
    ("ps", "ps -o comm= -p $$"),
    ("go-run", "printf 'package main\\nimport (\"fmt\";\"os/exec\")\\nfunc main(){o,_:=exec.Command(\"echo\",\"hi\").Output();fmt.Print(string(o))}\\n' > m.go"
     " && HOME=$PWD GOCACHE=$PWD/c GOPATH=$PWD/p GOFLAGS=-mod=mod GO111MODULE=off go run m.go"),
    # Python: sockets, asyncio, multiprocessing.
    ("py-socketpair", PY + " -c 'import socket; a,b=socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'"),
    ("py-asyncio", PY + " -c '\nimport asyncio\nasync def h(r,w):\n w.write(await r.read(5)); await w.drain(); w.close()\n"
     "async def m():\n s=await asyncio.start_server(h,\"127.0.0.1\",0); p=s.sockets[0].getsockname()[1]\n"
     " r,w=await asyncio.open_connection(\"127.0.0.1\",p); w.write(b\"hello\"); print(await r.read(5)); s.close()\n"
     "asyncio.run(m())'"),
    ("py-mp-pool", PY + " -c '\nimport multiprocessing as mp\nif __name__==\"__main__\":\n with mp.Pool(2) as p: print(p.map(abs,[-1,-2,3]))'"),
    ("py-mp-value", PY + " -c '\nimport multiprocessing as mp\ndef f(v): v.value=42\nif __name__==\"__main__\":\n"
     " v=mp.Value(\"i\",1); p=mp.Process(target=f,args=(v,)); p.start(); p.join(); print(v.value)'"),
    ("py-http-curl", PY + " -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & "
     "for i in 1 2 3 4 5 6 7 8 9 10; do curl -s -o out http://127.0.0.1:8765/ && break; sleep 0.2; done; "
     "kill $!; wait; grep -c Directory out"),
    ("py-memfd", PY + " -c 'import os; f=os.memfd_create(\"x\"); os.write(f,b\"abc\"); os.lseek(f,0,0); print(os.read(f,3))'"),
    ("py-inotify", PY + " -c '\nimport ctypes,os,struct\nl=ctypes.CDLL(None)\nfd=l.inotify_init1(0)\nl.inotify_add_watch(fd,b\".\",0x100)\n"
     "open(\"n\",\"w\").close()\nb=os.read(fd,64)\nprint(struct.unpack(\"iIII\",b[:16])[1], b[16:].rstrip(b\"\\0\"))'"),
    ("py-splice", PY + " -c '\nimport os\nr,w=os.pipe(); open(\"f\",\"w\").write(\"spliced\")\nfd=os.open(\"f\",os.O_RDONLY)\n"
     "print(os.splice(fd,w,7)); print(os.read(r,7))'"),
    ("py-pidfd", PY + " -c '\nimport os\np=os.fork()\nif p==0: os._exit(3)\nfd=os.pidfd_open(p); print(os.waitid(os.P_PIDFD,fd,os.WEXITED).si_status)'"),
    ("py-posix-timer", PY + " -c 'import signal,time; signal.setitimer(signal.ITIMER_REAL,0.05); "
     "signal.signal(signal.SIGALRM,lambda *a: print(\"alarm\")); time.sleep(1)'"),
    ("py-proc-stat", PY + " -c 'import os; print(open(\"/proc/self/stat\").read().split()[2] in \"RS\", os.getloadavg()[0] >= 0)'"),
    ("py-capget", PY + " -c 'import ctypes; h=(ctypes.c_uint32*2)(0x20080522,0); d=(ctypes.c_uint32*6)(); "
     "print(ctypes.CDLL(None).capget(h,d), d[0] & 1)'"),  # CAP_CHOWN: the host's set varies
    ("py-shm", PY + " -c '\nfrom multiprocessing import shared_memory as s\nm=s.SharedMemory(create=True,size=16); m.buf[0]=7\n"
     "n=s.SharedMemory(m.name); print(n.buf[0]); n.close(); m.close(); m.unlink()'"),
    # Servers with their clients.
    ("redis", "redis-server --port 6390 --save '' --daemonize no >/dev/null & "
     "for i in 1 2 3 4 5 6 7 8 9 10; do redis-cli -p 6390 ping >/dev/null 2>&1 && break; sleep 0.2; done; "
     "redis-cli -p 6390 set k v; redis-cli -p 6390 get k; redis-cli -p 6390 shutdown nosave; wait"),
    ("redis-benchmark", "redis-server --port 6391 --save '' >/dev/null & "
     "for i in 1 2 3 4 5 6 7 8 9 10; do redis-cli -p 6391 ping >/dev/null 2>&1 && break; sleep 0.2; done; "
     "redis-benchmark -p 6391 -n 500 -t set -q >/dev/null; echo $?; redis-cli -p 6391 shutdown nosave; wait"),
    ("memcached", "memcached -u root -p 11299 -U 0 -l 127.0.0.1 & sleep 0.5; "
     "printf 'set k 0 0 1\\r\\nv\\r\\nget k\\r\\nquit\\r\\n' | socat - TCP:127.0.0.1:11299; kill $!; wait"),
    # chmod: nginx's workers run as nobody, and emuprof opens files with its own host rights
    # whatever the guest's ids (a 0700 directory would be a 403 natively).
    ("nginx", "chmod 755 . && mkdir -p logs html && echo page > html/index.html && "
     "printf 'daemon off; pid %s/nginx.pid; error_log %s/logs/e.log; events {} http { access_log off; "
     "client_body_temp_path %s/t; proxy_temp_path %s/t; fastcgi_temp_path %s/t; uwsgi_temp_path %s/t; scgi_temp_path %s/t; "
     "server { listen 127.0.0.1:8766; root %s/html; } }' $PWD $PWD $PWD $PWD $PWD $PWD $PWD $PWD > n.conf && "
     "(nginx -p $PWD -c $PWD/n.conf & for i in 1 2 3 4 5 6 7 8 9 10; do curl -s http://127.0.0.1:8766/ && break; sleep 0.2; done; "
     "kill $(cat nginx.pid); wait)"),
    ("socat", "socat -u TCP-LISTEN:8767,bind=127.0.0.1,reuseaddr OPEN:got,creat & sleep 0.3; "
     "echo through | socat -u - TCP:127.0.0.1:8767; wait; cat got"),
    ("gpg", "export GNUPGHOME=$PWD/g && mkdir -m 700 g && echo secret | gpg --batch -q --symmetric --passphrase p -o s.gpg "
     "&& gpg --batch -q --decrypt --passphrase p s.gpg; gpgconf --kill all"),
    # Controls: ordinary tools.
    ("sqlite3", "sqlite3 :memory: 'with recursive c(x) as (select 1 union all select x+1 from c where x<1000) select sum(x) from c'"),
    ("xz", "seq 100000 | xz -6 | xz -d | md5sum"),
    ("gzip", "seq 100000 | gzip -9 | gzip -d | md5sum"),
    ("jq", "seq 1000 | jq -s 'add'"),
    ("perl", "seq 2000 | perl -e 'print sort { $b <=> $a } <>' | head -3"),
    ("git", "git init -q r && cd r && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x && git log --format=%s"),
    ("tar", "mkdir d && seq 100 > d/f && tar cf a.tar d && tar tf a.tar"),
]


def run(cmd, cwd, timeout, prefix=()):
    env = dict(os.environ, PATH="/usr/bin:/bin:/usr/sbin:/sbin", LANG="C", LC_ALL="C", TZ="UTC")
    env.pop("PYTHONHOME", None)
    try:
        p = subprocess.run(list(prefix) + ["/bin/sh", "-c", cmd], cwd=cwd, env=env, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, b"", b""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emuprof", default="./emuprof")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    emu = os.path.abspath(a.emuprof)
    only = set(filter(None, a.only.split(",")))
    counts = {}
    bad = 0
    for name, cmd in CASES:
        if only and name not in only:
            continue
        d1, d2 = tempfile.mkdtemp(), tempfile.mkdtemp()
        try:
            n = run(cmd, d1, a.timeout)
            e = run(cmd, d2, a.timeout, (emu, "run", "--"))
        finally:
            shutil.rmtree(d1, ignore_errors=True)
            shutil.rmtree(d2, ignore_errors=True)
        err = e[2].decode(errors="replace")
        emu_lines = [l for l in err.splitlines() if l.startswith("emuprof:")]
        if e[0] is None:
            kind, why = "timeout", ""
        elif any("unsupported" in l for l in emu_lines):
            kind, why = "stops", next(l for l in emu_lines if "unsupported" in l)
        elif emu_lines and e[0] != n[0]:
            kind, why = "error", emu_lines[0]
        elif e == n:
            kind, why = "same", ""
        else:
            what = [w for w, i in (("exit status", 0), ("stdout", 1), ("stderr", 2)) if e[i] != n[i]]
            kind, why = "differs", ", ".join(what) + (f" (native {n[0]}, emuprof {e[0]})" if e[0] != n[0] else "")
        counts[kind] = counts.get(kind, 0) + 1
        bad += kind in ("stops", "error", "timeout")
        print(f"{name:18} {kind:8} {why}", flush=True)
    print("summary: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
