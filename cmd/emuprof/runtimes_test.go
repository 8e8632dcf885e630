package main

// Debian's runtimes and the programs that need the rest of the kernel
// (issue 28): ruby, node, a Go program, timeout, nice, ps, python's
// multiprocessing, each against its native run (output, exit status).

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runtimeCase runs prog with args natively and under emuprof in a fresh
// directory holding files, and compares the outcomes.
func runtimeCase(t *testing.T, files map[string]string, prog string, args ...string) outcome {
	t.Helper()
	if _, err := os.Stat(prog); err != nil {
		t.Fatalf("%s missing: make deps installs it", prog)
	}
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return compare(t, nil, dir, prog, args...)
}

// timeout arms a POSIX timer (timer_create) and kills its child when it
// expires on the virtual clock: exit 124, as natively.
func TestTimeoutExpires(t *testing.T) {
	out := runtimeCase(t, nil, "/usr/bin/timeout", "1", "/bin/sleep", "5")
	if out.code != 124 {
		t.Errorf("timeout 1 sleep 5: exit %d, want 124", out.code)
	}
	runtimeCase(t, nil, "/usr/bin/timeout", "5", "/bin/sh", "-c", "sleep 1; echo done")
	// tail -f follows the file with inotify until the timer ends it.
	out = runtimeCase(t, map[string]string{"f.txt": "hello\n"}, "/usr/bin/timeout", "1", "/usr/bin/tail", "-f", "f.txt")
	if out.code != 124 || out.stdout != "hello\n" {
		t.Errorf("timeout 1 tail -f: %+v", out)
	}
}

const rubyScript = `require 'json'
require 'digest'
h = {"a" => [1, 2, 3], "b" => {"c" => "d"}}
puts JSON.generate(h)
puts JSON.parse('{"x": [true, null, 1.5]}').inspect
puts Digest::SHA256.hexdigest("hello")
t = Thread.new { (1..100000).reduce(:+) }
puts t.value
File.write("out.txt", "x" * 100)
puts File.size("out.txt")
q = Queue.new
4.times.map { |i| Thread.new { q << i * i } }.each(&:join)
puts 4.times.map { q.pop }.sort.inspect
puts ` + "`echo from a child`" + `
require 'timeout'
puts Timeout.timeout(1) { sleep 0.01; "in time" }
begin
  Timeout.timeout(0.05) { sleep 1 }
rescue Timeout::Error => e
  puts "timed out: #{e.class}"
end
pid = Process.spawn("/bin/sh", "-c", "exit 5")
Process.wait(pid)
puts $?.exitstatus
exit 3
`

// ruby starts (its timer thread uses timer_create) and runs threads,
// JSON, digests, files, child processes and Timeout (a sleep cut short).
func TestRubyScript(t *testing.T) {
	out := runtimeCase(t, map[string]string{"s.rb": rubyScript}, "/usr/bin/ruby", "s.rb")
	if out.code != 3 || !strings.Contains(out.stdout, "in time\ntimed out: Timeout::Error\n5\n") {
		t.Errorf("ruby: %+v", out)
	}
}

const nodeScript = `const fs = require('fs');
const crypto = require('crypto');
const { Worker } = require('worker_threads');
fs.writeFileSync('data.json', JSON.stringify({a: [1, 2, 3], b: 'x'.repeat(10)}));
const obj = JSON.parse(fs.readFileSync('data.json', 'utf8'));
console.log(obj.a.reduce((x, y) => x + y), obj.b.length);
console.log(crypto.createHash('sha256').update('hello').digest('hex'));
console.log(crypto.createHmac('sha1', 'key').update('data').digest('base64'));
console.log(fs.readdirSync('.').filter(f => f.endsWith('.json')).sort().join(','));
const cp = require('child_process'); // libuv's socketpair, fork, exec
console.log(cp.execSync('echo from child').toString().trim());
const r = cp.spawnSync('sh', ['-c', 'echo out; echo err >&2; exit 3']);
console.log('spawn', r.status, r.stdout.toString().trim(), r.stderr.toString().trim());
fs.promises.readFile('data.json').then(b => console.log('async', b.length));
const w = new Worker('const { parentPort } = require("worker_threads"); let s = 0; ' +
  'for (let i = 0; i < 100000; i++) s += i; parentPort.postMessage(s);', { eval: true });
w.on('message', m => console.log('worker', m));
w.on('exit', c => {
  console.log('worker exit', c);
  fs.rmSync('wd', { recursive: true, force: true }); // the native run's
  fs.mkdirSync('wd');
  const watcher = fs.watch('wd', (ev, name) => { console.log('watch', ev, name); watcher.close(); });
  fs.writeFileSync('wd/x.txt', 'x');
  process.exitCode = 3;
});
`

