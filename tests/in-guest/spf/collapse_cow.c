// SPDX-License-Identifier: GPL-2.0
/*
 * Window: khugepaged's collapse_pte_mapped_thp() (here through
 * MADV_COLLAPSE) between removing the rmap of a PTE table's pages and
 * freeing the table, against speculative copies of those pages on write
 * faults (wp_page_copy() on a private file mapping). The collapse must
 * have marked the VMA before its first step: a copy that validates in
 * that window would drop the page-cache THP's mapcount and reference a
 * second time, install its anonymous PTE into a table about to be freed
 * and lose the write.
 *
 * A 4 MiB memfd mapped MAP_PRIVATE, 2 MiB-aligned, with an anon_vma (a
 * copy in the second 2 MiB) and a THP in the page cache for the first
 * 2 MiB. Each round: zap the first 2 MiB, fault page 0 in and zap it
 * again (a PTE table, not a huge PMD), read every 16th page (fault-around
 * maps all 512 subpages read-only), then MADV_COLLAPSE the range while
 * the writers, started a few milliseconds later, write their word of
 * every page of theirs: each write copies the page. With
 * spf_delay=collapse the collapse waits between the two steps. Checks:
 * every write a writer made is in place after the round, the rest of the
 * page is the file's; the kernel log clean (the RSS counters are checked
 * exactly when the process exits: a "Bad rss-counter"; a "Bad page
 * map" or "Bad page state" for the THP's mapcount and references).
 * The window is reached when writes overlapped a collapse that went
 * through (spf_abort_vma_busy or spf_abort_vma_changed: the collapse's
 * mark stopped a copy).
 *
 * The writers must come while the collapse waits, after it dropped the
 * PTE lock: the main thread runs on CPU 0, the writers on CPU 1 (the
 * wait does not let CPU 0 run a writer woken there), and a round in
 * which a copy found the PTE lock taken (spf_abort_pte_lock: the writers
 * came during the first two steps, and on a kernel that marks late they
 * then wait for the collapse on mmap_lock and miss the window) starts
 * the writers of the next round a millisecond later.
 */
#include "spf_file.h"
#include "spf_window.h"

#define DELAY "collapse:20000"
#define NPAGES 512
#define WRITERS 2
#define START_US 2000		/* the writers' first start after the collapse */
#define START_MAX_US 18000	/* below the delay's end */

struct ctx {
	char *base;
	int fd;
	atomic_int round;	/* the round the writers may start */
	atomic_int done;	/* writers through with the round */
	atomic_int stop;
	int start_us;		/* how long after the collapse began */
	uint64_t expect[WRITERS][NPAGES];
	struct failbox *fb;
};

static void *writer(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id, seen = 0;

	if (pin_to_cpu(1))
		fail(c->fb, "writer %d: cannot run on CPU 1: %s", t,
		     strerror(errno));
	while (!atomic_load(&c->stop)) {
		int r = atomic_load(&c->round);

		if (r == seen) {
			sched_yield();
			continue;
		}
		seen = r;
		usleep(c->start_us);
		for (long p = t; p < NPAGES; p += WRITERS) {
			volatile uint64_t *w = word_of(c->base, p, t);
			uint64_t v = mkval(r, t, p, 1);

			if (probe_write(w, v)) {
				fail(c->fb, "round %d: write to page %ld: signal %d",
				     r, p, probe_signo);
				break;
			}
			c->expect[t][p] = v;
		}
		atomic_fetch_add(&c->done, 1);
	}
	return NULL;
}

SPF_WINDOW_FIXTURE(collapse_cow, DELAY);

