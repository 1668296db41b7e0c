// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing stack growth: a MAP_GROWSDOWN region grows down, a few
 * pages at a time, when the main thread touches the pages below it, and
 * shrinks back when it unmaps them; each growth moves the VMA's start and
 * page offset under the faults of the threads in the region's top pages.
 * Speculation must not grow a stack (the classic path does, with mmap_lock
 * held for write), and must not use a torn copy of a VMA that grows.
 *
 * The threads read, write and read back their word of their own pages at
 * the top, then empty them with MADV_DONTNEED, to keep faulting. Checks:
 *  - no access faults, neither the threads' nor the growing ones;
 *  - the threads read their last write, or 0 after their MADV_DONTNEED;
 *  - a page the stack grew into reads 0, then what was written to it;
 *  - the growth really happened (the region's start moved down), and the
 *    anonymous RSS comes back at the end.
 */
#include "spf_common.h"

#define TOP_PAGES 64		/* where the threads fault */
#define GROW_PAGES 128		/* how far the stack grows, each round */

struct ctx {
	char *base;		/* the top pages, the region's start at first */
	int nthreads;
	long own;
	atomic_int stop;
	atomic_long checked;
	uint64_t expect[MAX_THREADS][TOP_PAGES];
	struct failbox *fb;
};

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	long first = t * c->own;
	uint64_t *expect = c->expect[t];
	unsigned seq = 0;

	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		for (long p = first; p < first + c->own; p++) {
			volatile uint64_t *w = word_of(c->base, p, t);
			uint64_t v, nv = mkval(0, t, p, ++seq);

			if (probe_read(w, &v) || probe_write(w, nv)) {
				fail(c->fb, "thread %d: access to %p: signal %d code %d",
				     t, (void *)w, probe_signo, probe_code);
				return NULL;
			}
			if (v != expect[p])
				fail(c->fb, "thread %d page %ld: read %#lx, expected %#lx",
				     t, p, (unsigned long)v,
				     (unsigned long)expect[p]);
			expect[p] = nv;
			if (probe_read(w, &v) || v != nv)
				fail(c->fb, "thread %d page %ld: read back %#lx, wrote %#lx",
				     t, p, (unsigned long)v, (unsigned long)nv);
			atomic_fetch_add(&c->checked, 1);
		}
		if (madvise(c->base + first * PS, c->own * PS, MADV_DONTNEED))
			fail(c->fb, "thread %d: MADV_DONTNEED: %s", t,
			     strerror(errno));
		memset(expect + first, 0, c->own * sizeof(*expect));
		sched_yield();
	}
	return NULL;
}

/* The start of the VMA that holds addr, from /proc/self/maps, or 0. */
static unsigned long vma_start(void *addr)
{
	unsigned long lo, hi, a = (unsigned long)addr, found = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) {
			found = lo;
			break;
		}
	}
	fclose(f);
	return found;
}

SPF_RACE_FIXTURE(growsdown);

TEST_F_TIMEOUT(growsdown, race, SPF_TIMEOUT)
{
	struct ctx *c;
	struct team tm = { 0 };
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1, rounds = 0, grown = 0;
	char *slot, *low;
	unsigned long start;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->nthreads = test_threads();
	c->own = TOP_PAGES / c->nthreads;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	slot = reserve_pmds(1, &self->map, &self->map_len);
	ASSERT_NE(NULL, slot);
	/* the top pages at the end of the 2 MiB, room to grow below */
	c->base = slot + PMD_SIZE_ - TOP_PAGES * PS;
	low = c->base - GROW_PAGES * PS;
	ASSERT_EQ(c->base, mmap(c->base, TOP_PAGES * PS, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN |
				MAP_FIXED, -1, 0));
	madvise(c->base, TOP_PAGES * PS, MADV_NOHUGEPAGE);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	ASSERT_EQ(0, team_run(&tm, c->nthreads, worker, c));
	/*
	 * The room to grow: a hole below the region, with the reservation's
	 * PROT_NONE below it (no stack guard gap needed from an inaccessible
	 * neighbour). Only the main thread maps anything from now on.
	 */
	ASSERT_EQ(0, munmap(low, GROW_PAGES * PS));

	while (now_s() < end && !failed(c->fb)) {
		long n = 0;

		/* grow, a few pages a time, writing a value to each page */
		for (char *p = c->base; p > low && !failed(c->fb); ) {
			long step = 1 + rnd(&seed) % 4;

			if (p - step * PS < low)
				step = (p - low) / PS;
			p -= step * PS;
			for (long i = step - 1; i >= 0; i--) {
				volatile uint64_t *w =
					(volatile uint64_t *)(p + i * PS);
				uint64_t v, nv = mkval(rounds, 0, n, n);

				n++;
				if (probe_read(w, &v) || probe_write(w, nv)) {
					fail(c->fb, "round %ld: growing to %p: signal %d code %d",
					     rounds, (void *)w, probe_signo,
					     probe_code);
					break;
				}
				if (v != 0)
					fail(c->fb, "round %ld: a page the stack grew into, %p, reads %#lx",
					     rounds, (void *)w, (unsigned long)v);
				if (*w != nv)
					fail(c->fb, "round %ld: %p: read back %#lx, wrote %#lx",
					     rounds, (void *)w,
					     (unsigned long)*w, (unsigned long)nv);
			}
		}
		start = vma_start(c->base);
		if (start != (unsigned long)low)
			fail(c->fb, "round %ld: the stack starts at %#lx, expected %p",
			     rounds, start, (void *)low);
		grown += n;
		/* the pages it grew into kept their values */
		n = 0;
		for (char *p = c->base - PS; p >= low; p -= PS, n++)
			if (*(volatile uint64_t *)p != mkval(rounds, 0, n, n))
				fail(c->fb, "round %ld: %p holds %#lx, expected %#lx",
				     rounds, (void *)p,
				     (unsigned long)*(volatile uint64_t *)p,
				     (unsigned long)mkval(rounds, 0, n, n));
		/* and shrink back */
		if (munmap(low, GROW_PAGES * PS))
			fail(c->fb, "munmap: %s", strerror(errno));
		rounds++;
	}
	atomic_store(&c->stop, 1);
	team_join(&tm);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");
	for (int t = 0; t < c->nthreads; t++)
		for (long p = t * c->own; p < (t + 1) * c->own; p++)
			if (*word_of(c->base, p, t) != c->expect[t][p])
				fail(c->fb, "thread %d's word of page %ld is %#lx, it wrote %#lx",
				     t, p, (unsigned long)*word_of(c->base, p, t),
				     (unsigned long)c->expect[t][p]);
	munmap(self->map, self->map_len);
	self->map = NULL;
	rss1 = rss_anon_pages();

	TH_LOG("%ld rounds, %ld pages grown, %ld values checked, anon RSS %ld -> %ld pages, seed %#lx",
	       rounds, grown, atomic_load(&c->checked), rss0, rss1,
	       (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, grown);
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(growsdown, race)

TEST_HARNESS_MAIN