// node starts (capget, pkey_alloc) and runs fs, crypto, JSON, promises,
// child_process (libuv's socketpair), a worker thread and fs.watch (inotify).
func TestNodeScript(t *testing.T) {
	out := runtimeCase(t, map[string]string{"s.js": nodeScript}, "/usr/bin/node", "s.js")
	if out.code != 3 || !strings.HasSuffix(out.stdout, "worker exit 0\nwatch rename x.txt\n") {
		t.Errorf("node: %+v", out)
	}
}

const goProgram = `package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	res := make([]int, 8)
	for i := range res {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100000*(i+1); j++ {
				res[i] += j % 7
			}
		}(i)
	}
	wg.Wait()
	fmt.Println(res)
	out, err := exec.Command("/bin/echo", "from", "child").Output()
	fmt.Printf("%q %v\n", out, err)
	cmd := exec.Command("/bin/sh", "-c", "exit 7")
	fmt.Println(cmd.Run(), cmd.ProcessState.ExitCode())
	c := exec.Command("/bin/sleep", "10")
	if err := c.Start(); err != nil {
		fmt.Println(err)
	}
	c.Process.Signal(os.Kill)
	fmt.Println(c.Wait())
	os.Exit(4)
}
`

// goTool is the Go toolchain the tests run with.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go toolchain: %v", err)
	}
	return p
}

// A Go program built here: goroutines, and os/exec, which checks and
// uses pidfds (pidfd_open, waitid(P_PIDFD), pidfd_send_signal,
// clone(CLONE_PIDFD)).
func TestGoProgram(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(goProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	build := exec.Command(goTool(t), "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := compare(t, nil, dir, bin)
	if out.code != 4 || !strings.Contains(out.stdout, "exit status 7 7\nsignal: killed\n") {
		t.Errorf("go program: %+v", out)
	}
}

// go run, under emuprof, builds (a warm cache: the native run's) and runs
// a program through os/exec.
func TestGoRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from go run\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOCACHE=" + filepath.Join(dir, "cache"), "GOPATH=" + filepath.Join(dir, "gopath"), "CGO_ENABLED=0", "GOTOOLCHAIN=local"}
	goBin := goTool(t)
	native := run(t, nil, dir, "/usr/bin/env", append(env, goBin, "run", "hello.go")...)
	var eargs []string
	for _, e := range env {
		eargs = append(eargs, "--env", e)
	}
	emu := run(t, nil, dir, emuprofBin, append(emuArgs(eargs...), goBin, "run", "hello.go")...)
	sameOutcome(t, "go run", native, emu)
	if native.stdout != "hello from go run\n" {
		t.Errorf("native go run: %+v", native)
	}
}

// nice sets the nice value (setpriority) that nice and ps report
// (/proc/PID/stat), and ps lists the run's processes from /proc.
func TestNiceAndPs(t *testing.T) {
	for _, line := range []string{
		`PROG -n 5 nice`,
		`PROG -n 7 /bin/sh -c 'exec ps -o ni=,comm=,nlwp= -p $$'`,
		// The child is a shell before and after its exec (its name never
		// depends on timing) and outlives ps (no SIGCHLD while ps runs).
		`PROG -n 3 /bin/sh -c '/bin/sh -c "sleep 5; :" >/dev/null & exec ps -o comm=,ni= --ppid $$'`,
	} {
		native, emu := shBoth(t, line, "/usr/bin/nice")
		sameOutcome(t, line, native, emu)
		if native.code != 0 || native.stdout == "" {
			t.Errorf("%s natively: %+v", line, native)
		}
	}
	// ps alone lists the processes of the run: natively it would list the
	// host's.
	out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), "/bin/sh", "-c", "sleep 0.2 & ps; wait")...)
	want := "    PID TTY          TIME CMD\n   1000 ?        00:00:00 sh\n   1001 ?        00:00:00 sleep\n   1002 ?        00:00:00 ps\n"
	if out.code != 0 || out.stdout != want {
		t.Errorf("ps under emuprof: %+v, want stdout %q", out, want)
	}
	// ps -ef and aux need /proc/stat's boot time and each /proc/PID/cmdline.
	out = run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), "/bin/sh", "-c", "sleep 0.2 & ps -o pid=,ppid=,args=; ps -ef >/dev/null; wait")...)
	want = "   1000     999 /bin/sh -c sleep 0.2 & ps -o pid=,ppid=,args=; ps -ef >/dev/null; wait\n" +
		"   1001    1000 sleep 0.2\n   1002    1000 ps -o pid=,ppid=,args=\n"
	if out != (outcome{stdout: want}) {
		t.Errorf("ps -o args and ps -ef under emuprof: %+v, want stdout %q", out, want)
	}
}

