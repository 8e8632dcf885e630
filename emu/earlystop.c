// Stop signals that arrive before emuprof's main can watch for them.
//
// From the executable's first initializer to os/signal.Notify in main, a
// SIGINT, SIGTERM or SIGHUP has no Go handler that keeps it: before the
// Go runtime installs its handlers the default action kills emuprof, and
// after that the runtime's own handler does (dieFromSignal), for 0.3 to a
// few milliseconds of runtime and package initialization. Either way no
// profile is written, where a stop a moment later writes them all.
//
// A handler installed first of all (the executable's preinit array runs
// before every library's initializer) records the signal. Before the Go
// runtime starts it is the handler and returns: main finds the signal
// (emu_early_signal) and sends it to itself once watched. After that the
// runtime calls it only to end the process (it forwards the signal to the
// handler it found, then takes the default action): it starts emuprof
// again instead, with the signal in EMUPROF_EARLY_SIGNAL for the new main
// to take over. Nothing had been done yet: same pid, arguments,
// environment and descriptors.
#ifdef __linux__
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EARLY_VAR "EMUPROF_EARLY_SIGNAL="

static volatile sig_atomic_t early_signal;
static volatile sig_atomic_t early_over; // main watches: later signals are its own
static char **early_argv, **early_envp; // early_envp's last entry is the variable
static char early_env[sizeof EARLY_VAR + 2];
static sigset_t early_mask; // the mask emuprof started with, and the stop signals

static void early_handler(int sig) {
	if (!early_signal)
		early_signal = sig;
	struct sigaction now;
	if (sigaction(sig, NULL, &now) != 0 || now.sa_handler == early_handler)
		return; // the Go runtime has not started: main takes it from early_signal
	if (!early_envp || early_over)
		return;
	int s = early_signal;
	char *p = early_env + sizeof EARLY_VAR - 1;
	*p++ = '0' + s / 10;
	*p++ = '0' + s % 10;
	*p = 0;
	// The new start keeps the mask emuprof was given; another stop
	// signal stays pending until it is watched for again.
	sigprocmask(SIG_SETMASK, &early_mask, NULL);
	execve("/proc/self/exe", early_argv, early_envp);
	// Not started again: the runtime's default action follows.
}

static void early_init(int argc, char **argv, char **envp) {
	(void)argc;
	early_argv = argv;
	int n = 0, keep = 0;
	while (envp[n])
		n++;
	char **env = malloc((n + 2) * sizeof *env);
	if (env) {
		// The variable of an earlier start: its signal came first.
		for (int i = 0; i < n; i++) {
			if (strncmp(envp[i], EARLY_VAR, sizeof EARLY_VAR - 1) == 0)
				early_signal = atoi(envp[i] + sizeof EARLY_VAR - 1);
			else
				env[keep++] = envp[i];
		}
		memcpy(early_env, EARLY_VAR, sizeof EARLY_VAR);
		env[keep++] = early_env;
		env[keep] = NULL;
		early_envp = env;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = early_handler;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	sigprocmask(SIG_BLOCK, NULL, &early_mask);
	for (int i = 0; i < 3; i++)
		sigaddset(&early_mask, sigs[i]);
	for (int i = 0; i < 3; i++) {
		struct sigaction old;
		// An ignored SIGINT or SIGHUP (nohup, a background job) stays ignored.
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

__attribute__((section(".preinit_array"), used)) static void (*early_init_entry)(int, char **, char **) = early_init;

int emu_early_signal(void) {
	early_over = 1;
	return early_signal;
}
#else
int emu_early_signal(void) { return 0; }
#endif
