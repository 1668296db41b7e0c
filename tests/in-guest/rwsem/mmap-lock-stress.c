// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_lock stress: threads that take it for read (page faults, which start
 * with mmap_read_trylock() on the classic path, and MADV_DONTNEED) against
 * threads that take it for write (mmap, mprotect, munmap), with every byte
 * the readers wrote checked. It splits and merges the VMA the readers
 * fault in, so speculative faults see their VMA change too.
 *
 * SPF_TEST_SECONDS sets the duration of each test (default 3).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define READERS		4
#define SLOT_PAGES	64
#define WRITERS		2

struct stress {
	char *region;			/* READERS slots, a guard page between */
	size_t page;
	atomic_bool stop;
	atomic_long reader_rounds;
	atomic_long writer_ops;
	atomic_int errors;
};

struct reader {
	struct stress *s;
	int idx;
};

static double seconds(void)
{
	const char *env = getenv("SPF_TEST_SECONDS");

	return env ? atof(env) : 3.0;
}

static char *slot(struct stress *s, int idx)
{
	return s->region + (size_t)idx * (SLOT_PAGES + 1) * s->page;
}

/* The guard page after slot @idx: writers flip its protection. */
static char *guard(struct stress *s, int idx)
{
	return slot(s, idx) + SLOT_PAGES * s->page;
}

/* Write a value per page, read all back, zap, check the zeros. */
static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	struct stress *s = r->s;
	char *base = slot(s, r->idx);
	unsigned long round = 0;

	while (!atomic_load(&s->stop)) {
		unsigned long tag = ((unsigned long)r->idx << 48) | ++round;

		for (int p = 0; p < SLOT_PAGES; p++)
			*(volatile unsigned long *)(base + p * s->page) = tag + p;
		for (int p = 0; p < SLOT_PAGES; p++) {
			unsigned long v = *(volatile unsigned long *)(base + p * s->page);

			if (v != tag + p) {
				atomic_fetch_add(&s->errors, 1);
				fprintf(stderr, "reader %d page %d: %#lx, wrote %#lx\n",
					r->idx, p, v, tag + p);
			}
		}
		if (madvise(base, SLOT_PAGES * s->page, MADV_DONTNEED)) {
			atomic_fetch_add(&s->errors, 1);
			break;
		}
		for (int p = 0; p < SLOT_PAGES; p += 7) {
			if (*(volatile unsigned long *)(base + p * s->page)) {
				atomic_fetch_add(&s->errors, 1);
				fprintf(stderr, "reader %d page %d: not zero after MADV_DONTNEED\n",
					r->idx, p);
			}
		}
		atomic_fetch_add(&s->reader_rounds, 1);
	}
	return NULL;
}

/*
 * mmap, fill, mprotect read-only and back, check, munmap a scratch region,
 * and flip a guard page of the readers' region between PROT_NONE and
 * read-write, splitting and merging their VMA.
 */
static void *writer_fn(void *arg)
{
	struct stress *s = arg;
	size_t len = 8 * s->page;
	unsigned int seed = (unsigned int)(uintptr_t)&len;

	while (!atomic_load(&s->stop)) {
		int g = rand_r(&seed) % READERS;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			atomic_fetch_add(&s->errors, 1);
			break;
		}
		memset(m, 0x5a, len);
		if (mprotect(m, len, PROT_READ) || mprotect(m, len, PROT_READ | PROT_WRITE))
			atomic_fetch_add(&s->errors, 1);
		for (size_t i = 0; i < len; i += 512)
			if (m[i] != 0x5a)
				atomic_fetch_add(&s->errors, 1);
		munmap(m, len);
		if (mprotect(guard(s, g), s->page, PROT_NONE) ||
		    mprotect(guard(s, g), s->page, PROT_READ | PROT_WRITE))
			atomic_fetch_add(&s->errors, 1);
		atomic_fetch_add(&s->writer_ops, 1);
	}
	return NULL;
}

TEST(readers_and_writers)
{
	struct stress s = { .page = (size_t)sysconf(_SC_PAGESIZE) };
	size_t len = (size_t)READERS * (SLOT_PAGES + 1) * s.page;
	struct reader readers[READERS];
	pthread_t rt[READERS], wt[WRITERS];
	struct timespec ts;
	double secs = seconds();

	s.region = mmap(NULL, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s.region);
	/* base pages: many faults, and the VMA splits on guard pages */
	madvise(s.region, len, MADV_NOHUGEPAGE);

	for (int i = 0; i < READERS; i++) {
		readers[i] = (struct reader){ .s = &s, .idx = i };
		ASSERT_EQ(0, pthread_create(&rt[i], NULL, reader_fn, &readers[i]));
	}
	for (int i = 0; i < WRITERS; i++)
		ASSERT_EQ(0, pthread_create(&wt[i], NULL, writer_fn, &s));

	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	atomic_store(&s.stop, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(rt[i], NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);

	TH_LOG("%ld reader rounds (%d pages each), %ld writer rounds in %.1f s",
	       atomic_load(&s.reader_rounds), SLOT_PAGES,
	       atomic_load(&s.writer_ops), secs);
	EXPECT_EQ(0, atomic_load(&s.errors));
	EXPECT_LT(0, atomic_load(&s.reader_rounds));
	EXPECT_LT(0, atomic_load(&s.writer_ops));
	munmap(s.region, len);
}

TEST_HARNESS_MAIN
