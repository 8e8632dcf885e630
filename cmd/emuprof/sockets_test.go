package main

// Sockets between the processes of one run (issue 28): the C guest in every
// flavour and real programs (python3's socketpair and asyncio, http.server
// with curl) give what they give natively, and a server with its client is
// as deterministic as any other run.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"emuprof/analyses/trms"
)

func TestSocketsMatchNative(t *testing.T) {
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			work := t.TempDir()
			compare(t, nil, work, guestBin(t, v, "sockets"), work)
		})
	}
}

// pySockets are python3 scripts using sockets; each prints what it saw.
var pySockets = map[string]string{
	"socketpair": `
import socket, os
a, b = socket.socketpair()
a.sendall(b"x" * 100000)
a.shutdown(socket.SHUT_WR)
got = b""
while True:
    d = b.recv(65536)
    if not d:
        break
    got += d
print(len(got), a.family, a.type)
pid = os.fork()
if pid == 0:
    b.sendall(b"from the child")
    os._exit(7)
print(a.recv(100), os.waitpid(pid, 0)[1] >> 8)
print(socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM))
`,
	"asyncio echo": `
import asyncio
async def handle(r, w):
    while line := await r.readline():
        w.write(line.upper())
        await w.drain()
    w.close()
async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    r, w = await asyncio.open_connection("localhost", port)
    for i in range(5):
        w.write(b"line %d\n" % i)
        await w.drain()
        print((await r.readline()).decode().strip())
    w.close()
    await w.wait_closed()
    srv.close()
    await srv.wait_closed()
    print("done", 32768 <= port <= 60999)
asyncio.run(main())
`,
}

func TestPythonSocketsMatchNative(t *testing.T) {
	for _, name := range []string{"socketpair", "asyncio echo"} {
		t.Run(name, func(t *testing.T) {
			compare(t, nil, t.TempDir(), "/usr/bin/python3", "-c", pySockets[name])
		})
	}
}

// httpServerScript serves dir with python3's http.server and fetches a
// page with curl, retrying while the server starts.
const httpServerScript = `/usr/bin/python3 -m http.server --bind 127.0.0.1 48263 >/dev/null 2>&1 & pid=$!
for i in 1 2 3 4 5 6 7 8 9 10; do /usr/bin/curl -s http://127.0.0.1:48263/index.html && break; sleep 1; done
exec 2>/dev/null # whether sh reports the kill natively depends on timing
kill $pid; wait $pid; echo "server exit $?"`

func TestHTTPServerWithCurl(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>hello from http.server</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/usr/bin/python3", "/usr/bin/curl"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s missing: make deps installs it", p)
		}
	}
	out := compare(t, nil, dir, "/bin/sh", "-c", httpServerScript)
	if out.stdout != "<p>hello from http.server</p>\nserver exit 143\n" {
		t.Errorf("stdout %q", out.stdout)
	}
	// Two runs of the server and its client are the same run.
	a := digestOf(t, run(t, nil, dir, emuprofBin, append(emuArgs("--trace-digest"), "/bin/sh", "-c", httpServerScript)...))
	b := digestOf(t, run(t, nil, dir, emuprofBin, append(emuArgs("--trace-digest"), "/bin/sh", "-c", httpServerScript)...))
	if a != b {
		t.Errorf("trace digests differ: %s and %s", a, b)
	}
}

// The emulated machine has one interface, lo: getaddrinfo's AI_ADDRCONFIG
// (which asks NETLINK_ROUTE) and if_nameindex answer as Linux does in a
// network namespace where lo is all there is, which is where the native
// run is made.
func TestLoopbackOnlyNetlink(t *testing.T) {
	script := `
import socket
for fam in (0, socket.AF_INET, socket.AF_INET6):
    try:
        print(fam, sorted(set(a[4][0] for a in socket.getaddrinfo("localhost", 80, fam, socket.SOCK_STREAM, 0, socket.AI_ADDRCONFIG))))
    except socket.gaierror as e:
        print(fam, "error", e.errno)
print(socket.if_nameindex())
`
	dir := t.TempDir()
	native := run(t, nil, dir, "/usr/bin/unshare", "-rn", "/bin/sh", "-c", `/usr/sbin/ip link set lo up && exec "$0" "$@"`, "/usr/bin/python3", "-c", script)
	if native.code != 0 {
		t.Fatalf("native run in a network namespace: exit %d: %s (unshare needs user namespaces)", native.code, native.stderr)
	}
	emu := run(t, nil, dir, emuprofBin, append(emuArgs(), "/usr/bin/python3", "-c", script)...)
	if emu.stdout != native.stdout || emu.code != 0 {
		t.Errorf("emu (exit %d) %q\nnative %q\nemu stderr %s", emu.code, emu.stdout, native.stdout, emu.stderr)
	}
	if !strings.Contains(emu.stdout, "[(1, 'lo')]") {
		t.Errorf("if_nameindex: %q", emu.stdout)
	}
}

