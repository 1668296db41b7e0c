// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing munmap().
 *
 * Each round maps a fresh anonymous region at a fixed address in a
 * reserved hole; the threads read, write and read back their word of every
 * page while the main thread unmaps the region at a random point. Checks:
 *
 *  - an access that starts after munmap() returned gets SIGSEGV
 *    (SEGV_MAPERR at the address), never a value: a page a speculative
 *    fault installed behind munmap() would be read here;
 *  - no SIGSEGV before munmap() was called;
 *  - a value read is the one the thread wrote last in this round, or 0 on
 *    a page it has not written: a fresh region never shows a value from
 *    an earlier round (a stale PTE left in a page table that survived);
 *  - at the end, with everything unmapped, the anonymous RSS is back to
 *    where it was (a page installed into a zapped range is never freed).
 *
 * The region is mapped again only when every thread has seen its SIGSEGV.
 * Variant own_pgtable: the region is alone in its 2 MiB, so munmap() frees
 * its page table under the faults; shared_pgtable: PROT_NONE mappings on
 * both sides in the same 2 MiB keep the page table, so a stale PTE would
 * survive into the next round.
 */
#include "spf_common.h"

#define NPAGES 64

struct ctx {
	char *base;
	size_t len;
	int nthreads;
	struct rounds rs;
	atomic_int unmapping;	/* round whose munmap() has been called */
	atomic_int unmapped;	/* round whose munmap() has returned */
	atomic_long segv, accesses;
	struct failbox *fb;
};

/* A fault in round r: legal only once munmap() has been called. */
static bool round_fault(struct ctx *c, int r, volatile uint64_t *w,
			const char *what)
{
	if (atomic_load(&c->unmapping) != r)
		fail(c->fb, "round %d: %s of %p: SIGSEGV before munmap()",
		     r, what, (void *)w);
	else
		probe_fault_is(c->fb, w, SEGV_MAPERR, what);
	atomic_fetch_add(&c->segv, 1);
	return true;
}

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	uint64_t expect[NPAGES];
	int r;

	while ((r = rounds_next(&c->rs)) >= 0) {
		unsigned seq = 0;
		bool out = false;

		memset(expect, 0, sizeof(expect));
		while (!out) {
			for (long p = 0; p < NPAGES && !out; p++) {
				volatile uint64_t *w = word_of(c->base, p, t);
				uint64_t v, nv = mkval(r, t, p, ++seq);
				bool after;

				/* read what was there */
				after = atomic_load(&c->unmapped) == r;
				if (probe_read(w, &v)) {
					out = round_fault(c, r, w, "read");
					break;
				}
				if (after) {
					fail(c->fb, "round %d: read of %p returned %#lx after munmap() returned",
					     r, (void *)w, (unsigned long)v);
					out = true;
					break;
				}
				if (v != expect[p])
					fail(c->fb, "round %d: read of %p returned %#lx, expected %#lx",
					     r, (void *)w, (unsigned long)v,
					     (unsigned long)expect[p]);
				atomic_fetch_add(&c->accesses, 1);

				/* write a new value */
				after = atomic_load(&c->unmapped) == r;
				if (probe_write(w, nv)) {
					out = round_fault(c, r, w, "write");
					break;
				}
				if (after) {
					fail(c->fb, "round %d: write to %p succeeded after munmap() returned",
					     r, (void *)w);
					out = true;
					break;
				}
				expect[p] = nv;
				atomic_fetch_add(&c->rs.progress, 1);

				/* and read it back */
				after = atomic_load(&c->unmapped) == r;
				if (probe_read(w, &v)) {
					out = round_fault(c, r, w, "read back");
					break;
				}
				if (after) {
					fail(c->fb, "round %d: read back of %p returned %#lx after munmap() returned",
					     r, (void *)w, (unsigned long)v);
					out = true;
					break;
				}
				if (v != nv)
					fail(c->fb, "round %d: read back of %p returned %#lx, wrote %#lx",
					     r, (void *)w, (unsigned long)v,
					     (unsigned long)nv);
			}
			if (failed(c->fb))
				out = true;
			/* the faults are in the first pass: let munmap() come */
			sched_yield();
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

SPF_RACE_FIXTURE(munmap);

FIXTURE_VARIANT(munmap) {
	bool share_pgtable;
};

FIXTURE_VARIANT_ADD(munmap, own_pgtable) {
	.share_pgtable = false,
};

FIXTURE_VARIANT_ADD(munmap, shared_pgtable) {
	.share_pgtable = true,
};

TEST_F_TIMEOUT(munmap, race, SPF_TIMEOUT)
{
	struct ctx c = { .nthreads = test_threads(), .len = NPAGES * PS };
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1, rounds = 0;
	char *hole;

	c.fb = failbox_new();
	ASSERT_NE(NULL, c.fb);
	hole = reserve_pmds(1, &self->map, &self->map_len);
	ASSERT_NE(NULL, hole);
	/* in the middle of the reserved 2 MiB, or at its start */
	c.base = variant->share_pgtable ? hole + PMD_SIZE_ / 2 : hole;
	atomic_init(&c.unmapping, -1);
	atomic_init(&c.unmapped, -1);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	ASSERT_EQ(0, rounds_start(&c.rs, c.nthreads, worker, &c));
	/*
	 * Open the hole once the threads' stacks are mapped (outside the
	 * reservation): shared_pgtable opens just the region, so that the
	 * reservation around it keeps its page table; own_pgtable the whole
	 * 2 MiB, so that munmap() frees the page table. Only the main thread
	 * maps anything from now on, and it maps the region again as soon as
	 * the threads are done with a round.
	 */
	ASSERT_EQ(0, munmap(c.base, variant->share_pgtable ? c.len : PMD_SIZE_));
	ASSERT_EQ(c.base, map_anon(c.base, c.len, MAP_FIXED_NOREPLACE));

	for (int r = 0; ; r++) {
		if (r > 0) {
			char *p = map_anon(c.base, c.len, MAP_FIXED_NOREPLACE);

			if (p != c.base) {
				fail(c.fb, "round %d: mmap(MAP_FIXED_NOREPLACE) at %p gave %p: %s",
				     r, (void *)c.base, (void *)p,
				     strerror(errno));
				if (p)
					munmap(p, c.len);
				break;
			}
		}
		rounds_release(&c.rs, r);
		/* somewhere in the threads' first pass, which faults */
		wait_progress(&c.rs.progress,
			      rnd(&seed) % (NPAGES * c.nthreads), end + 1);
		atomic_store(&c.unmapping, r);
		if (munmap(c.base, c.len))
			fail(c.fb, "round %d: munmap: %s", r, strerror(errno));
		atomic_store(&c.unmapped, r);
		rounds_wait(&c.rs);
		rounds++;
		if (now_s() > end || failed(c.fb))
			break;
	}
	rounds_stop(&c.rs);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy", "spf_abort_pmd_changed");
	rss1 = rss_anon_pages();

	TH_LOG("%ld rounds, %ld accesses, %ld SIGSEGVs, anon RSS %ld -> %ld pages, seed %#lx",
	       rounds, atomic_load(&c.accesses), atomic_load(&c.segv),
	       rss0, rss1, (unsigned long)seed0);
	failbox_report(c.fb);
	EXPECT_EQ(0, failed(c.fb));
	EXPECT_LT(0, rounds);
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	failbox_free(c.fb);
}

SPF_SCALE_TIMEOUT(munmap, race)

TEST_HARNESS_MAIN
