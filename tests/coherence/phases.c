// SPDX-License-Identifier: GPL-2.0
/*
 * Two known sharing patterns on either side of a phase marker, for the
 * coherence plugin's test (tests/host/coherence) under qemu-x86_64:
 *
 *   phases [--ops K] [--no-marker]
 *
 * Two threads take strict turns incrementing one atomic counter, K times
 * each, in increment_before(); they end, the main thread executes the
 * marker (xchg %bx,%bx); two new threads take turns on another counter,
 * on a line of its own, in increment_after(). So phase 0 has 2K - 1
 * transfers in increment_before() and none in increment_after(), phase 1
 * the other way round (2K - 1 there too: the second counter's line is
 * new). The turn counter is on a line of its own, touched in other
 * functions. --no-marker leaves the marker out (one phase).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "phases"
#define LINE_SIZE 64
#define MAX_OPS 100000

struct line {
	_Alignas(LINE_SIZE) _Atomic uint64_t word;
	char pad[LINE_SIZE - sizeof(uint64_t)];
};

static struct line counters[4];	/* [1] before, [2] after; [0], [3] pads */
static struct line turn;
static unsigned long nr_ops = 200;

__attribute__((noinline)) static void increment_before(void)
{
	atomic_fetch_add(&counters[1].word, 1);
}

__attribute__((noinline)) static void increment_after(void)
{
	atomic_fetch_add(&counters[2].word, 1);
}

struct worker {
	pthread_t thread;
	unsigned int index;
	void (*increment)(void);
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	for (unsigned long i = 0; i < nr_ops; i++) {
		uint64_t mine = 2 * i + w->index;

		while (atomic_load_explicit(&turn.word, memory_order_acquire) != mine)
			sched_yield();
		w->increment();
		atomic_fetch_add_explicit(&turn.word, 1, memory_order_release);
	}
	return NULL;
}

static void run_pair(void (*increment)(void))
{
	struct worker w[2];

	atomic_store(&turn.word, 0);
	for (unsigned int i = 0; i < 2; i++) {
		w[i] = (struct worker){ .index = i, .increment = increment };
		if (pthread_create(&w[i].thread, NULL, worker_run, &w[i])) {
			fprintf(stderr, PROG ": error: cannot start a thread\n");
			exit(1);
		}
	}
	for (unsigned int i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "ops", required_argument, NULL, 'k' },
		{ "no-marker", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int marker = 1, c;
	char *end;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case 'k':
			nr_ops = strtoul(optarg, &end, 10);
			if (*end || !*optarg || nr_ops < 1 || nr_ops > MAX_OPS) {
				fprintf(stderr, PROG ": error: --ops wants 1 to %d, not '%s'\n",
					MAX_OPS, optarg);
				return 2;
			}
			break;
		case 'n':
			marker = 0;
			break;
		case 'h':
			printf("usage: phases [--ops K] [--no-marker]\n");
			return 0;
		default:
			fprintf(stderr, PROG ": error: usage: phases [--ops K] [--no-marker]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": error: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	run_pair(increment_before);
	if (marker)
		asm volatile(".byte 0x66, 0x87, 0xdb" ::: "memory");
	run_pair(increment_after);
	printf("before %llu after %llu\n",
	       (unsigned long long)atomic_load(&counters[1].word),
	       (unsigned long long)atomic_load(&counters[2].word));
	return 0;
}
