// SPDX-License-Identifier: GPL-2.0
/*
 * Faults on anonymous memory that is being paged out to swap.
 *
 * Needs swap: tests/qemu/spf-races boots its guests with qemu/run --swap.
 * Page p of the region belongs to thread p % n, which in each pass reads
 * its word of each of its pages, checks it is its own last write (0
 * before the first), and writes a new value. Meanwhile the main thread
 * pages random ranges out with MADV_PAGEOUT, so that the threads fault on
 * swap entries. zram swaps pages of one owner in without the swap cache:
 * those faults need I/O, which speculation gives up (spf_abort_swap) to
 * the classic path. A page still or again in the swap cache is mapped
 * speculatively (spf_success_swap).
 *
 *  pageout: as above.
 *  fork: the main thread also forks after every few pageouts. The child
 *   reads every page (each word 0 or a value of the page's thread for
 *   that page), pages all of its copy out, reads it back (the same
 *   values) and exits. Pages that were swapped out at the fork are
 *   shared with the child through their swap entries: the parent's
 *   threads swap them in and copy them on write, with no KSM involved.
 *   Shared entries are swapped in through the swap cache, with readahead:
 *   faults on the pages read ahead are hits.
 *  willneed: after each pageout, MADV_WILLNEED on the same range reads
 *   the pages back into the swap cache (those the threads did not fault
 *   in first): the threads' faults there are swap-cache hits, mapped
 *   speculatively while reclaim pages them out again (a folio it holds
 *   locked: spf_abort_swap_locked).
 *  mprotect: willneed, and PROT_EXEC set and cleared on random ranges
 *   eight times a round, so that the VMA is split, merged and changed
 *   under the hits.
 *  munmap: willneed, and a random range unmapped and mapped again in one
 *   mmap(MAP_FIXED) each round: pages, swap entries and swap-cache pages
 *   freed under the hits; a thread may then read zero there.
 *  swapoff: willneed, and every few pageouts the swap device is swapped
 *   off and on again: swapoff() reads every swapped page back and maps
 *   it under the threads' faults. No counter shows that race (swapoff
 *   stops get_swap_device() only once no PTE holds a swap entry, which
 *   makes spf_abort_swapoff rare): the threads must have checked values
 *   while swapoff() ran.
 *
 * Checks: the values; pswpout and pswpin moved (pages went to swap and
 * came back); speculative faults completed (the region's first touches)
 * and, but for pageout, swap-cache hits were mapped speculatively;
 * the counter of the race each variant is about moved.
 */
#include "spf_common.h"

#include <sys/swap.h>

#define NPAGES 256
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

struct ctx {
	char *base;
	size_t len;
	int nthreads;
	atomic_int stop;
	atomic_long checked, passes;
	/* munmap: pages replaced so far, odd while page p is replaced */
	atomic_long gen[NPAGES];
	struct failbox *fb;
};

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	uint64_t expect[NPAGES] = { 0 };
	long gen[NPAGES] = { 0 };	/* c->gen[p] before the last write */
	unsigned seq = 0;

	for (long round = 0; !atomic_load(&c->stop) && !failed(c->fb); round++) {
		for (long p = t; p < NPAGES; p += c->nthreads) {
			volatile uint64_t *w = word_of(c->base, p, t);
			uint64_t v = *w, nv = mkval(round, t, p, ++seq);

			/*
			 * A zero page replaced the one written since that
			 * write: c->gen[p] moved, or is odd, the replacement
			 * still under way. Read after v, which could only be
			 * zero once the replacement had begun.
			 */
			long g = atomic_load(&c->gen[p]);

			if (v == 0 && (g != gen[p] || g % 2))
				expect[p] = 0;
			gen[p] = g;
			atomic_signal_fence(memory_order_seq_cst);
			if (v != expect[p]) {
				fail(c->fb, "round %ld: thread %d page %ld: read %#lx, expected %#lx",
				     round, t, p, (unsigned long)v,
				     (unsigned long)expect[p]);
				return NULL;
			}
			*w = nv;
			expect[p] = nv;
			atomic_fetch_add(&c->checked, 1);
		}
		atomic_fetch_add(&c->passes, 1);
	}
	return NULL;
}

/* Is v a value that page p's thread can have written there? */
static bool legal(const struct ctx *c, uint64_t v, long p)
{
	return v == 0 || (val_thread(v) == p % c->nthreads && val_page(v) == p);
}