// A server's request handler reads each request through a 16-byte buffer:
// its RMS stays that buffer, its TRMS grows with the request size, all of
// it external input (the kernel's stores of what the client sent).
func TestTRMSServerHandlerGrowsWithRequest(t *testing.T) {
	dir := t.TempDir()
	prog := guestBin(t, "glibc-static", "sockserver")
	out := run(t, nil, dir, emuprofBin, "trms", "--out", dir, "--clear-env", "--", prog, "8", "256")
	if out.code != 0 || !strings.Contains(out.stdout, "client exit 0") {
		t.Fatalf("emuprof trms sockserver: exit %d\n%s\n%s", out.code, out.stdout, out.stderr)
	}
	read := func(kind string) *trms.Report {
		paths, _ := filepath.Glob(filepath.Join(dir, "sockserver_1000_*_"+kind+".aprof"))
		if len(paths) != 1 {
			t.Fatalf("the server's %s report: %v", kind, paths)
		}
		r, err := trms.ReadReportFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	rms, drms := points(t, read("rms"), "handle_request"), points(t, read("drms"), "handle_request")
	if len(rms) != 1 {
		t.Errorf("handle_request RMS tuples %v: want one size (the buffer)", rms)
	}
	if len(drms) != 8 {
		t.Fatalf("handle_request TRMS tuples %v: want one per request size", drms)
	}
	for i := 1; i < len(drms); i++ {
		// 256 more bytes per request: 64 more 4-byte cells, all external.
		if g := drms[i].N - drms[i-1].N; g < 60 || g > 68 {
			t.Errorf("TRMS %d -> %d: want +64 cells per 256 bytes", drms[i-1].N, drms[i].N)
		}
		if g := drms[i].ExtSum - drms[i-1].ExtSum; g < 60 {
			t.Errorf("external input %d -> %d: want it to grow with the request", drms[i-1].ExtSum, drms[i].ExtSum)
		}
	}
}

// Profiling a server with its client in one run: the latency of the
// requests (request_begin to request_end, Little's law) responds to a
// speedup of the handler's checksum loop, and nothing else the server does
// matters as much.
func TestCausalLatencyOfAServer(t *testing.T) {
	prog := guestBin(t, "glibc-static", "sockserver")
	r := runCausal(t, []string{"--exact", "--follow", "none", "--latency", "request_begin,request_end"}, prog, "50", "64")
	if len(r.prof.Lines) == 0 || !strings.HasSuffix(r.prof.Lines[0].Line, "sockserver.c:55") {
		t.Fatalf("lines %+v: want the handler's checksum loop (sockserver.c:55) first", r.prof.Lines)
	}
	c := curve(t, r.prof, "sockserver.c:55")
	if c[100] < 0.3 || c[5] <= 0 {
		t.Errorf("handler loop's predicted speedups %v: want > 0 at 5 %% and > 30 %% at 100 %%", c)
	}
	if !strings.Contains(r.coz, `"type":"latency-point","name":"request_begin,request_end","arrivals":50,"departures":50`) {
		t.Errorf("profile.coz has no latency point with the 50 requests:\n%.600s", r.coz)
	}
}

// parallel charges the server's waits to where it waits for requests: the
// read of each request's header in main (and the accept), not the handler.
func TestParallelServerWaitsForRequests(t *testing.T) {
	dir := t.TempDir()
	prog := guestBin(t, "glibc-static", "sockserver")
	out := run(t, nil, dir, emuprofBin, "parallel", "--out", dir, "--clear-env", "--follow", "none", "--", prog, "50", "64")
	if out.code != 0 {
		t.Fatalf("emuprof parallel: exit %d\n%s", out.code, out.stderr)
	}
	js, err := os.ReadFile(filepath.Join(dir, "sockserver_parallel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Contexts []struct {
			ID, Parent int
			Routine    string
			Self       struct{ Wait int64 }
		}
		WaitByClass map[string]int64 `json:"wait_by_class"`
	}
	if err := json.Unmarshal(js, &p); err != nil {
		t.Fatal(err)
	}
	parent := map[int]string{}
	for _, c := range p.Contexts {
		parent[c.ID] = c.Routine
	}
	var total, inMain int64
	for _, c := range p.Contexts {
		total += c.Self.Wait
		if (c.Routine == "__libc_read" || c.Routine == "__libc_accept") && parent[c.Parent] == "main" {
			inMain += c.Self.Wait
		}
	}
	if total == 0 || inMain != total || p.WaitByClass["io"] != total {
		t.Errorf("waits: %d ns in all, %d in main's read and accept, by class %v: want all of it there, as I/O", total, inMain, p.WaitByClass)
	}
}

// servers are real Debian servers with their clients in one sh -c, on
// loopback ports of their own (the native runs use the host's loopback).
var servers = map[string]string{
	"socat": `/usr/bin/socat -u TCP-LISTEN:47101,bind=127.0.0.1,reuseaddr OPEN:got.txt,creat,trunc &
until echo "through socat" | /usr/bin/socat -u STDIN TCP:127.0.0.1:47101 2>/dev/null; do sleep 0.1; done; wait; echo "listener exit $?"; cat got.txt
printf x | /usr/bin/socat - TCP:127.0.0.1:47101 2>/dev/null; echo "closed port: exit $?"`,
	"redis": `/usr/bin/redis-server --port 47102 --bind 127.0.0.1 --save "" --appendonly no >/dev/null &
until /usr/bin/redis-cli -p 47102 ping >/dev/null 2>&1; do sleep 0.1; done
/usr/bin/redis-cli -p 47102 set greeting hello; /usr/bin/redis-cli -p 47102 get greeting
/usr/bin/redis-cli -p 47102 incr n; /usr/bin/redis-cli -p 47102 rpush l a b c; /usr/bin/redis-cli -p 47102 lrange l 0 -1
/usr/bin/redis-benchmark -p 47102 -n 2000 -c 4 -t set,get,incr,lpush -q >/dev/null; echo "benchmark exit $?"
/usr/bin/redis-cli -p 47102 dbsize; /usr/bin/redis-cli -p 47102 shutdown nosave; wait; echo "server exit $?"`,
	"nginx": `/usr/sbin/nginx -p "$PWD" -c "$PWD/nginx.conf" & pid=$!
for i in 1 2 3 4 5 6 7 8 9 10; do /usr/bin/curl -s http://127.0.0.1:47103/index.html && break; sleep 1; done
/usr/bin/curl -s -o /dev/null -w "%{http_code}\n" http://127.0.0.1:47103/missing
/usr/bin/curl -s -d "a body" -o /dev/null -w "%{http_code}\n" http://127.0.0.1:47103/index.html
kill $pid; wait $pid; echo "nginx exit $?"`,
	"memcached": `/usr/bin/memcached -u "$(id -un)" -p 47105 -U 0 -l 127.0.0.1 -t 1 & pid=$!
until /usr/bin/socat -u /dev/null TCP:127.0.0.1:47105 2>/dev/null; do sleep 0.1; done
printf 'set k 0 0 5\r\nhello\r\nget k\r\nincr n 1\r\nset n 0 0 1\r\n7\r\nincr n 5\r\nquit\r\n' | /usr/bin/socat - TCP:127.0.0.1:47105
kill $pid; wait $pid; echo "memcached exit $?"`,
}

const nginxConf = `daemon off;
master_process off;
worker_processes 1;
error_log error.log;
pid nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path tmp_body;
  proxy_temp_path tmp_proxy;
  fastcgi_temp_path tmp_fcgi;
  uwsgi_temp_path tmp_uwsgi;
  scgi_temp_path tmp_scgi;
  server { listen 127.0.0.1:47103; root www; }
}
`

func TestServersWithClientsMatchNative(t *testing.T) {
	for _, name := range []string{"socat", "redis", "nginx", "memcached"} {
		t.Run(name, func(t *testing.T) {
			for _, p := range []string{"/usr/bin/socat", "/usr/bin/redis-server", "/usr/bin/redis-cli", "/usr/bin/redis-benchmark", "/usr/sbin/nginx", "/usr/bin/curl", "/usr/bin/memcached"} {
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("%s missing: make deps installs it", p)
				}
			}
			dir := t.TempDir()
			if name == "nginx" {
				os.MkdirAll(filepath.Join(dir, "www"), 0o755)
				os.WriteFile(filepath.Join(dir, "www", "index.html"), []byte("<p>hello from nginx</p>\n"), 0o644)
				os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(nginxConf), 0o644)
			}
			out := compare(t, nil, dir, "/bin/sh", "-c", servers[name])
			t.Logf("%s", out.stdout)
		})
	}
}

// Two runs of redis under redis-benchmark are the same run: the same
// trace digest, the same benchmark figures (in virtual time).
func TestRedisBenchmarkDeterministic(t *testing.T) {
	script := `/usr/bin/redis-server --port 47104 --bind 127.0.0.1 --save "" --appendonly no >/dev/null & sleep 1
/usr/bin/redis-benchmark -p 47104 -n 2000 -c 4 -t set,get -q --csv; /usr/bin/redis-cli -p 47104 shutdown nosave; wait`
	var first outcome
	for i := range 2 {
		out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs("--trace-digest"), "/bin/sh", "-c", script)...)
		if out.code != 0 || !strings.Contains(out.stdout, `"SET",`) {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, out.code, out.stdout, out.stderr)
		}
		if i == 0 {
			first = out
			continue
		}
		if out.stdout != first.stdout || digestOf(t, out) != digestOf(t, first) {
			t.Errorf("two runs differ:\n%s %s\n%s %s", first.stdout, digestOf(t, first), out.stdout, digestOf(t, out))
		}
	}
}
