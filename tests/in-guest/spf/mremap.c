// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing mremap(MREMAP_MAYMOVE | MREMAP_FIXED), which moves the
 * region's page table entries, or whole page tables, to another address.
 *
 * Each round the threads read, write (a new, unique value each time) and
 * read back their word of every page at the region's current address,
 * while the main thread moves the region to the other of two slots; the
 * next round moves it back. Half of the rounds start with a MADV_DONTNEED,
 * so that the threads fault in missing pages. Checks:
 *
 *  move, move_pmd (the old range is unmapped):
 *  - an access to the old range that starts after mremap() returned gets
 *    SIGSEGV (SEGV_MAPERR at the address), never a value; none before
 *    mremap() was called;
 *  - every value read is the thread's last write;
 *  - after the round, every value a thread wrote successfully (its last
 *    one) is at the new address: a write a speculative fault let into the
 *    old page tables after they moved is lost, and found missing here.
 *  move_pmd moves a whole 2 MiB-aligned page table at once (the fast PMD
 *  move takes no PTE lock).
 *
 *  dontunmap (MREMAP_DONTUNMAP: the old range stays mapped, empty):
 *  - reads return the thread's last write, or 0 once the move has begun;
 *  - after the round, a thread's last write is at the new address and the
 *    old one reads 0, or it was written after the move and is at the old
 *    address, the new one holding 0 or an earlier write of that thread.
 */
#include "spf_common.h"

#define MAX_PAGES 512

struct ctx {
	char *slot[2];
	long npages;
	size_t len;
	int nthreads;
	bool dontunmap;
	struct rounds rs;
	/* set for each round while the threads wait at the barrier */
	char *cur;
	atomic_int moving;	/* round whose mremap() has been called */
	atomic_int moved;	/* round whose mremap() has returned */
	atomic_long segv, checked, post_move;
	uint64_t last[MAX_THREADS][MAX_PAGES];	/* last writes */
	struct failbox *fb;
};

/* A fault in round r: legal once the move began, if the old range goes. */
static void round_fault(struct ctx *c, int r, volatile uint64_t *w,
			const char *what)
{
	atomic_fetch_add(&c->segv, 1);
	if (c->dontunmap || atomic_load(&c->moving) != r)
		fail(c->fb, "round %d: %s of %p: unexpected SIGSEGV (move %s)",
		     r, what, (void *)w,
		     atomic_load(&c->moving) == r ? "begun" : "not begun");
	else
		probe_fault_is(c->fb, w, SEGV_MAPERR, what);
}

