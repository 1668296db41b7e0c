// SPDX-License-Identifier: GPL-2.0
/*
 * phase-mark: end one phase of the coherence plugin's count and start the
 * next (qemu/coherence/coherence.c, Phases). It reads the page faults so
 * far (pgfault of /proc/vmstat) and the monotonic clock, executes the
 * marker, `xchg %bx,%bx` (bytes 66 87 db, a no-op the plugin recognises),
 * and prints
 *
 *   MARK label=LABEL pgfault=N seconds=S
 *
 * so that a phase's faults and length are the differences of two MARK
 * lines, read as close to the marker as a program can. Without the plugin
 * the marker does nothing.
 * Exit status: 0; 1 when /proc/vmstat cannot be read; 2 on bad usage.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "phase-mark"

static const char usage[] =
	"usage: phase-mark [LABEL]\n"
	"Read pgfault from /proc/vmstat and the monotonic clock, execute the\n"
	"coherence plugin's phase marker (xchg %bx,%bx) and print\n"
	"\"MARK label=LABEL pgfault=N seconds=S\" (LABEL: letters, digits, _ . -;\n"
	"default: mark).\n"
	"Exit status: 0; 1 when /proc/vmstat cannot be read; 2 on bad usage.\n";

static int read_pgfault(uint64_t *n)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char name[64];
	unsigned long long v;
	int found = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %llu", name, &v) == 2)
		if (!strcmp(name, "pgfault")) {
			*n = v;
			found = 1;
			break;
		}
	fclose(f);
	return found ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *label = "mark";
	struct timespec ts;
	uint64_t pgfault;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, PROG ": error: usage: phase-mark [LABEL]\n");
		return 2;
	}
	if (argc == 2) {
		label = argv[1];
		if (!*label || strspn(label, "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != strlen(label)) {
			fprintf(stderr, PROG ": error: LABEL '%s' must be letters, digits, _ . -\n",
				label);
			return 2;
		}
	}
	if (read_pgfault(&pgfault)) {
		fprintf(stderr, PROG ": error: no pgfault in /proc/vmstat\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* The marker: the plugin ends the current phase here. */
	asm volatile(".byte 0x66, 0x87, 0xdb" ::: "memory");
	printf("MARK label=%s pgfault=%" PRIu64 " seconds=%.6f\n", label, pgfault,
	       ts.tv_sec + ts.tv_nsec / 1e9);
	return fflush(stdout) ? 1 : 0;
}
