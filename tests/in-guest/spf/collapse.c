// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing a THP collapse (MADV_COLLAPSE), which copies the small
 * pages of a 2 MiB range into a huge page and replaces the page table with
 * a huge PMD: a speculative fault that installs a PTE into the old page
 * table, or writes into a small page after it was copied, loses a write.
 *
 * Each round the main thread punches a few holes into the 2 MiB region
 * with MADV_DONTNEED (splitting the huge PMD, if any) while the threads
 * wait; then the threads read, write and read back their word of every
 * page (faulting in the holes at the PTE level) while the main thread
 * collapses the region. Checks:
 *
 *  - every value read is the thread's last write (0 in a hole not written
 *    since);
 *  - after the round, the main thread finds every last write in place;
 *  - at least one collapse succeeded (or the test means nothing: it goes
 *    on for up to three times its time until one does);
 *  - at the end, the anonymous RSS is back to where it was.
 */
#include "spf_common.h"

#define NPAGES 512

struct ctx {
	char *base;
	size_t len;
	int nthreads;
	struct rounds rs;
	atomic_int collapsed;	/* round whose MADV_COLLAPSE returned */
	atomic_long checked;
	uint64_t expect[MAX_THREADS][NPAGES];
	struct failbox *fb;
};

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	unsigned seq = 0;
	int r;

	while ((r = rounds_next(&c->rs)) >= 0) {
		bool verified = false;

		while (!verified && !failed(c->fb)) {
			bool last = atomic_load(&c->collapsed) == r;

			for (long p = 0; p < NPAGES; p++) {
				volatile uint64_t *w = word_of(c->base, p, t);
				uint64_t v, nv = mkval(r, t, p, ++seq);

				if (probe_read(w, &v) || probe_write(w, nv)) {
					fail(c->fb, "round %d: access to %p: signal %d",
					     r, (void *)w, probe_signo);
					break;
				}
				if (v != c->expect[t][p])
					fail(c->fb, "round %d: thread %d page %ld: read %#lx, expected %#lx",
					     r, t, p, (unsigned long)v,
					     (unsigned long)c->expect[t][p]);
				c->expect[t][p] = nv;
				atomic_fetch_add(&c->rs.progress, 1);
				if (probe_read(w, &v) || v != nv)
					fail(c->fb, "round %d: thread %d page %ld: read back %#lx, wrote %#lx",
					     r, t, p, (unsigned long)v,
					     (unsigned long)nv);
				atomic_fetch_add(&c->checked, 1);
			}
			verified = last;
			sched_yield();
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

SPF_RACE_FIXTURE(collapse);

TEST_F_TIMEOUT(collapse, race, SPF_TIMEOUT)
{
	struct ctx *c;
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1, rounds = 0, ok = 0, holes = 0;
	long errs[4] = { 0 };	/* EAGAIN, ENOMEM, EINVAL, other */
	char *hole;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->nthreads = test_threads();
	c->len = NPAGES * PS;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	hole = reserve_pmds(1, &self->map, &self->map_len);
	ASSERT_NE(NULL, hole);
	c->base = mmap(hole, c->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(hole, c->base);
	ASSERT_EQ(0, madvise(c->base, c->len, MADV_HUGEPAGE));
	/* a kernel without MADV_COLLAPSE says so on a populated range */
	memset(c->base, 0, c->len);
	if (madvise(c->base, c->len, MADV_COLLAPSE) && errno == EINVAL)
		SKIP(return, "MADV_COLLAPSE: %s", strerror(errno));
	ASSERT_EQ(0, madvise(c->base, c->len, MADV_DONTNEED));
	atomic_init(&c->collapsed, -1);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	ASSERT_EQ(0, rounds_start(&c->rs, c->nthreads, worker, c));

	for (int r = 0; ; r++) {
		/* holes, faulted in again at the PTE level */
		for (int i = 0, n = 1 + rnd(&seed) % 4; r > 0 && i < n; i++) {
			long lo = rnd(&seed) % NPAGES;
			long len = 1 + rnd(&seed) % 32;

			if (lo + len > NPAGES)
				len = NPAGES - lo;
			if (madvise(c->base + lo * PS, len * PS, MADV_DONTNEED))
				fail(c->fb, "round %d: MADV_DONTNEED: %s", r,
				     strerror(errno));
			for (int t = 0; t < c->nthreads; t++)
				for (long p = lo; p < lo + len; p++)
					c->expect[t][p] = 0;
			holes++;
		}
		rounds_release(&c->rs, r);
		wait_progress(&c->rs.progress,
			      rnd(&seed) % (NPAGES * c->nthreads), end + 1);
		if (!madvise(c->base, c->len, MADV_COLLAPSE))
			ok++;
		else
			errs[errno == EAGAIN ? 0 : errno == ENOMEM ? 1 :
			     errno == EINVAL ? 2 : 3]++;
		atomic_store(&c->collapsed, r);
		rounds_wait(&c->rs);
		rounds++;
		for (int t = 0; t < c->nthreads; t++) {
			for (long p = 0; p < NPAGES; p++) {
				uint64_t v = *word_of(c->base, p, t);

				if (v != c->expect[t][p])
					fail(c->fb, "round %d: after the collapse, thread %d's word of page %ld is %#lx, it wrote %#lx",
					     r, t, p, (unsigned long)v,
					     (unsigned long)c->expect[t][p]);
			}
		}
		/* on a slow kernel, go on until a collapse succeeded (or 3x) */
		if (failed(c->fb) || (now_s() > end && ok > 0) ||
		    now_s() > end + 2 * test_seconds())
			break;
	}
	rounds_stop(&c->rs);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy", "spf_abort_pmd_changed");
	munmap(c->base, c->len);
	rss1 = rss_anon_pages();

	TH_LOG("%ld rounds, %ld holes, %ld collapses (failed: %ld EAGAIN, %ld ENOMEM, %ld EINVAL, %ld other), %ld values checked, anon RSS %ld -> %ld pages, seed %#lx",
	       rounds, holes, ok, errs[0], errs[1], errs[2], errs[3],
	       atomic_load(&c->checked), rss0, rss1, (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, ok);
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(collapse, race)

TEST_HARNESS_MAIN
