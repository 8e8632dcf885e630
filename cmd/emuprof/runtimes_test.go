package main

// Debian's runtimes and the programs that need the rest of the kernel
// (issue 28): ruby, node, a Go program, timeout, nice, ps, python's
// multiprocessing, each against its native run (output, exit status).

import (
	"os"
	"path/filepath"
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
exit 3
`

// ruby starts (its timer thread uses timer_create) and runs threads,
// JSON, digests, files and a child process.
func TestRubyScript(t *testing.T) {
	out := runtimeCase(t, map[string]string{"s.rb": rubyScript}, "/usr/bin/ruby", "s.rb")
	if out.code != 3 || out.stdout == "" {
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
fs.promises.readFile('data.json').then(b => console.log('async', b.length));
const w = new Worker('const { parentPort } = require("worker_threads"); let s = 0; ' +
  'for (let i = 0; i < 100000; i++) s += i; parentPort.postMessage(s);', { eval: true });
w.on('message', m => console.log('worker', m));
w.on('exit', c => { console.log('worker exit', c); process.exitCode = 3; });
`

// node starts (capget, pkey_alloc) and runs fs, crypto, JSON, promises
// and a worker thread.
func TestNodeScript(t *testing.T) {
	out := runtimeCase(t, map[string]string{"s.js": nodeScript}, "/usr/bin/node", "s.js")
	if out.code != 3 || out.stdout == "" {
		t.Errorf("node: %+v", out)
	}
}
