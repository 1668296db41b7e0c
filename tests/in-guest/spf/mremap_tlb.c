// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative copy-on-write (wp_page_copy()) between validating
 * under the PTE lock and replacing the PTE, against mremap() moving the
 * whole page table to another address (move_normal_pmd(), which moves
 * the table, not its PTEs). The copy flushes the TLB for the address it
 * faulted on; if the table moved meanwhile, another CPU may have cached
 * the new address's translation to the old page, and keeps reading the
 * old page after the copy replaced it: stale data, and once the old page
 * is freed, somebody else's. The move must take the table's PTE lock, so
 * that a copy that holds it finishes at the old address first.
 *
 * Two 2 MiB-aligned slots; the region moves from one to the other every
 * round. Each round the main thread (on CPU 1) zaps the region and reads
 * every page (the zero page, read-only), then lets the copier (CPU 0)
 * write to page k: a copy of the zero page, which spf_delay=cow_locked
 * holds between validation and the PTE switch. Meanwhile the main thread
 * moves the region with mremap(MREMAP_FIXED); once it returns, the reader
 * (CPU 1) reads page k at the new address, caching its translation. When
 * the copier is done, the main thread moves to CPU 0, writes a fresh
 * value to page k at the new address, and the reader, which never left
 * CPU 1, reads it: anything else is a stale translation.
 *
 * The window is reached when the copy ended in the moved table while the
 * copier's retried write found the old address gone (SIGSEGV): the copy
 * was in flight across the move. /proc/self/pagemap (root) tells that
 * page k at the new address is no longer the zero page.
 */
#include "spf_window.h"

#define DELAY "cow_locked:30000"
#define NPAGES 512

struct ctx {
	char *slot[2];
	char *src, *dst;	/* this round's */
	long k;			/* the page copied this round */
	atomic_int go;		/* round the copier may write in */
	atomic_int copied;	/* round the copier is done with */
	atomic_int moved;	/* round whose mremap() returned */
	atomic_int check;	/* round the reader may check */
	atomic_int checked;	/* round the reader is done with */
	atomic_int stop;
	int segv;		/* the copier's write of this round faulted */
	uint64_t fresh;		/* what the main thread wrote at dst */
	uint64_t first;		/* what the reader read after the move */
	struct failbox *fb;
};

static int wait_for(atomic_int *a, int r, atomic_int *stop)
{
	while (atomic_load(a) != r)
		if (atomic_load(stop))
			return -1;
	return 0;
}

static void *copier(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(0))
		fail(c->fb, "copier: cannot run on CPU 0: %s", strerror(errno));
	for (int r = 1; !wait_for(&c->go, r, &c->stop); r++) {
		volatile uint64_t *w = (volatile uint64_t *)(c->src + c->k * PS);

		c->segv = probe_write(w, mkval(r, 0, c->k, 1)) != 0;
		atomic_store(&c->copied, r);
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "reader: cannot run on CPU 1: %s", strerror(errno));
	for (int r = 1; !wait_for(&c->moved, r, &c->stop); r++) {
		volatile uint64_t *w = (volatile uint64_t *)(c->dst + c->k * PS);
		uint64_t v;

		c->first = *w;
		if (wait_for(&c->check, r, &c->stop))
			break;
		v = *w;
		if (v != c->fresh)
			fail(c->fb, "round %d: page %ld at the new address reads %#lx on CPU 1 (%#lx after the move), CPU 0 wrote %#lx: a stale translation survived the copy",
			     r, c->k, (unsigned long)v,
			     (unsigned long)c->first, (unsigned long)c->fresh);
		atomic_store(&c->checked, r);
	}
	return NULL;
}

SPF_WINDOW_FIXTURE(mremap_tlb, DELAY);

TEST_F_TIMEOUT(mremap_tlb, race, SPF_TIMEOUT)
{
	struct ctx *c;
	double end = now_s() + test_seconds();
	long rounds = 0, raced = 0, moved_first = 0;
	long long zero_pfn;
	pthread_t tc, tr;
	char *base;
	int r;

	SPF_WINDOW_CTX(c);
	base = reserve_pmds(2, &self->map, &self->map_len);
	ASSERT_NE(NULL, base);
	c->slot[0] = base;
	c->slot[1] = base + PMD_SIZE_;
	ASSERT_EQ(c->slot[0], map_anon(c->slot[0], PMD_SIZE_, MAP_FIXED));
	/* the zero page's frame: what a read fault maps */
	(void)*(volatile uint64_t *)c->slot[0];
	zero_pfn = pagemap_pfn(c->slot[0]);
	if (zero_pfn <= 0)
		SKIP(return, "no frame numbers in /proc/self/pagemap (not root?)");
	ASSERT_EQ(0, pin_to_cpu(1));

	SPF_BEGIN(spf0);
	ASSERT_EQ(0, pthread_create(&tc, NULL, copier, c));
	ASSERT_EQ(0, pthread_create(&tr, NULL, reader, c));
	for (r = 1; !failed(c->fb); r++) {
		c->src = c->slot[(r - 1) & 1];
		c->dst = c->slot[r & 1];
		c->k = (r * 37) % NPAGES;
		ASSERT_EQ(0, madvise(c->src, PMD_SIZE_, MADV_DONTNEED));
		for (long p = 0; p < NPAGES; p++)
			(void)*(volatile uint64_t *)(c->src + p * PS);
		atomic_store(&c->go, r);
		/* let the copier get into its copy */
		usleep(3000);
		ASSERT_EQ(c->dst, mremap(c->src, PMD_SIZE_, PMD_SIZE_,
					 MREMAP_MAYMOVE | MREMAP_FIXED, c->dst));
		ASSERT_EQ(0, re_reserve(c->src, PMD_SIZE_));
		atomic_store(&c->moved, r);
		while (atomic_load(&c->copied) != r)
			usleep(100);
		if (pagemap_pfn(c->dst + c->k * PS) == zero_pfn)
			moved_first++;	/* the move came before the copy */
		else if (c->segv)
			raced++;
		/* write from the other CPU, which has no stale translation */
		ASSERT_EQ(0, pin_to_cpu(0));
		c->fresh = mkval(r, 1, c->k, 2);
		*(volatile uint64_t *)(c->dst + c->k * PS) = c->fresh;
		atomic_store(&c->check, r);
		while (atomic_load(&c->checked) != r && !failed(c->fb))
			sched_yield();
		ASSERT_EQ(0, pin_to_cpu(1));
		rounds++;
		if (now_s() > end && raced > 0)
			break;
		if (now_s() > end + 2 * test_seconds())
			break;
	}
	atomic_store(&c->stop, 1);
	pthread_join(tc, NULL);
	pthread_join(tr, NULL);
	SPF_END(spf0, NULL);

	TH_LOG("%ld rounds: %ld copies in flight across the move (the race), %ld moves before the copy",
	       rounds, raced, moved_first);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, raced);
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(mremap_tlb, race)

TEST_HARNESS_MAIN
