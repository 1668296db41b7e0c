// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing mprotect() to PROT_NONE and to PROT_READ.
 *
 * Each round the threads read, write and read back their word of every
 * page (pages shared by all threads) while the main thread takes write
 * access away, from the whole region or from a random part of it (which
 * splits the VMA; the next round gives write access back to the whole
 * region, which merges it again). Half of the rounds start with a
 * MADV_DONTNEED of the region, so that the threads fault in missing pages
 * (zero page, then copy on write); the others start from present pages
 * made read-only and writable again (write-protect faults that reuse the
 * page). Checks:
 *
 *  - after mprotect() returned, a write to a page in the range gets
 *    SIGSEGV (SEGV_ACCERR at the address), and with PROT_NONE so does a
 *    read: a speculative fault that used the old protection would map
 *    the page writable (or at all);
 *  - no SIGSEGV before mprotect() was called, none ever outside the range,
 *    and none on a read under PROT_READ;
 *  - every value read is the one its thread wrote last; after the round,
 *    the main thread finds every thread's last write in place (with
 *    PROT_NONE, after making the range readable): data written before
 *    mprotect() survives it.
 *
 * A thread ends its round with a whole pass over the pages that began
 * after mprotect() returned, so every page of the range is checked under
 * the new protection.
 */
#include "spf_common.h"

#define NPAGES 64

struct ctx {
	char *base;
	size_t len;
	int nthreads;
	struct rounds rs;
	/* set for each round while the threads wait at the barrier */
	int prot;
	long lo, hi;		/* pages [lo, hi) lose write access */
	atomic_int changing;	/* round whose mprotect() has been called */
	atomic_int changed;	/* round whose mprotect() has returned */
	atomic_long segv, checked;
	uint64_t expect[MAX_THREADS][NPAGES];	/* last writes */
	struct failbox *fb;
};

static const char *prot_name(int prot)
{
	return prot == PROT_NONE ? "PROT_NONE" : "PROT_READ";
}

/* A fault on page p in round r: is it one mprotect() allows? */
static void round_fault(struct ctx *c, int r, long p, volatile uint64_t *w,
			bool write)
{
	bool inr = p >= c->lo && p < c->hi;

	atomic_fetch_add(&c->segv, 1);
	if (!inr || (!write && c->prot != PROT_NONE) ||
	    atomic_load(&c->changing) != r)
		fail(c->fb, "round %d: %s of page %ld (%s on pages %ld-%ld %s): unexpected SIGSEGV",
		     r, write ? "write" : "read", p, prot_name(c->prot),
		     c->lo, c->hi - 1,
		     atomic_load(&c->changing) == r ? "begun" : "not begun");
	else
		probe_fault_is(c->fb, w, SEGV_ACCERR, write ? "write" : "read");
}

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
			/* a pass that begins after mprotect() returned checks it */
			bool last = atomic_load(&c->changed) == r;

			for (long p = 0; p < NPAGES; p++) {
				volatile uint64_t *w = word_of(c->base, p, t);
				bool inr = p >= c->lo && p < c->hi;
				uint64_t v, nv = mkval(r, t, p, ++seq);
				bool after;

				after = inr && atomic_load(&c->changed) == r;
				if (probe_read(w, &v)) {
					round_fault(c, r, p, w, false);
				} else {
					if (after && c->prot == PROT_NONE)
						fail(c->fb, "round %d: read of page %ld returned %#lx after mprotect(PROT_NONE) returned",
						     r, p, (unsigned long)v);
					if (v != c->expect[t][p])
						fail(c->fb, "round %d: read of %p returned %#lx, expected %#lx",
						     r, (void *)w, (unsigned long)v,
						     (unsigned long)c->expect[t][p]);
					atomic_fetch_add(&c->checked, 1);
				}

				after = inr && atomic_load(&c->changed) == r;
				if (probe_write(w, nv)) {
					round_fault(c, r, p, w, true);
					continue;
				}
				if (after)
					fail(c->fb, "round %d: write to page %ld succeeded after mprotect(%s) returned",
					     r, p, prot_name(c->prot));
				c->expect[t][p] = nv;
				atomic_fetch_add(&c->rs.progress, 1);

				after = inr && atomic_load(&c->changed) == r;
				if (probe_read(w, &v)) {
					round_fault(c, r, p, w, false);
					continue;
				}
				if (v != nv)
					fail(c->fb, "round %d: read back of %p returned %#lx, wrote %#lx",
					     r, (void *)w, (unsigned long)v,
					     (unsigned long)nv);
			}
			verified = last;
			sched_yield();
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

