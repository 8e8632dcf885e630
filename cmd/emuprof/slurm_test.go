package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slurmCluster is a one-node Slurm cluster on this machine, with its own
// munge daemon, configuration and state in a temporary directory, so that
// it needs nothing of the host's /etc, /run or /var.
type slurmCluster struct {
	dir  string
	conf string
	logs []string
}

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// daemon starts a daemon in the foreground, stopped (by its own pid) when
// the test ends; its output goes to a log the failure messages show.
func (c *slurmCluster) daemon(t *testing.T, name string, env []string, args ...string) {
	t.Helper()
	log := filepath.Join(c.dir, filepath.Base(name)+".out")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = env, f, f, c.dir
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	c.logs = append(c.logs, log)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
}

// tail is the end of every daemon's output, for a failure message.
func (c *slurmCluster) tail() string {
	var b strings.Builder
	for _, l := range c.logs {
		data, _ := os.ReadFile(l)
		if len(data) > 2000 {
			data = data[len(data)-2000:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(l), data)
	}
	return b.String()
}

// startSlurm starts munged, slurmctld and slurmd (as root, as CI runs)
// and waits until the node takes jobs. It fails, never skips, when Slurm
// cannot start: the docs' recipe must be shown to work.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the Slurm test starts slurmctld and slurmd, which run jobs as their users: run it as root (CI does)")
	}
	dir, err := os.MkdirTemp("", "slurm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &slurmCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	munge := filepath.Join(dir, "munge")
	for _, d := range []string{munge, filepath.Join(dir, "state"), filepath.Join(dir, "spool")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(munge, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_CONF=" + c.conf}
	key := filepath.Join(munge, "munge.key")
	if out, err := exec.Command("mungekey", "--create", "--keyfile", key).CombinedOutput(); err != nil {
		t.Fatalf("mungekey: %v\n%s", err, out)
	}
	socket := filepath.Join(munge, "munge.socket")
	c.daemon(t, "munged", env, "--foreground", "--force", "--key-file="+key, "--socket="+socket,
		"--log-file="+filepath.Join(munge, "munged.log"), "--pid-file="+filepath.Join(munge, "munged.pid"),
		"--seed-file="+filepath.Join(munge, "munged.seed"))
	conf := fmt.Sprintf(`ClusterName=emuprof
SlurmctldHost=localhost
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
AuthInfo=socket=%[3]s
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
NodeName=emuprofnode NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=%[5]d State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, freePort(t), freePort(t), socket, dir, runtime.NumCPU())
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// munged makes its socket when it is ready.
	for i := 0; ; i++ {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		if i == 300 {
			t.Fatalf("munged made no socket in 30 s:\n%s", c.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.daemon(t, "slurmctld", env, "-D", "-i", "-f", c.conf)
	c.daemon(t, "slurmd", env, "-D", "-N", "emuprofnode", "-f", c.conf)
	for i := 0; ; i++ {
		sinfo := exec.Command("sinfo", "-h", "-N", "-o", "%T")
		sinfo.Env = env
		out, _ := sinfo.Output()
		if s := strings.TrimSpace(string(out)); s == "idle" || s == "mixed" {
			break
		}
		if i == 120 {
			t.Fatalf("the Slurm node is not idle after 60 s (sinfo: %q):\n%s", out, c.tail())
		}
		time.Sleep(500 * time.Millisecond)
	}
	return c
}

// TestSlurmShards runs the docs' Slurm recipes (docs/analyses/paths.md and
// causal.md) as written, on a
// one-node cluster started here: the plan, a job array of --copy I/4
// (paths) and of causal --exact --shard I/4, waited for with sbatch
// --wait, merged; each merged profile equals the unsharded run's byte for
// byte.
func TestSlurmShards(t *testing.T) {
	c := startSlurm(t)
	work := t.TempDir()
	if out, err := exec.Command("gcc", "-static", "-O2", "-g", "-pthread", "-o", filepath.Join(work, "prog"), "testdata/shardwork.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(work, "input"), []byte("6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"LC_ALL=C", "HOME=/nonexistent", "SLURM_CONF=" + c.conf,
		"PATH=" + filepath.Dir(emuprofBin) + ":/usr/sbin:/usr/bin:/sbin:/bin"}
	sh := func(what, script string) {
		t.Helper()
		// A job that never runs (a node that went down) fails the test
		// with the logs rather than hanging it: sbatch --wait and all.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-e", "-x", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			logs, _ := filepath.Glob(filepath.Join(work, "slurm-*.out"))
			var jobs strings.Builder
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				fmt.Fprintf(&jobs, "--- %s\n%.1500s\n", filepath.Base(l), data)
			}
			t.Fatalf("%s: %v\n%.4000s\n%s%s", what, err, out.String(), jobs.String(), c.tail())
		}
	}
	same := func(got, want string) {
		t.Helper()
		g, err := os.ReadFile(filepath.Join(work, got))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(work, want))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s (merged from the Slurm array) differs from the unsharded run's %s", got, want)
		}
	}

	sh("the paths recipe", docBlock(t, "docs/analyses/paths.md", "A Slurm job array runs it with no code of ours in between"))
	same("prog_paths.json", "full/prog_paths.json")

	os.RemoveAll(filepath.Join(work, "shards"))
	sh("the unsharded causal run", "emuprof causal --clear-env --exact --progress round_done --out unsharded -- ./prog input")
	sh("the causal recipe", docBlock(t, "docs/analyses/causal.md", "On Slurm, as a job array"))
	same("merged/profile.coz", "unsharded/profile.coz")
	same("merged/prog_causal.json", "unsharded/prog_causal.json")
}