/* The child of fork n: read, page out, read again. */
static int child(struct ctx *c, long n)
{
	static uint64_t snap[NPAGES];

	for (long p = 0; p < NPAGES; p++) {
		snap[p] = *word_of(c->base, p, p % c->nthreads);
		if (!legal(c, snap[p], p)) {
			fail(c->fb, "round %ld: child: page %ld holds %#lx, not its thread's",
			     n, p, (unsigned long)snap[p]);
			return 1;
		}
	}
	if (madvise(c->base, c->len, MADV_PAGEOUT)) {
		fail(c->fb, "round %ld: child: MADV_PAGEOUT: %s", n,
		     strerror(errno));
		return 1;
	}
	for (long p = 0; p < NPAGES; p++) {
		uint64_t v = *word_of(c->base, p, p % c->nthreads);

		if (v != snap[p]) {
			fail(c->fb, "round %ld: child: page %ld read %#lx after its pageout, %#lx before",
			     n, p, (unsigned long)v, (unsigned long)snap[p]);
			return 1;
		}
	}
	return 0;
}

/*
 * munmap: a random range unmapped and mapped again with one
 * mmap(MAP_FIXED), so that no thread faults on a hole: its pages and swap
 * entries are freed under the faults, and the threads find zero pages
 * there (allowed, since c->gen moved). Whether that went well.
 */