/* v read from the old range: legal? cur_old is the value expected there. */
static bool check_read(struct ctx *c, int r, volatile uint64_t *w,
		       const char *what, uint64_t v, uint64_t *cur_old)
{
	atomic_fetch_add(&c->checked, 1);
	if (v == *cur_old)
		return true;
	if (c->dontunmap && v == 0 && atomic_load(&c->moving) == r) {
		/* moved away: the old range is empty from now on */
		*cur_old = 0;
		return true;
	}
	fail(c->fb, "round %d: %s of %p returned %#lx, expected %#lx%s",
	     r, what, (void *)w, (unsigned long)v, (unsigned long)*cur_old,
	     c->dontunmap ? " or 0 after the move" : "");
	return false;
}

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	unsigned seq = 0;
	uint64_t cur_old[MAX_PAGES];
	int r;

	while ((r = rounds_next(&c->rs)) >= 0) {
		bool out = false;

		memcpy(cur_old, c->last[t], sizeof(cur_old));
		while (!out && !failed(c->fb)) {
			for (long p = 0; p < c->npages; p++) {
				volatile uint64_t *w = word_of(c->cur, p, t);
				uint64_t v, nv = mkval(r, t, p, ++seq);
				bool after;

				after = atomic_load(&c->moved) == r;
				if (after && c->dontunmap) {
					/* the main thread checks both ranges */
					out = true;
					break;
				}
				if (probe_read(w, &v)) {
					round_fault(c, r, w, "read");
					out = true;
					break;
				}
				if (after) {
					fail(c->fb, "round %d: read of %p returned %#lx after mremap() returned",
					     r, (void *)w, (unsigned long)v);
					out = true;
					break;
				}
				check_read(c, r, w, "read", v, &cur_old[p]);

				after = atomic_load(&c->moved) == r;
				if (probe_write(w, nv)) {
					round_fault(c, r, w, "write");
					out = true;
					break;
				}
				if (after && !c->dontunmap) {
					fail(c->fb, "round %d: write to %p succeeded after mremap() returned",
					     r, (void *)w);
					out = true;
					break;
				}
				cur_old[p] = nv;
				c->last[t][p] = nv;
				atomic_fetch_add(&c->rs.progress, 1);

				if (probe_read(w, &v)) {
					round_fault(c, r, w, "read back");
					out = true;
					break;
				}
				check_read(c, r, w, "read back", v, &cur_old[p]);
			}
			sched_yield();
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

/* After round r moved src to dst: the data followed. */
static void check_moved(struct ctx *c, int r, char *src, char *dst)
{
	uint64_t v;

	for (int t = 0; t < c->nthreads; t++) {
		for (long p = 0; p < c->npages; p++) {
			uint64_t L = c->last[t][p];
			uint64_t nw = *word_of(dst, p, t), old;

			if (!c->dontunmap) {
				if (nw != L)
					fail(c->fb, "round %d: thread %d page %ld: %#lx at the new address, it wrote %#lx",
					     r, t, p, (unsigned long)nw,
					     (unsigned long)L);
				continue;
			}
			old = *word_of(src, p, t);
			if (nw == L && old == 0)
				;	/* written before the move */
			else if (L && old == L && nw != L &&
				 (nw == 0 || (val_thread(nw) == t &&
					      val_page(nw) == p))) {
				c->last[t][p] = nw;	/* written after it */
				atomic_fetch_add(&c->post_move, 1);
			} else
				fail(c->fb, "round %d: thread %d page %ld: %#lx at the new address and %#lx at the old one, its last write was %#lx",
				     r, t, p, (unsigned long)nw,
				     (unsigned long)old, (unsigned long)L);
		}
	}
	if (!c->dontunmap && !probe_read(word_of(src, 0, 0), &v))
		fail(c->fb, "round %d: the old address %p reads %#lx after mremap()",
		     r, (void *)src, (unsigned long)v);
}

SPF_RACE_FIXTURE(mremap);

FIXTURE_VARIANT(mremap) {
	long npages;
	bool dontunmap;
};

FIXTURE_VARIANT_ADD(mremap, move) {
	.npages = 64,
};

FIXTURE_VARIANT_ADD(mremap, move_pmd) {
	.npages = MAX_PAGES,
};

FIXTURE_VARIANT_ADD(mremap, dontunmap) {
	.npages = 64,
	.dontunmap = true,
};

TEST_F_TIMEOUT(mremap, race, SPF_TIMEOUT)
{
	struct ctx *c;
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1, rounds = 0, zapped = 0;
	char *hole;
	int r;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->nthreads = test_threads();
	c->npages = variant->npages;
	c->dontunmap = variant->dontunmap;
	c->len = c->npages * PS;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	/* two slots in reserved address space, each in its own page table */
	hole = reserve_pmds(2, &self->map, &self->map_len);
	ASSERT_NE(NULL, hole);
	c->slot[0] = hole;
	c->slot[1] = hole + PMD_SIZE_;
	ASSERT_EQ(c->slot[0], map_anon(c->slot[0], c->len, MAP_FIXED));
	atomic_init(&c->moving, -1);
	atomic_init(&c->moved, -1);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	ASSERT_EQ(0, rounds_start(&c->rs, c->nthreads, worker, c));

	for (r = 0; ; r++) {
		char *src = c->slot[r % 2], *dst = c->slot[(r + 1) % 2], *p;

		if (r < 2 || rnd(&seed) % 2) {
			if (madvise(src, c->len, MADV_DONTNEED))
				fail(c->fb, "round %d: MADV_DONTNEED: %s", r,
				     strerror(errno));
			memset(c->last, 0, sizeof(c->last));
			zapped++;
		}
		c->cur = src;
		rounds_release(&c->rs, r);
		wait_progress(&c->rs.progress,
			      rnd(&seed) % (c->npages * c->nthreads), end + 1);
		atomic_store(&c->moving, r);
		p = mremap(src, c->len, c->len,
			   MREMAP_MAYMOVE | MREMAP_FIXED |
			   (c->dontunmap ? MREMAP_DONTUNMAP : 0), dst);
		atomic_store(&c->moved, r);
		if (p != dst) {
			fail(c->fb, "round %d: mremap(%p -> %p): %s", r,
			     (void *)src, (void *)dst,
			     p == MAP_FAILED ? strerror(errno) : "moved elsewhere");
		}
		rounds_wait(&c->rs);
		rounds++;
		if (p != dst)
			break;
		check_moved(c, r, src, dst);
		/* keep the old range from other mappings: the next move's target */
		if (!c->dontunmap && re_reserve(src, c->len))
			fail(c->fb, "round %d: mmap(PROT_NONE) at %p: %s", r,
			     (void *)src, strerror(errno));
		if (now_s() > end || failed(c->fb))
			break;
	}
	rounds_stop(&c->rs);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy", "spf_abort_pmd_changed");
	munmap(self->map, self->map_len);
	self->map = NULL;
	rss1 = rss_anon_pages();

	TH_LOG("%ld rounds (%ld after MADV_DONTNEED), %ld values checked, %ld SIGSEGVs, %ld words written after the move, anon RSS %ld -> %ld pages, seed %#lx",
	       rounds, zapped, atomic_load(&c->checked), atomic_load(&c->segv),
	       atomic_load(&c->post_move),
	       rss0, rss1, (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, rounds);
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(mremap, race)

TEST_HARNESS_MAIN
