package main

// CPU conformance: the cpuconf guest (SSE..SSE4.2, x87, fxsave/fxrstor,
// cmpxchg16b, bit scans, string instructions, division, strtod/printf,
// libm over a fixed sample) prints the same bytes natively and under
// emuprof, in every build flavour, and in the dynamic one with lazy binding
// (glibc's trampoline saves the argument registers with fxsave) as well as
// with LD_BIND_NOW=1.

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nativeCPUTunables makes glibc on the host pick the ifunc variants the
// emulated x86-64-v2 CPU gets (no AVX, AVX2, FMA): libm's FMA variants round
// differently in the last bit for a few inputs in ten thousand.
const nativeCPUTunables = "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-FMA4,-AVX512F"

// runEnv runs name with the environment of run plus env.
func runEnv(t *testing.T, env []string, name string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"LC_ALL=C", "HOME=/nonexistent", "PATH=/usr/bin:/bin"}, env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if code < 0 {
			code = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	} else if err != nil {
		t.Fatalf("running %s: %v", name, err)
	}
	return outcome{so.String(), se.String(), code}
}

// lineDiff describes how two outputs differ: the number of differing lines
// and the first few, side by side.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out strings.Builder
	n := 0
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x == y {
			continue
		}
		if n < 12 {
			fmt.Fprintf(&out, "line %d:\n  native: %q\n  emu:    %q\n", i+1, x, y)
		}
		n++
	}
	return fmt.Sprintf("%d of %d lines differ\n%s", n, len(a), out.String())
}

func TestCPUConformance(t *testing.T) {
	type flavour struct {
		variant string
		env     []string // given to both runs
	}
	flavours := []flavour{
		{"glibc-static", nil},
		{"musl-static", nil},
		{"glibc-dynamic", nil}, // lazy binding: the first PLT calls carry doubles
		{"glibc-dynamic", []string{"LD_BIND_NOW=1"}},
		{"glibc-static-pie", nil},
	}
	for _, f := range flavours {
		name := f.variant
		if len(f.env) > 0 {
			name += "/" + strings.Join(f.env, ",")
		}
		t.Run(name, func(t *testing.T) {
			prog := guestBin(t, f.variant, "cpuconf")
			nativeEnv := f.env
			if strings.HasPrefix(f.variant, "glibc") {
				nativeEnv = append([]string{nativeCPUTunables}, f.env...)
			}
			native := runEnv(t, nativeEnv, prog)
			if native.code != 0 || !strings.HasPrefix(native.stdout, "first printf 0.3 0.3 -2.5 1e-300 3.1 5.5 -0.25 0.428571\n") ||
				strings.Count(native.stdout, "\n") < 60000 {
				t.Fatalf("native run: exit %d, %d lines, stderr %q", native.code, strings.Count(native.stdout, "\n"), native.stderr)
			}
			var flags []string
			for _, kv := range f.env {
				flags = append(flags, "--env", kv)
			}
			start := time.Now()
			emu := runEnv(t, nil, emuprofBin, append(emuArgs(flags...), prog)...)
			t.Logf("%s: %d lines, emulated in %v", name, strings.Count(emu.stdout, "\n"), time.Since(start).Round(time.Millisecond))
			if emu.stdout != native.stdout {
				t.Errorf("stdout differs from native (%s): %s", strings.Join(nativeEnv, " "), lineDiff(native.stdout, emu.stdout))
			}
			if emu.stderr != native.stderr || emu.code != native.code {
				t.Errorf("native exit %d stderr %q; emu exit %d stderr %.2000q", native.code, native.stderr, emu.code, emu.stderr)
			}
		})
	}
}
