// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing mbind(MPOL_BIND, MPOL_MF_MOVE | MPOL_MF_STRICT) on a
 * guest with two NUMA nodes (numa=fake=2).
 *
 * The faulting threads bind their own allocations to node 0
 * (set_mempolicy()), and each round write their word of random pages of
 * a region with no VMA policy, so their faults are speculative and
 * allocate on node 0. Meanwhile the main thread binds the region to node
 * 1 with MPOL_MF_MOVE | MPOL_MF_STRICT: every page already there must be
 * moved to node 1, or mbind() must fail with EIO; every page faulted
 * after it comes from node 1. A speculative fault that began under the
 * old policy must not map its node-0 page behind the page walk with which
 * mbind() queues the pages to move: that would leave a page on node 0
 * after a successful STRICT mbind(). Checks, after each round:
 *
 *  - when mbind() returned 0, move_pages() finds no page of the region on
 *    node 0 (nor anywhere but node 1);
 *  - mbind() fails with nothing but EIO;
 *  - every thread's last write to every page is still there: data moves
 *    with its page.
 *
 * Each round starts with mbind(MPOL_DEFAULT), which removes the VMA
 * policy (the threads' faults allocate on node 0 again), and
 * MADV_DONTNEED, so that the pages are faulted again.
 */
#include "spf_common.h"

#define NPMDS 4				/* page tables in the region */
#define NPAGES (NPMDS * 512)
#define MPOL_DEFAULT_ 0
#define MPOL_BIND_ 2
#define MPOL_MF_STRICT_ (1 << 0)
#define MPOL_MF_MOVE_ (1 << 1)

struct ctx {
	char *base;
	int nthreads;
	struct rounds rs;
	atomic_int running;
	uint64_t expect[MAX_THREADS][NPAGES];	/* last writes, 0: none */
	struct failbox *fb;
};

static long sys_mbind(void *addr, unsigned long len, int mode,
		      const unsigned long *nodes, unsigned long maxnode,
		      unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, nodes, maxnode, flags);
}

static long sys_set_mempolicy(int mode, const unsigned long *nodes,
			      unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, nodes, maxnode);
}

static long sys_move_pages(unsigned long count, void **pages, int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, NULL, status, 0);
}

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	unsigned long node0 = 1;
	uint64_t seed = test_seed() + t;
	unsigned seq = 0;
	int r;

	if (sys_set_mempolicy(MPOL_BIND_, &node0, 2))
		fail(c->fb, "thread %d: set_mempolicy(MPOL_BIND, node 0): %s",
		     t, strerror(errno));
	while ((r = rounds_next(&c->rs)) >= 0) {
		while (atomic_load(&c->running)) {
			long p = rnd(&seed) % NPAGES;
			uint64_t v = mkval(r, t, p, ++seq);

			*word_of(c->base, p, t) = v;
			c->expect[t][p] = v;
			atomic_fetch_add(&c->rs.progress, 1);
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

/* After a round: where the pages are, and what they hold. */
static void check_round(struct ctx *c, int r, long bound, void **pages,
			int *status, long *moved)
{
	if (sys_move_pages(NPAGES, pages, status)) {
		fail(c->fb, "round %d: move_pages(): %s", r, strerror(errno));
		return;
	}
	for (long p = 0; p < NPAGES; p++) {
		/* not present: -EFAULT in an anonymous VMA, else -ENOENT */
		if (status[p] == -EFAULT || status[p] == -ENOENT)
			continue;
		if (status[p] < 0)
			fail(c->fb, "round %d: page %ld: move_pages() status %d",
			     r, p, status[p]);
		else if (bound && status[p] != 1)
			fail(c->fb, "round %d: page %ld is on node %d after mbind(MPOL_BIND node 1, MOVE | STRICT) returned 0",
			     r, p, status[p]);
		else
			*moved += bound;
	}
	for (int t = 0; t < c->nthreads; t++)
		for (long p = 0; p < NPAGES; p++) {
			uint64_t v = *word_of(c->base, p, t);

			if (v != c->expect[t][p])
				fail(c->fb, "round %d: thread %d's word of page %ld is %#lx, it wrote %#lx",
				     r, t, p, (unsigned long)v,
				     (unsigned long)c->expect[t][p]);
		}
}

FIXTURE(mbind) {
	char *resv;
	size_t resv_len;
};

FIXTURE_SETUP(mbind)
{
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK)) {
		TH_LOG("needs two NUMA nodes: boot with numa=fake=2");
	}
}

FIXTURE_TEARDOWN(mbind)
{
	if (self->resv)
		munmap(self->resv, self->resv_len);
}

TEST_F_TIMEOUT(mbind, move_strict_race, SPF_TIMEOUT)
{
	struct ctx *c;
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	unsigned long node1 = 2;
	long rounds = 0, bound = 0, eio = 0, moved = 0;
	void **pages;
	int *status;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	pages = calloc(NPAGES, sizeof(*pages));
	status = calloc(NPAGES, sizeof(*status));
	ASSERT_NE(NULL, pages);
	ASSERT_NE(NULL, status);
	c->nthreads = test_threads();
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->base = reserve_pmds(NPMDS, &self->resv, &self->resv_len);
	ASSERT_NE(NULL, c->base);
	ASSERT_EQ(c->base, map_anon(c->base, NPAGES * PS, MAP_FIXED));
	for (long p = 0; p < NPAGES; p++)
		pages[p] = c->base + p * PS;

	SPF_BEGIN(spf0);
	ASSERT_EQ(0, rounds_start(&c->rs, c->nthreads, worker, c));
	for (int r = 0; now_s() < end && !failed(c->fb); r++) {
		long ret, was_bound = 0;

		if (sys_mbind(c->base, NPAGES * PS, MPOL_DEFAULT_, NULL, 0, 0))
			fail(c->fb, "round %d: mbind(MPOL_DEFAULT): %s", r,
			     strerror(errno));
		if (madvise(c->base, NPAGES * PS, MADV_DONTNEED))
			fail(c->fb, "round %d: MADV_DONTNEED: %s", r,
			     strerror(errno));
		memset(c->expect, 0, sizeof(c->expect));
		atomic_store(&c->running, 1);
		rounds_release(&c->rs, r);
		/* a few hundred pages in, many page tables populated */
		wait_progress(&c->rs.progress, 200 + rnd(&seed) % 800,
			      end + 1);
		ret = sys_mbind(c->base, NPAGES * PS, MPOL_BIND_, &node1, 3,
				MPOL_MF_MOVE_ | MPOL_MF_STRICT_);
		if (!ret) {
			bound++;
			was_bound = 1;
		} else if (errno == EIO) {
			eio++;
		} else {
			fail(c->fb, "round %d: mbind(MPOL_BIND, MOVE | STRICT): %s",
			     r, strerror(errno));
		}
		atomic_store(&c->running, 0);
		rounds_wait(&c->rs);
		check_round(c, r, was_bound, pages, status, &moved);
		rounds++;
	}
	rounds_stop(&c->rs);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");

	TH_LOG("%ld rounds: mbind() bound %ld times (%ld pages found on node 1 after), EIO %ld times; seed %#lx",
	       rounds, bound, moved, eio, (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, bound);
	failbox_free(c->fb);
	free(pages);
	free(status);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(mbind, move_strict_race)

TEST_HARNESS_MAIN
