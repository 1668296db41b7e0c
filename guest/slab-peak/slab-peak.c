// SPDX-License-Identifier: GPL-2.0
/*
 * slab-peak: how far unreclaimable slab (SUnreclaim in /proc/meminfo)
 * rises above a baseline while something else runs.
 *
 * Samples every 100 ms until SIGTERM or SIGINT, then prints
 * "slab_unreclaimable_peak_kb N": the highest reading minus the first.
 *
 * It is C, not a shell loop, because it runs beside the benchmark in a
 * two-vCPU guest: a shell sampler forks awk and sleep ten times a second,
 * and under QEMU TCG that took about 30% of the faulting thread's rate.
 * This one keeps /proc/meminfo open and only reads it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG		"slab-peak"
#define INTERVAL_NS	100000000L

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, PROG ": error: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* SUnreclaim in KiB, read through the open descriptor fd. */
static long sunreclaim_kb(int fd)
{
	static char buf[8192];
	const char *p;
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		die("/proc/meminfo");
	buf[n] = '\0';
	p = strstr(buf, "\nSUnreclaim:");
	if (!p) {
		fprintf(stderr, PROG ": error: no SUnreclaim line in /proc/meminfo\n");
		exit(1);
	}
	return strtol(p + strlen("\nSUnreclaim:"), NULL, 10);
}

int main(int argc, char **argv)
{
	struct timespec interval = { 0, INTERVAL_NS };
	struct sigaction sa = { .sa_handler = on_signal };
	long base, peak, v;
	int fd;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs("usage: " PROG "\n"
		      "Sample SUnreclaim in /proc/meminfo every 100 ms until SIGTERM or SIGINT,\n"
		      "then print \"slab_unreclaimable_peak_kb N\": the highest reading minus\n"
		      "the first. No arguments.\n"
		      "Exit status: 0; 1 when /proc/meminfo cannot be read; 2 on bad usage.\n",
		      stdout);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, PROG ": error: %s '%s' (no arguments; see --help)\n",
			argv[1][0] == '-' ? "unknown option" : "unexpected argument", argv[1]);
		return 2;
	}
	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("/proc/meminfo");
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		die("sigaction");
	base = sunreclaim_kb(fd);
	peak = base;
	while (!stop) {
		v = sunreclaim_kb(fd);
		if (v > peak)
			peak = v;
		/* A signal cuts the sleep short; the loop then sees stop. */
		nanosleep(&interval, NULL);
	}
	v = sunreclaim_kb(fd);
	if (v > peak)
		peak = v;
	printf("slab_unreclaimable_peak_kb %ld\n", peak - base);
	return fflush(stdout) == EOF ? 1 : 0;
}