SPF_RACE_FIXTURE(mprotect);

TEST_F_TIMEOUT(mprotect, race, SPF_TIMEOUT)
{
	struct ctx *c;
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1, rounds = 0, zapped = 0, partial = 0;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->nthreads = test_threads();
	c->len = NPAGES * PS;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->base = self->map = map_anon(NULL, c->len, 0);
	self->map_len = c->len;
	ASSERT_NE(NULL, c->base);
	atomic_init(&c->changing, -1);
	atomic_init(&c->changed, -1);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	ASSERT_EQ(0, rounds_start(&c->rs, c->nthreads, worker, c));

	for (int r = 0; ; r++) {
		bool zap = r < 2 || rnd(&seed) % 2;

		c->prot = r % 2 ? PROT_READ : PROT_NONE;
		if ((r / 2) % 2) {
			/* a part of the region: the VMA is split */
			rnd_range(&seed, NPAGES, &c->lo, &c->hi);
			partial++;
		} else {
			c->lo = 0;
			c->hi = NPAGES;
		}
		if (mprotect(c->base, c->len, PROT_READ | PROT_WRITE))
			fail(c->fb, "round %d: mprotect(RW): %s", r,
			     strerror(errno));
		if (zap) {
			if (madvise(c->base, c->len, MADV_DONTNEED))
				fail(c->fb, "round %d: MADV_DONTNEED: %s", r,
				     strerror(errno));
			memset(c->expect, 0, sizeof(c->expect));
			zapped++;
		}
		rounds_release(&c->rs, r);
		wait_progress(&c->rs.progress,
			      rnd(&seed) % (NPAGES * c->nthreads), end + 1);
		atomic_store(&c->changing, r);
		if (mprotect(c->base + c->lo * PS, (c->hi - c->lo) * PS, c->prot))
			fail(c->fb, "round %d: mprotect(%s): %s", r,
			     prot_name(c->prot), strerror(errno));
		atomic_store(&c->changed, r);
		rounds_wait(&c->rs);
		rounds++;

		/* the data written before mprotect() is all there */
		if (c->prot == PROT_NONE &&
		    mprotect(c->base + c->lo * PS, (c->hi - c->lo) * PS,
			     PROT_READ))
			fail(c->fb, "round %d: mprotect(PROT_READ): %s", r,
			     strerror(errno));
		for (int t = 0; t < c->nthreads; t++) {
			for (long p = 0; p < NPAGES; p++) {
				uint64_t v = *word_of(c->base, p, t);

				if (v != c->expect[t][p])
					fail(c->fb, "round %d: after mprotect(%s) of pages %ld-%ld, thread %d's word of page %ld is %#lx, it wrote %#lx",
					     r, prot_name(c->prot), c->lo,
					     c->hi - 1, t, p, (unsigned long)v,
					     (unsigned long)c->expect[t][p]);
			}
		}
		if (now_s() > end || failed(c->fb))
			break;
	}
	rounds_stop(&c->rs);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");
	munmap(c->base, c->len);
	self->map = NULL;
	rss1 = rss_anon_pages();

	TH_LOG("%ld rounds (%ld on part of the region, %ld after MADV_DONTNEED), %ld values checked, %ld SIGSEGVs, anon RSS %ld -> %ld pages, seed %#lx",
	       rounds, partial, zapped, atomic_load(&c->checked),
	       atomic_load(&c->segv), rss0, rss1, (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, rounds);
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(mprotect, race)

/*
 * The same check with faults in flight whenever mprotect() runs: thread t
 * writes its word of its own page t over and over, emptying the page with
 * MADV_DONTNEED after each write until mprotect() has been called, so
 * every write is a fault that allocates a page. mprotect() always changes
 * the whole VMA (no split, whose own marks would hide a missing one in
 * mprotect_fixup()). A fault that copied the VMA while it was writable
 * and set its PTE after change_protection() had passed leaves the page
 * writable: the thread's next write, after mprotect() returned, must
 * fail and does not. With PROT_NONE a read must fail too.
 */
static void *refault_worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	unsigned seq = 0;
	int r;

	while ((r = rounds_next(&c->rs)) >= 0) {
		volatile uint64_t *w = word_of(c->base, t, t);
		bool verified = false;

		while (!verified && !failed(c->fb)) {
			bool last = atomic_load(&c->changed) == r;
			bool after = last;
			uint64_t v, nv = mkval(r, t, t, ++seq);

			if (probe_write(w, nv)) {
				round_fault(c, r, t, w, true);
			} else if (after) {
				fail(c->fb, "round %d: write to page %d succeeded after mprotect(%s) of the whole VMA returned",
				     r, t, prot_name(c->prot));
			} else {
				c->expect[t][t] = nv;
				atomic_fetch_add(&c->rs.progress, 1);
			}
			if (!probe_read(w, &v)) {
				if (after && c->prot == PROT_NONE)
					fail(c->fb, "round %d: read of page %d succeeded after mprotect(PROT_NONE) returned",
					     r, t);
				else if (v != c->expect[t][t])
					fail(c->fb, "round %d: read of %p returned %#lx, expected %#lx",
					     r, (void *)w, (unsigned long)v,
					     (unsigned long)c->expect[t][t]);
				atomic_fetch_add(&c->checked, 1);
			} else {
				round_fault(c, r, t, w, false);
			}
			/* empty the page until mprotect() is called, never after */
			if (atomic_load(&c->changing) != r) {
				if (madvise((void *)(c->base + t * PS), PS,
					    MADV_DONTNEED))
					fail(c->fb, "round %d: MADV_DONTNEED: %s",
					     r, strerror(errno));
				c->expect[t][t] = 0;
			}
			verified = last;
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

TEST_F_TIMEOUT(mprotect, refault, SPF_TIMEOUT)
{
	struct ctx *c;
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rounds = 0;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->nthreads = test_threads();
	c->len = c->nthreads * PS;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->base = self->map = map_anon(NULL, c->len, 0);
	self->map_len = c->len;
	ASSERT_NE(NULL, c->base);
	c->lo = 0;
	c->hi = c->nthreads;
	atomic_init(&c->changing, -1);
	atomic_init(&c->changed, -1);

	SPF_BEGIN(spf0);
	ASSERT_EQ(0, rounds_start(&c->rs, c->nthreads, refault_worker, c));
	for (int r = 0; ; r++) {
		c->prot = r % 2 ? PROT_READ : PROT_NONE;
		if (mprotect(c->base, c->len, PROT_READ | PROT_WRITE))
			fail(c->fb, "round %d: mprotect(RW): %s", r,
			     strerror(errno));
		rounds_release(&c->rs, r);
		wait_progress(&c->rs.progress, 1 + rnd(&seed) % 64, end + 1);
		atomic_store(&c->changing, r);
		if (mprotect(c->base, c->len, c->prot))
			fail(c->fb, "round %d: mprotect(%s): %s", r,
			     prot_name(c->prot), strerror(errno));
		atomic_store(&c->changed, r);
		rounds_wait(&c->rs);
		rounds++;

		/* what each thread wrote last is there */
		if (c->prot == PROT_NONE &&
		    mprotect(c->base, c->len, PROT_READ))
			fail(c->fb, "round %d: mprotect(PROT_READ): %s", r,
			     strerror(errno));
		for (int t = 0; t < c->nthreads; t++) {
			uint64_t v = *word_of(c->base, t, t);

			if (v != c->expect[t][t])
				fail(c->fb, "round %d: after mprotect(%s), thread %d's word is %#lx, it wrote %#lx",
				     r, prot_name(c->prot), t, (unsigned long)v,
				     (unsigned long)c->expect[t][t]);
		}
		if (now_s() > end || failed(c->fb))
			break;
	}
	rounds_stop(&c->rs);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");

	TH_LOG("%ld rounds, %ld values checked, %ld SIGSEGVs, seed %#lx",
	       rounds, atomic_load(&c->checked), atomic_load(&c->segv),
	       (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, rounds);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(mprotect, refault)

TEST_HARNESS_MAIN
