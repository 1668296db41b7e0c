// SPDX-License-Identifier: GPL-2.0
/*
 * Loops of a known number of instructions on either side of a phase
 * marker, for the instruction counts of the coherence plugin (insns=on;
 * tests/host/coherence-insns) under qemu-x86_64:
 *
 *   insns [--threads N] [--loops K]
 *
 * N threads each run loop_before(K), then the main thread executes the
 * marker (xchg %bx,%bx), then N new threads each run loop_after(K). Each
 * loop is 2K + 1 instructions (K times dec and jnz, then ret), so phase 0
 * has N(2K + 1) in loop_before and phase 1 as many in loop_after. The
 * threads run at once, one vCPU each: a count lost between vCPUs would
 * show.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "insns"
#define MAX_THREADS 16

/* Written in assembly so that the compiler cannot change the count. */
void loop_before(unsigned long k);
void loop_after(unsigned long k);
__asm__(".text\n"
	".globl loop_before\n.type loop_before, @function\n"
	"loop_before:\n1: dec %rdi\n jnz 1b\n ret\n"
	".size loop_before, . - loop_before\n"
	".globl loop_after\n.type loop_after, @function\n"
	"loop_after:\n1: dec %rdi\n jnz 1b\n ret\n"
	".size loop_after, . - loop_after\n");

static unsigned long loops = 100000;
static pthread_barrier_t start;

static void *run_before(void *arg)
{
	pthread_barrier_wait(&start);
	loop_before(loops);
	return arg;
}

static void *run_after(void *arg)
{
	pthread_barrier_wait(&start);
	loop_after(loops);
	return arg;
}

static void run_threads(unsigned int n, void *(*fn)(void *))
{
	pthread_t t[MAX_THREADS];
	unsigned int i;

	if (pthread_barrier_init(&start, NULL, n)) {
		fprintf(stderr, PROG ": pthread_barrier_init failed\n");
		exit(1);
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, NULL)) {
			fprintf(stderr, PROG ": pthread_create failed\n");
			exit(1);
		}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
}

static unsigned long number(const char *opt, const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || *s == '-' || v < 1 || v > max) {
		fprintf(stderr, PROG ": %s wants a number from 1 to %lu, not '%s'\n", opt, max, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "loops", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long threads = 2;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			threads = number("--threads", optarg, MAX_THREADS);
			break;
		case 'k':
			loops = number("--loops", optarg, 1000000000);
			break;
		default:
			fprintf(stderr, "usage: " PROG " [--threads N] [--loops K]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	run_threads(threads, run_before);
	__asm__ volatile("xchg %%bx, %%bx" ::: "memory");
	run_threads(threads, run_after);
	printf("threads %lu loops %lu instructions_each %lu\n", threads, loops, 2 * loops + 1);
	return 0;
}