const pyMultiprocessing = `import os
from multiprocessing import Pool, Semaphore, shared_memory

def square(x):
    return x * x

if __name__ == "__main__":
    with Pool(2) as p:
        print(p.map(square, range(10)))
    name = "emuprof-test-%d" % os.getpid()
    s = shared_memory.SharedMemory(name=name, create=True, size=4096)
    s.buf[:5] = b"hello"
    print(name in os.listdir("/dev/shm"))
    pid = os.fork()
    if pid == 0:
        s.buf[:5] = b"child"
        os._exit(0)
    os.waitpid(pid, 0)
    print(bytes(s.buf[:5]))
    s.close()
    s.unlink()
    print(name in os.listdir("/dev/shm"))
    fd = os.memfd_create("scratch")
    os.write(fd, b"in a memfd")
    print(os.readlink("/proc/self/fd/%d" % fd), os.pread(fd, 10, 0))
`

// python3's multiprocessing: a Pool (its locks are sem_open semaphores in
// /dev/shm), POSIX shared memory shared with a forked child, a memfd.
func TestPythonMultiprocessing(t *testing.T) {
	needPython(t)
	out := runtimeCase(t, map[string]string{"mp.py": pyMultiprocessing}, python3, "mp.py")
	if !strings.HasPrefix(out.stdout, "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81]\nTrue\nb'child'\nFalse\n") {
		t.Errorf("multiprocessing: %+v", out)
	}
}

const pySplice = `import os, time
r, w = os.pipe()
fd = os.open("out", os.O_CREAT | os.O_TRUNC | os.O_RDWR, 0o600)
pid = os.fork()
if pid == 0:
    os.close(r)
    time.sleep(0.05)
    os.write(w, b"late data")
    os._exit(0)
os.close(w)
print(os.splice(r, fd, 100))
print(os.splice(r, fd, 100))
os.waitpid(pid, 0)
print(os.pread(fd, 100, 0))
`

// splice from an empty pipe waits for the writer (another process), then
// sees the end of the file when it exits.
func TestSpliceWaits(t *testing.T) {
	needPython(t)
	out := runtimeCase(t, map[string]string{"s.py": pySplice}, python3, "s.py")
	if out.stdout != "9\n0\nb'late data'\n" {
		t.Errorf("splice: %+v", out)
	}
}

const pyInotify = `import ctypes, os, select, struct, threading, time
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs("w", exist_ok=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
wd = libc.inotify_add_watch(fd, b"w", 0x100 | 0x200 | 0x8)
ep = select.epoll()
ep.register(fd, select.EPOLLIN)
def writer():
    time.sleep(0.05)
    with open("w/new.txt", "w") as f:
        f.write("x")
    os.unlink("w/new.txt")
t = threading.Thread(target=writer)
t.start()
seen = []
while len(seen) < 3:
    for _, _ in ep.poll(5):
        data = os.read(fd, 4096)
        i = 0
        while i < len(data):
            w, mask, cookie, n = struct.unpack_from("iIII", data, i)
            seen.append((w, hex(mask), data[i+16:i+16+n].rstrip(b"\0").decode()))
            i += 16 + n
t.join()
print(seen)
`

// inotify events of a change another thread makes wake an epoll_wait.
func TestInotifyEpoll(t *testing.T) {
	needPython(t)
	out := runtimeCase(t, map[string]string{"i.py": pyInotify}, python3, "i.py")
	if out.stdout != "[(1, '0x100', 'new.txt'), (1, '0x8', 'new.txt'), (1, '0x200', 'new.txt')]\n" {
		t.Errorf("inotify: %+v", out)
	}
}

// io_uring is refused with ENOSYS (as where kernel.io_uring_disabled is
// set), so that programs take their read/write/epoll paths; natively the
// host may allow it, so this run is emuprof's only.
func TestIoUringRefused(t *testing.T) {
	needPython(t)
	const py = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
print(libc.syscall(425, 4, params), ctypes.get_errno())`
	out := run(t, nil, t.TempDir(), emuprofBin, append(emuArgs(), python3, "-c", py)...)
	if out.code != 0 || out.stdout != "-1 38\n" {
		t.Errorf("io_uring_setup under emuprof: %+v", out)
	}
}
