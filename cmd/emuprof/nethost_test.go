package main

// --net host (issue 28): TCP to and from the host's network. By default a
// guest cannot reach a host server (ECONNREFUSED, as for a closed port);
// with --net host, curl fetches from a server in this test process, a
// slow server's reply arrives before the client's timeout (virtual time
// waits for the host in real time while every thread waits), python's
// http.server in the guest serves this process, and the run record says
// that the run is not reproducible.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestNetHostClient(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			_, _ = w.Write(big)
		case "/slow":
			time.Sleep(300 * time.Millisecond)
			fmt.Fprintln(w, "slow reply")
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%d %x\n", len(b), sha256.Sum256(b))
		}
	}))
	defer srv.Close()
	work := t.TempDir()

	off := run(t, nil, work, emuprofBin, append(emuArgs(), "/usr/bin/curl", "-sS", srv.URL+"/big")...)
	if off.code != 7 || !bytes.Contains([]byte(off.stderr), []byte("Couldn't connect")) {
		t.Errorf("without --net host: exit %d, stderr %q; want curl's 7 (connection refused)", off.code, off.stderr)
	}

	got := run(t, nil, work, emuprofBin, append(emuArgs("--net", "host"), "/usr/bin/curl", "-sS", srv.URL+"/big")...)
	if got.code != 0 || got.stdout != string(big) {
		t.Errorf("curl of 2 MiB: exit %d, %d bytes (want %d), stderr %q", got.code, len(got.stdout), len(big), got.stderr)
	}
	body := bytes.Repeat([]byte("x"), 300000)
	if err := os.WriteFile(filepath.Join(work, "body"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	post := run(t, nil, work, emuprofBin, append(emuArgs("--net", "host"), "/usr/bin/curl", "-sS", "--data-binary", "@body", srv.URL+"/echo")...)
	if want := fmt.Sprintf("%d %x\n", len(body), sha256.Sum256(body)); post.stdout != want {
		t.Errorf("curl POST: %q, want %q (stderr %q)", post.stdout, want, post.stderr)
	}
	slow := run(t, nil, work, emuprofBin, append(emuArgs("--net", "host"), "/usr/bin/python3", "-c",
		"import urllib.request as u; print(u.urlopen('"+srv.URL+"/slow', timeout=5).read().decode(), end='')")...)
	if slow.stdout != "slow reply\n" {
		t.Errorf("a reply slower than the guest's clock: %q, stderr %.600s", slow.stdout, slow.stderr)
	}

	out := filepath.Join(work, "prof")
	prof := run(t, nil, work, emuprofBin, "parallel", "--net", "host", "--out", out, "--", "/usr/bin/curl", "-s", "-o", "/dev/null", srv.URL+"/big")
	if prof.code != 0 {
		t.Fatalf("parallel --net host: exit %d: %s", prof.code, prof.stderr)
	}
	var rec struct {
		NotReproducible string `json:"not_reproducible"`
	}
	data, err := os.ReadFile(filepath.Join(out, "curl_run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.NotReproducible == "" {
		t.Errorf("the run record does not say the run is not reproducible: %s", data)
	}
}

func TestNetHostServer(t *testing.T) {
	work := t.TempDir()
	page := "served from the guest\n"
	if err := os.WriteFile(filepath.Join(work, "page.txt"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(emuprofBin, append(emuArgs("--net", "host"), "/usr/bin/python3", "-m", "http.server", fmt.Sprint(port), "--bind", "127.0.0.1")...)
	cmd.Dir = work
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/page.txt", port)
	var resp *http.Response
	for i := 0; i < 600; i++ { // the guest's python starts (under the emulator) within a minute
		if resp, err = http.Get(url); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the guest's server never answered: %v; stderr %s", err, se.String())
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != page {
		t.Errorf("GET from the guest's server: %q, want %q", b, page)
	}
	// Two clients at once, each served whole.
	done := make(chan string, 2)
	for range 2 {
		go func() {
			r, err := http.Get(url)
			if err != nil {
				done <- err.Error()
				return
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			done <- string(b)
		}()
	}
	for range 2 {
		if got := <-done; got != page {
			t.Errorf("a concurrent GET: %q", got)
		}
	}
}
