// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that share cache lines in known ways, for the coherence plugin's
 * test (tests/host/coherence) under qemu-x86_64:
 *
 *   sharing --threads N --ops K --layout shared|separate
 *           --op atomic|xchg|store [--turns]
 *
 * Each thread does K operations on its own word: --op atomic adds 1 with
 * a lock-prefixed instruction, --op xchg swaps a value in with xchg (no
 * prefix: locked all the same), --op store writes a plain store. With
 * --layout shared the words are one line: one word for every thread with
 * atomic and xchg (a shared counter), a word per thread with store (false
 * sharing);
 * with --layout separate each thread's word is alone on its own line.
 * --turns makes the threads take strict turns (one operation each, thread
 * 0, 1, ..., N-1, 0, ...) through a turn counter on a line of its own, so
 * that the plugin's answer is exact: every operation on a shared line but
 * the first then takes it from another vCPU.
 *
 * Before the threads start it prints "line T 0xADDR" for each thread's
 * word's line and "turn 0xADDR"; at the end, for a shared atomic counter,
 * "handoffs H": how often consecutive increments (in the order the counter
 * saw them) came from different threads. The words are touched by nothing
 * else: not before the threads start, not after they end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "sharing"
#define LINE_SIZE 64
#define MAX_THREADS 8
#define MAX_OPS 1000000
/* Spins on the turn counter before the waiter yields its host CPU. */
#define SPINS_BEFORE_YIELD 64

struct line {
	_Alignas(LINE_SIZE) uint64_t word[LINE_SIZE / sizeof(uint64_t)];
};

/* line[0] and line[MAX_THREADS + 2] keep other data off the lines used. */
static struct line lines[MAX_THREADS + 3];
static struct line turn_line;
/* The threads start together, so that free-running ones overlap. */
static pthread_barrier_t start;
/* Which thread did the increment that returned each value (--op atomic). */
static uint8_t *incremented_by;

static unsigned int nr_threads = 2;
static unsigned long nr_ops = 1000;
static int layout_shared = 1;
enum op { OP_ATOMIC, OP_XCHG, OP_STORE };
static enum op op = OP_ATOMIC;
static int take_turns;

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": error: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t *word_of(unsigned int thread)
{
	if (!layout_shared)
		return &lines[1 + thread].word[0];
	return &lines[1].word[op == OP_STORE ? thread : 0];
}

/* Until it is @thread's turn for its @i'th operation. */
static void wait_turn(unsigned int thread, unsigned long i)
{
	_Atomic uint64_t *turn = (_Atomic uint64_t *)&turn_line.word[0];
	uint64_t mine = (uint64_t)i * nr_threads + thread;
	unsigned int spins = 0;

	while (atomic_load_explicit(turn, memory_order_acquire) != mine)
		if (++spins % SPINS_BEFORE_YIELD == 0)
			sched_yield();
}

static void pass_turn(void)
{
	_Atomic uint64_t *turn = (_Atomic uint64_t *)&turn_line.word[0];

	atomic_fetch_add_explicit(turn, 1, memory_order_release);
}

static void *sharing_worker(void *arg)
{
	unsigned int thread = (uintptr_t)arg;
	_Atomic uint64_t *word = (_Atomic uint64_t *)word_of(thread);
	uint64_t old;

	pthread_barrier_wait(&start);
	for (unsigned long i = 0; i < nr_ops; i++) {
		if (take_turns)
			wait_turn(thread, i);
		switch (op) {
		case OP_ATOMIC:
			old = atomic_fetch_add_explicit(word, 1, memory_order_relaxed);
			if (layout_shared)
				incremented_by[old] = thread;
			break;
		case OP_XCHG:
			atomic_exchange_explicit(word, i, memory_order_relaxed);
			break;
		case OP_STORE:
			/* A plain mov: no lock, no fence. */
			atomic_store_explicit(word, i, memory_order_relaxed);
			break;
		}
		if (take_turns)
			pass_turn();
	}
	return NULL;
}

static unsigned long parse_number(const char *opt, const char *arg,
				  unsigned long max)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || n < 1 || n > max)
		usage_error("%s: expected a number from 1 to the maximum", opt);
	return n;
}

static void parse_args(int argc, char **argv)
{
	static const struct option options[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'k' },
		{ "layout", required_argument, NULL, 'l' },
		{ "op", required_argument, NULL, 'o' },
		{ "turns", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 't':
			nr_threads = parse_number("--threads", optarg, MAX_THREADS);
			break;
		case 'k':
			nr_ops = parse_number("--ops", optarg, MAX_OPS);
			break;
		case 'l':
			if (strcmp(optarg, "shared") && strcmp(optarg, "separate"))
				usage_error("--layout %s: expected shared or separate", optarg);
			layout_shared = !strcmp(optarg, "shared");
			break;
		case 'o':
			if (!strcmp(optarg, "atomic"))
				op = OP_ATOMIC;
			else if (!strcmp(optarg, "xchg"))
				op = OP_XCHG;
			else if (!strcmp(optarg, "store"))
				op = OP_STORE;
			else
				usage_error("--op %s: expected atomic, xchg or store", optarg);
			break;
		case 'T':
			take_turns = 1;
			break;
		case 'h':
			printf("usage: " PROG " [--threads N] [--ops K]\n"
			       "       [--layout shared|separate] [--op atomic|xchg|store] [--turns]\n");
			exit(0);
		default:
			usage_error("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}

/* Changes of thread between consecutive increments of the shared counter. */
static unsigned long handoffs(void)
{
	unsigned long n = 0;

	for (unsigned long i = 1; i < nr_threads * nr_ops; i++)
		n += incremented_by[i] != incremented_by[i - 1];
	return n;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];

	parse_args(argc, argv);
	incremented_by = calloc(nr_threads * nr_ops, 1);
	if (!incremented_by) {
		perror(PROG ": calloc");
		return 1;
	}
	for (unsigned int t = 0; t < nr_threads; t++) {
		uintptr_t line = (uintptr_t)word_of(t) & ~(uintptr_t)(LINE_SIZE - 1);

		printf("line %u %p\n", t, (void *)line);
	}
	printf("turn %p\n", (void *)&turn_line);
	fflush(stdout);
	pthread_barrier_init(&start, NULL, nr_threads);
	for (unsigned int t = 0; t < nr_threads; t++) {
		int err = pthread_create(&threads[t], NULL, sharing_worker, (void *)(uintptr_t)t);

		if (err) {
			fprintf(stderr, PROG ": pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (unsigned int t = 0; t < nr_threads; t++)
		pthread_join(threads[t], NULL);
	if (op == OP_ATOMIC && layout_shared)
		printf("handoffs %lu\n", handoffs());
	return 0;
}
