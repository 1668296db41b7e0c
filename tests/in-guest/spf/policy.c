// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative anonymous fault in a VMA with a memory policy of
 * its own, between the lookup (where it copies the VMA, and so the
 * pointer to its policy) and the allocation that reads the policy,
 * against mbind() replacing the policy. mbind() marks the VMA, replaces
 * the policy and drops the old one; the fault finds the mark only under
 * the PTE lock, after it allocated by the old policy, which must still be
 * there: policies are freed after a grace period (the fault runs under
 * RCU). Freed at once (spf_hole=policy), the fault reads freed memory,
 * which KASAN reports.
 *
 * A guest with two NUMA nodes (numa=fake=2), a VMA of PAGES pages bound
 * to one node or the other (MPOL_BIND):
 *
 *  1. alone: each round binds the VMA to the other node, zaps it and
 *     writes every page (speculative faults, which allocate by the VMA's
 *     policy): each page must be on the policy's node
 *     (get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR));
 *  2. the writes on CPU 0, each held by spf_delay=walk between the
 *     lookup and the allocation, while a thread on CPU 1 binds the VMA to
 *     the other node a few milliseconds into each write: the write
 *     allocates by the replaced policy and must then give up on mbind()'s
 *     mark (the debug kernel charges those aborts to the writer that
 *     marked, spf_abort_writers; mbind() is the only one here), and every
 *     value written must read back.
 */
#include "spf_window.h"
#include <linux/mempolicy.h>

#define DELAY "walk:40000"	/* longer than a grace period here */
#define PAGES 8
#define BIND_AFTER_US 5000	/* into the write's 40 ms delay */

struct ctx {
	char *b;
	struct failbox *fb;
	atomic_int go;		/* the write is about to start */
	atomic_int bound;	/* the binder's mbind() returned */
	atomic_int node;	/* the node it bound the VMA to */
	atomic_int stop;
};

static long sys_mbind(void *addr, unsigned long len, int mode,
		      const unsigned long *nodes, unsigned long maxnode,
		      unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, nodes, maxnode, flags);
}

/* Bind the whole VMA to node; 0 or -1. */
static int bind_to(struct ctx *c, int node)
{
	unsigned long mask = 1UL << node;

	if (sys_mbind(c->b, PAGES * PS, MPOL_BIND, &mask, sizeof(mask) * 8, 0)) {
		fail(c->fb, "mbind(MPOL_BIND, node %d): %s", node,
		     strerror(errno));
		return -1;
	}
	return 0;
}

/* The node of the page at p, or -1. */
static int node_of(struct ctx *c, char *p)
{
	int node = -1;

	if (syscall(SYS_get_mempolicy, &node, NULL, 0, p,
		    MPOL_F_NODE | MPOL_F_ADDR)) {
		fail(c->fb, "get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR, %p): %s",
		     (void *)p, strerror(errno));
		return -1;
	}
	return node;
}

/* Write page p of round r and check its node; false on a failure. */
static bool write_on(struct ctx *c, long r, long p, int want)
{
	volatile uint64_t *w = (volatile uint64_t *)(c->b + p * PS);
	uint64_t v = mkval(r, 0, p, 1);
	int node;

	*w = v;
	if (*w != v) {
		fail(c->fb, "round %ld: page %ld reads %#lx, wrote %#lx", r, p,
		     (unsigned long)*w, (unsigned long)v);
		return false;
	}
	node = node_of(c, c->b + p * PS);
	if (node != want) {
		if (node >= 0)
			fail(c->fb, "round %ld: page %ld is on node %d, the VMA is bound to node %d",
			     r, p, node, want);
		return false;
	}
	return true;
}

static long run_alone(struct ctx *c, double seconds)
{
	double end = now_s() + seconds;
	long r;

	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		if (bind_to(c, r % 2) ||
		    madvise(c->b, PAGES * PS, MADV_DONTNEED))
			break;
		for (long p = 0; p < PAGES; p++)
			if (!write_on(c, r, p, r % 2))
				break;
	}
	return r - 1;
}

/* On CPU 1: bind the VMA to the other node during each write. */
static void *binder(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "binder: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		if (!atomic_exchange(&c->go, 0)) {
			sched_yield();
			continue;
		}
		usleep(BIND_AFTER_US);
		if (bind_to(c, !atomic_load(&c->node)))
			break;
		atomic_store(&c->node, !atomic_load(&c->node));
		atomic_store(&c->bound, 1);
	}
	return NULL;
}

/* One page a round, zapped and written while the binder rebinds the VMA. */
static long run_race(struct __test_metadata *_metadata, struct ctx *c,
		     double seconds)
{
	double end = now_s() + seconds;
	pthread_t tb;
	long r;

	atomic_store(&c->node, 0);
	if (bind_to(c, 0))
		return 0;
	ASSERT_EQ(0, pthread_create(&tb, NULL, binder, c));
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		long p = r % PAGES;
		volatile uint64_t *w = (volatile uint64_t *)(c->b + p * PS);
		uint64_t v = mkval(r, 0, p, 2);

		if (madvise(c->b + p * PS, PS, MADV_DONTNEED)) {
			fail(c->fb, "MADV_DONTNEED: %s", strerror(errno));
			break;
		}

		atomic_store(&c->bound, 0);
		atomic_store(&c->go, 1);
		*w = v;
		if (*w != v)
			fail(c->fb, "round %ld: page %ld reads %#lx, wrote %#lx",
			     r, p, (unsigned long)*w, (unsigned long)v);
		/* one mbind() a write: the binder's may still be on its way */
		while (!atomic_load(&c->bound) && !failed(c->fb))
			sched_yield();
	}
	atomic_store(&c->stop, 1);
	pthread_join(tb, NULL);
	return r - 1;
}

SPF_WINDOW_FIXTURE(policy, DELAY);

TEST_F_TIMEOUT(policy, race, SPF_TIMEOUT)
{
	long alone, raced;
	long long stopped;
	char writers[512];
	struct ctx *c;

	SPF_WINDOW_CTX(c);
	/* PROT_NONE guards: the VMA merges with no neighbour */
	self->map_len = (PAGES + 2) * PS;
	self->map = mmap(NULL, self->map_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	c->b = map_anon(self->map + PS, PAGES * PS, MAP_FIXED);
	ASSERT_NE(NULL, c->b);
	/* its anon_vma and page table */
	memset(c->b, 1, PAGES * PS);
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	alone = run_alone(c, test_seconds() / 2);
	spf_writers_reset();
	raced = failed(c->fb) ? 0 : run_race(_metadata, c, test_seconds() / 2);
	stopped = spf_writers_read(writers, sizeof(writers), NULL);
	SPF_END(spf0, NULL);

	TH_LOG("alone: %ld rounds of %d pages, each on its policy's node", alone,
	       PAGES);
	TH_LOG("beside the binder: %ld writes, %lld faults stopped by mbind marks (%s)",
	       raced, stopped, writers);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, alone);
	EXPECT_LT(0, raced);
	EXPECT_LT(0, stopped);
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(policy, race)

TEST_HARNESS_MAIN