static bool remap(struct ctx *c, uint64_t *seed)
{
	long lo, hi;
	char *p;

	rnd_range(seed, NPAGES, &lo, &hi);
	for (long i = lo; i < hi; i++)
		atomic_fetch_add(&c->gen[i], 1);
	p = mmap(c->base + lo * PS, (hi - lo) * PS, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	for (long i = lo; i < hi; i++)
		atomic_fetch_add(&c->gen[i], 1);
	if (p == MAP_FAILED) {
		fail(c->fb, "mmap(MAP_FIXED) of pages [%ld, %ld): %s", lo, hi,
		     strerror(errno));
		return false;
	}
	madvise(p, (hi - lo) * PS, MADV_NOHUGEPAGE);
	return true;
}

/*
 * The first swap device in /proc/swaps, into dev[size]: whether there is
 * one.
 */
static bool swap_device(char *dev, size_t size)
{
	char line[256], fmt[16];
	bool found = false;
	FILE *f = fopen("/proc/swaps", "r");

	if (!f)
		return false;
	snprintf(fmt, sizeof(fmt), "%%%zus", size - 1);
	/* the header, then "/dev/zram0 partition 262140 0 100" */
	if (fgets(line, sizeof(line), f) && fgets(line, sizeof(line), f))
		found = sscanf(line, fmt, dev) == 1;
	fclose(f);
	return found;
}

FIXTURE(swap) {
	struct ctx *c;
	char dev[128];
	bool off;		/* swapoff() done, swapon() not yet */
};

FIXTURE_VARIANT(swap) {
	bool fork, willneed, mprotect, munmap, swapoff;
	bool hits;		/* spf_success_swap must move */
	/* the counters one of which shows the race; NULL: no counter does */
	const char *raced[3];
};

FIXTURE_VARIANT_ADD(swap, pageout) {
	.raced = { "spf_abort_swap" },
};

FIXTURE_VARIANT_ADD(swap, fork) {
	.fork = true,
	.hits = true,
	.raced = { "spf_abort_swap" },
};

FIXTURE_VARIANT_ADD(swap, willneed) {
	.willneed = true,
	.raced = { "spf_abort_swap_locked" },
};

FIXTURE_VARIANT_ADD(swap, mprotect) {
	.willneed = true,
	.mprotect = true,
	.raced = { "spf_abort_vma_changed", "spf_abort_vma_busy" },
};

FIXTURE_VARIANT_ADD(swap, munmap) {
	.willneed = true,
	.munmap = true,
	.raced = { "spf_abort_vma_changed", "spf_abort_vma_busy" },
};

FIXTURE_VARIANT_ADD(swap, swapoff) {
	.willneed = true,
	.swapoff = true,
};

FIXTURE_SETUP(swap)
{
	ASSERT_TRUE(swap_device(self->dev, sizeof(self->dev)))
		TH_LOG("no swap in /proc/swaps: boot with qemu/run --swap SIZE");
}

FIXTURE_TEARDOWN(swap)
{
	struct ctx *c = self->c;

	/* Leave the swap as it was for the tests that follow. */
	if (self->off && swapon(self->dev, 0))
		TH_LOG("swapon %s: %s: the guest has no swap now", self->dev,
		       strerror(errno));
	if (!c)
		return;
	if (c->base)
		munmap(c->base, c->len);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

TEST_F_TIMEOUT(swap, race, SPF_TIMEOUT)
{
	struct team tm = { 0 };
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long pageouts = 0, forks = 0, swapoffs = 0, during_swapoff = 0;
	long long out0 = vmstat("pswpout"), in0 = vmstat("pswpin");
	struct ctx *c;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0, sizeof(*c));
	self->c = c;
	c->nthreads = test_threads();
	c->len = NPAGES * PS;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);

	SPF_BEGIN(spf0);
	if (variant->willneed || variant->hits)
		spf0.also_success = "spf_success_swap";
	/* mapped inside the run: the first touches are speculative faults */
	c->base = map_anon(NULL, c->len, 0);
	ASSERT_NE(NULL, c->base);
	prefault_stack();
	ASSERT_EQ(0, team_run(&tm, c->nthreads, worker, c));
	while (now_s() < end && !failed(c->fb)) {
		long lo, hi;

		rnd_range(&seed, NPAGES, &lo, &hi);
		if (madvise(c->base + lo * PS, (hi - lo) * PS, MADV_PAGEOUT)) {
			fail(c->fb, "round %ld: MADV_PAGEOUT of pages [%ld, %ld): %s",
			     pageouts, lo, hi, strerror(errno));
			break;
		}
		pageouts++;
		if (variant->willneed) {
			/* and at once back into the swap cache, most of them */
			if (madvise(c->base + lo * PS, (hi - lo) * PS,
				    MADV_WILLNEED)) {
				fail(c->fb, "round %ld: MADV_WILLNEED of pages [%ld, %ld): %s",
				     pageouts, lo, hi, strerror(errno));
				break;
			}
		}
		for (int i = 0; variant->mprotect && i < 8; i++) {
			int prot = PROT_READ | PROT_WRITE;

			rnd_range(&seed, NPAGES, &lo, &hi);
			if (mprotect(c->base + lo * PS, (hi - lo) * PS,
				     prot | (i & 1 ? 0 : PROT_EXEC))) {
				fail(c->fb, "round %ld: mprotect of pages [%ld, %ld): %s",
				     pageouts, lo, hi, strerror(errno));
				break;
			}
		}
		if (failed(c->fb))
			break;
		if (variant->munmap && !remap(c, &seed))
			break;
		if (variant->swapoff && pageouts % 16 == 0) {
			long checked = atomic_load(&c->checked);

			/* every swapped page comes back, under the faults */
			if (swapoff(self->dev)) {
				fail(c->fb, "round %ld: swapoff %s: %s",
				     pageouts, self->dev, strerror(errno));
				break;
			}
			self->off = true;
			during_swapoff += atomic_load(&c->checked) - checked;
			if (swapon(self->dev, 0)) {
				fail(c->fb, "round %ld: swapon %s: %s",
				     pageouts, self->dev, strerror(errno));
				break;
			}
			self->off = false;
			swapoffs++;
		}
		if (variant->fork && pageouts % 8 == 0) {
			pid_t pid = fork();
			int st;

			if (pid == 0)
				_exit(child(c, forks));
			if (pid < 0 || waitpid(pid, &st, 0) != pid) {
				fail(c->fb, "round %ld: fork: %s", forks,
				     strerror(errno));
				break;
			}
			if (!WIFEXITED(st) || (WEXITSTATUS(st) && !failed(c->fb)))
				fail(c->fb, "round %ld: the child ended with status %#x",
				     forks, st);
			forks++;
		}
		usleep(rnd(&seed) % 2000);
	}
	atomic_store(&c->stop, 1);
	team_join(&tm);

	TH_LOG("%ld pageouts, %ld forks, %ld swapoffs, %ld passes, %ld values checked; pswpout +%lld, pswpin +%lld; seed %#lx",
	       pageouts, forks, swapoffs, atomic_load(&c->passes),
	       atomic_load(&c->checked), vmstat("pswpout") - out0,
	       vmstat("pswpin") - in0, (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, vmstat("pswpout") - out0);
	EXPECT_LT(0, vmstat("pswpin") - in0);
	if (variant->fork)
		EXPECT_LT(0, forks);
	if (variant->swapoff) {
		TH_LOG("%ld values checked while swapoff() ran", during_swapoff);
		EXPECT_LT(0, swapoffs);
		EXPECT_LT(0, during_swapoff);
	}
	spf_run_end(_metadata, &spf0, variant->raced);
}

SPF_SCALE_TIMEOUT(swap, race)

TEST_HARNESS_MAIN
