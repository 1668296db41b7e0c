// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative fault that finds its page table's PTE lock held
 * waits for it with interrupts enabled, then starts its checks again
 * (spf_pte_map_lock()). While it waits, munmap() can mark the VMA, zap
 * the table under the lock the fault waits for and free the table: the
 * fault must see the mark and give up. One that took the lock of the
 * table it checked before waiting would install its page into a freed
 * table, where nothing unmaps it again: the page leaks, and the mm's RSS
 * counters are off when the process exits ("Bad rss-counter" in the
 * kernel log, which the runner checks after each test).
 *
 * One anonymous VMA of 2 MiB, one page table. The main thread (CPU 0)
 * zaps and writes page 0 again and again; a neighbour thread (CPU 1)
 * zaps and writes page 1, and with spf_delay=zap each zap holds the
 * table's lock for the delay, so the main thread's faults find it held
 * and wait (spf_pte_lock_waited moves only when a fault took the lock
 * after waiting):
 *
 *  1. the main thread and the neighbour: every value written reads back;
 *  2. the same, and a third thread (CPU 1) that unmaps the VMA and maps
 *     it again every few milliseconds, so that its munmap() marks the
 *     VMA while faults wait, zaps under the lock they wait for, and
 *     frees the table.
 */
#include "spf_window.h"

#include <sys/prctl.h>

#define DELAY "zap:1000"
#define REMAP_US 3000	/* the remapper's pause between its munmap()s */

struct ctx {
	char *b;		/* the VMA, 2 MiB-aligned */
	atomic_int stop;
	atomic_long zaps;	/* the neighbour's MADV_DONTNEEDs */
	atomic_long remaps;
	struct failbox *fb;
};

/* Zap and write page 1, each zap holding the table's lock for the delay. */
static void *neighbour(void *arg)
{
	struct ctx *c = arg;
	volatile uint64_t *w = (volatile uint64_t *)(c->b + PS);

	if (pin_to_cpu(1))
		fail(c->fb, "neighbour: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		/* unmapped meanwhile in phase 2: both may fail */
		if (!madvise(c->b + PS, PS, MADV_DONTNEED))
			atomic_fetch_add(&c->zaps, 1);
		probe_write(w, 1);
	}
	return NULL;
}

/* Unmap the VMA and map it again, a page written to give it an anon_vma. */
static void *remapper(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "remapper: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		usleep(REMAP_US);
		if (munmap(c->b, PMD_SIZE_)) {
			fail(c->fb, "remapper: munmap(): %s", strerror(errno));
			break;
		}
		if (mmap(c->b, PMD_SIZE_, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != c->b) {
			fail(c->fb, "remapper: mmap() at %p: %s", c->b,
			     strerror(errno));
			break;
		}
		probe_write((volatile uint64_t *)(c->b + 2 * PS), 1);
		atomic_fetch_add(&c->remaps, 1);
	}
	return NULL;
}

struct phase {
	long rounds;
	long long waited;	/* spf_pte_lock_waited */
	long long changed;	/* spf_abort_vma_changed */
};

/*
 * One phase of seconds: the neighbour (and the remapper, if remap) beside
 * this thread zapping and writing page 0. Without the remapper every
 * write must read back; with it a write may meet an unmapped VMA or be
 * unmapped before it is read, and the kernel log is the check.
 */
static void run_phase(struct __test_metadata *_metadata, struct ctx *c,
		      double seconds, bool remap, struct phase *ph)
{
	volatile uint64_t *w = (volatile uint64_t *)c->b;
	long long waited0 = vmstat("spf_pte_lock_waited");
	long long changed0 = vmstat("spf_abort_vma_changed");
	pthread_t tn, tr;
	double end;
	int r;

	atomic_store(&c->stop, 0);
	ASSERT_EQ(0, pthread_create(&tn, NULL, neighbour, c));
	if (remap)
		ASSERT_EQ(0, pthread_create(&tr, NULL, remapper, c));
	end = now_s() + seconds;
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		uint64_t v = mkval(r, 0, 0, 1);

		if (madvise(c->b, PS, MADV_DONTNEED) && !remap) {
			fail(c->fb, "round %d: MADV_DONTNEED: %s", r,
			     strerror(errno));
			break;
		}
		if (probe_write(w, v)) {
			if (!remap)
				fail(c->fb, "round %d: write to page 0: signal %d",
				     r, probe_signo);
			continue;
		}
		if (!remap && *w != v)
			fail(c->fb, "round %d: page 0 reads %#lx, wrote %#lx",
			     r, (unsigned long)*w, (unsigned long)v);
	}
	atomic_store(&c->stop, 1);
	pthread_join(tn, NULL);
	if (remap)
		pthread_join(tr, NULL);
	ph->rounds = r - 1;
	ph->waited = vmstat("spf_pte_lock_waited") - waited0;
	ph->changed = vmstat("spf_abort_vma_changed") - changed0;
}

SPF_WINDOW_FIXTURE(pte_wait, DELAY);

TEST_F_TIMEOUT(pte_wait, race, SPF_TIMEOUT)
{
	struct phase alone, remapped;
	struct ctx *c;

	SPF_WINDOW_CTX(c);
	/* page faults, not huge ones, in the VMAs the remapper maps */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	c->b = reserve_pmds(1, &self->map, &self->map_len);
	ASSERT_NE(NULL, c->b);
	ASSERT_EQ(c->b, mmap(c->b, PMD_SIZE_, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	/* the anon_vma and the page table */
	memset(c->b, 1, 4 * PS);
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	run_phase(_metadata, c, test_seconds() / 2, false, &alone);
	if (!failed(c->fb))
		run_phase(_metadata, c, test_seconds() / 2, true, &remapped);
	SPF_END(spf0, "spf_pte_lock_waited");

	TH_LOG("beside the neighbour's %ld zaps: %ld rounds, %lld faults took the PTE lock after waiting",
	       atomic_load(&c->zaps), alone.rounds, alone.waited);
	TH_LOG("and the remapper's %ld munmap()s: %ld rounds, %lld waited, %lld gave up on a mark",
	       atomic_load(&c->remaps), remapped.rounds, remapped.waited,
	       remapped.changed);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	/* the window: faults waited for the lock and went on */
	EXPECT_LT(0, alone.waited);
	EXPECT_LT(0, atomic_load(&c->remaps));
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(pte_wait, race)

TEST_HARNESS_MAIN