TEST_F_TIMEOUT(collapse_cow, race, SPF_TIMEOUT)
{
	struct ctx *c;
	double end = now_s() + test_seconds();
	long rounds = 0, collapsed = 0, failed_collapses = 0, early = 0;
	struct team tm = { .keep_nice = true };
	uint64_t *buf;
	char *base;

	SPF_WINDOW_CTX(c);
	c->start_us = START_US;
	c->fd = memfd_create("spf-collapse-cow", MFD_CLOEXEC);
	ASSERT_LE(0, c->fd);
	buf = malloc(2 * NPAGES * PS);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, write_file_pages(c->fd, buf, 0, 2 * NPAGES, 0));
	free(buf);
	base = reserve_pmds(2, &self->map, &self->map_len);
	ASSERT_NE(NULL, base);
	c->base = mmap(base, 2 * PMD_SIZE_, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_FIXED, c->fd, 0);
	ASSERT_EQ(base, c->base);
	/* an anon_vma, from a copy outside the collapsed range */
	*word_of(c->base, NPAGES, 0) = 1;
	/*
	 * The page cache's THP, built by the first collapse, which may fail
	 * all the same: with no page table there, the PMD it would install
	 * has nowhere to go (EINVAL). The rounds' collapses must succeed.
	 */
	madvise(c->base, PMD_SIZE_, MADV_COLLAPSE);

	ASSERT_EQ(0, pin_to_cpu(0));
	SPF_BEGIN(spf0);
	ASSERT_EQ(0, team_run(&tm, WRITERS, writer, c));
	for (int r = 1; !failed(c->fb); r++) {
		long long locked;

		ASSERT_EQ(0, madvise(c->base, PMD_SIZE_, MADV_DONTNEED));
		*word_of(c->base, 0, WRITERS) = 1;
		ASSERT_EQ(0, madvise(c->base, PS, MADV_DONTNEED));
		for (long p = 0; p < NPAGES; p += 16)
			(void)*word_of(c->base, p, WRITERS);
		memset(c->expect, 0, sizeof(c->expect));
		atomic_store(&c->done, 0);
		locked = vmstat("spf_abort_pte_lock");
		atomic_store(&c->round, r);
		if (!madvise(c->base, PMD_SIZE_, MADV_COLLAPSE)) {
			collapsed++;
		} else {
			/* a copy came first: start the writers later */
			if (!failed_collapses++)
				TH_LOG("round %d: MADV_COLLAPSE: %s", r,
				       strerror(errno));
			c->start_us += 500;
		}
		while (atomic_load(&c->done) < WRITERS)
			sched_yield();
		rounds++;
		if (vmstat("spf_abort_pte_lock") > locked &&
		    c->start_us < START_MAX_US) {
			/* the writers came while step 1 or 2 held the lock */
			early++;
			c->start_us += 1000;
		}
		for (int t = 0; t < WRITERS; t++) {
			for (long p = t; p < NPAGES; p += WRITERS) {
				uint64_t v = *word_of(c->base, p, t);
				uint64_t f = *word_of(c->base, p, WRITERS + 1);

				if (c->expect[t][p] && v != c->expect[t][p])
					fail(c->fb, "round %d: page %ld has %#lx where thread %d wrote %#lx: the write was lost",
					     r, p, (unsigned long)v, t,
					     (unsigned long)c->expect[t][p]);
				if (f != pval(0, p))
					fail(c->fb, "round %d: page %ld has %#lx beside the writes, the file %#lx",
					     r, p, (unsigned long)f,
					     (unsigned long)pval(0, p));
			}
		}
		if (now_s() > end && collapsed > 0)
			break;
		if (now_s() > end + 2 * test_seconds())
			break;
	}
	atomic_store(&c->stop, 1);
	atomic_store(&c->round, -1);
	team_join(&tm);
	SPF_END(spf0, "spf_abort_vma_busy", "spf_abort_vma_changed");

	TH_LOG("%ld rounds, %ld collapses through (%ld failed, %ld with the writers too early; writers started %d us after)",
	       rounds, collapsed, failed_collapses, early, c->start_us);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, collapsed);
	close(c->fd);
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(collapse_cow, race)

TEST_HARNESS_MAIN
