// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative write fault on a read-only huge PMD of an
 * anonymous VMA, whose huge page is still this process's alone (mprotect()
 * made the PMD read-only), between the walk, which read the PMD, and the
 * PMD lock, under which spf_huge_wp() makes the PMD writable. A zap
 * (MADV_DONTNEED of the huge page) and a split (MADV_DONTNEED of one of
 * its pages) change the PMD without marking the VMA: only the check under
 * the lock that the PMD is still the one the walk read
 * (spf_huge_pmd_changed counts the faults it stops) keeps the fault from
 * mapping again a huge page the zap freed, or writing a huge PMD over the
 * page table of the split. Skipped (spf_hole=huge_wp), a page that was
 * zapped reads its old value instead of zero, or the kernel reports the
 * page table the PMD lost.
 *
 * A VMA of HUGES huge pages (MADV_HUGEPAGE) at a 2 MiB boundary between
 * PROT_NONE guards, mapped again every round (munmap() frees the page
 * tables a split left). Each round writes a mark into pages MARK and LAST
 * of every huge page, then mprotect() makes the VMA read-only and
 * writable again: the huge PMDs stay read-only, their pages exclusive, and
 * the next write to each is a write-protect fault that reuses the page:
 *
 *  1. alone: each round's writes to page 0 of every huge page complete
 *     speculatively (spf_success_huge_wp), and the marks read back; every
 *     other round write-protects with a fork() instead (a child that
 *     exits at once), after which each write reuses its page under the
 *     folio lock;
 *  2. each write on CPU 0 is held by spf_delay=huge_wp before the PMD
 *     lock while a thread on CPU 1, a few milliseconds into the delay,
 *     zaps the huge page (even ones) or its page LAST (odd ones, which
 *     splits the PMD): the write must land where it was not zapped, and
 *     what was zapped must read 0, the rest its mark; past its time until
 *     both kinds have raced, up to three times it.
 */
#include "spf_window.h"

#define DELAY "huge_wp:40000"
#define HELD_US 30000		/* a write this long was held by the delay */
#define HUGES 4			/* huge pages in the VMA */
#define MARK 1			/* pages of each huge page written each round */
#define LAST 511
#define RACE_AFTER_US 5000	/* into the write's 40 ms delay */

enum racer_op { OP_NONE, OP_ZAP, OP_SPLIT };

struct ctx {
	char *b;		/* the VMA */
	struct failbox *fb;
	atomic_int op;		/* what the racer does next, once */
	atomic_int huge;	/* to which huge page */
	atomic_int done;	/* the racer's call returned */
	atomic_int stop;
	long reads, held;
};

static volatile uint64_t *word(struct ctx *c, int h, int page)
{
	return (volatile uint64_t *)(c->b + h * PMD_SIZE_ + page * PS);
}

/*
 * Map the VMA again, write the marks of round r (huge-page faults) and
 * write-protect it: with mprotect(), or with a fork() whose child exits at
 * once (the pages are then no longer marked exclusive, and the write
 * reuses each under its folio lock); false on a failure.
 */
static bool new_round(struct ctx *c, long r, bool by_fork)
{
	size_t len = HUGES * PMD_SIZE_;

	if (mmap(c->b, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    madvise(c->b, len, MADV_HUGEPAGE)) {
		fail(c->fb, "round %ld: the VMA again: %s", r, strerror(errno));
		return false;
	}
	for (int h = 0; h < HUGES; h++) {
		*word(c, h, MARK) = mkval(r, 0, h, MARK);
		*word(c, h, LAST) = mkval(r, 0, h, LAST);
	}
	if (by_fork) {
		pid_t pid = fork();
		int status;

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			fail(c->fb, "round %ld: fork(): %s", r, strerror(errno));
			return false;
		}
		return true;
	}
	if (mprotect(c->b, len, PROT_READ) ||
	    mprotect(c->b, len, PROT_READ | PROT_WRITE)) {
		fail(c->fb, "round %ld: mprotect(): %s", r, strerror(errno));
		return false;
	}
	return true;
}

/* Page p of huge page h reads want; false (and a failure) if not. */
static bool reads(struct ctx *c, long r, int h, int p, uint64_t want,
		  const char *after)
{
	uint64_t v = *word(c, h, p);

	if (v == want)
		return true;
	fail(c->fb, "round %ld: page %d of huge page %d reads %#lx %s, not %#lx",
	     r, p, h, (unsigned long)v, after, (unsigned long)want);
	return false;
}

static long run_alone(struct ctx *c, double seconds)
{
	double end = now_s() + seconds;
	long r;

	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		if (!new_round(c, r, r % 2 == 0))
			break;
		for (int h = 0; h < HUGES; h++) {
			*word(c, h, 0) = mkval(r, 0, h, 0);
			if (!reads(c, r, h, 0, mkval(r, 0, h, 0), "after its write") ||
			    !reads(c, r, h, MARK, mkval(r, 0, h, MARK), "after a write beside it") ||
			    !reads(c, r, h, LAST, mkval(r, 0, h, LAST), "after a write beside it"))
				break;
		}
	}
	return r - 1;
}

/* On CPU 1: zap or split the huge page a few milliseconds into each write. */
static void *racer(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "racer: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		int op = atomic_exchange(&c->op, OP_NONE);
		int h = atomic_load(&c->huge);

		if (op == OP_NONE) {
			sched_yield();
			continue;
		}
		usleep(RACE_AFTER_US);
		if (op == OP_ZAP &&
		    madvise((char *)word(c, h, 0), PMD_SIZE_, MADV_DONTNEED))
			fail(c->fb, "MADV_DONTNEED of a huge page: %s", strerror(errno));
		if (op == OP_SPLIT &&
		    madvise((char *)word(c, h, LAST), PS, MADV_DONTNEED))
			fail(c->fb, "MADV_DONTNEED of a page: %s", strerror(errno));
		atomic_store(&c->done, 1);
	}
	return NULL;
}

/*
 * Write page 0 of huge page h while the racer zaps the huge page or splits
 * it; false on a failure. A zap that came after the write dropped it too.
 */
static bool race_huge(struct ctx *c, long r, int h, bool zap)
{
	uint64_t v = mkval(r, 0, h, 0), got;
	double t;

	atomic_store(&c->huge, h);
	atomic_store(&c->done, 0);
	atomic_store(&c->op, zap ? OP_ZAP : OP_SPLIT);
	t = now_s();
	*word(c, h, 0) = v;
	if ((now_s() - t) * 1e6 >= HELD_US)
		c->held++;
	c->reads++;
	while (!atomic_load(&c->done) && !failed(c->fb))
		sched_yield();
	if (zap) {
		got = *word(c, h, 0);
		if (got != v && got != 0) {
			fail(c->fb, "round %ld: page 0 of huge page %d reads %#lx after its write and a zap, not %#lx or 0",
			     r, h, (unsigned long)got, (unsigned long)v);
			return false;
		}
		return reads(c, r, h, MARK, 0, "after a zap") &&
		       reads(c, r, h, LAST, 0, "after a zap");
	}
	return reads(c, r, h, 0, v, "after its write and a split") &&
	       reads(c, r, h, MARK, mkval(r, 0, h, MARK), "after a split") &&
	       reads(c, r, h, LAST, 0, "after its zap split the PMD");
}

/*
 * Rounds of HUGES raced writes, half of them zapped, half split; past its
 * time while the race has not happened, up to three times it: on a busy
 * host the racer's wakeup may come after the delay.
 */
static void run_race(struct ctx *c, double seconds)
{
	long long changed0 = vmstat("spf_huge_pmd_changed");
	double start = now_s();

	for (long r = 1; !failed(c->fb); r++) {
		double t = now_s() - start;

		if (t >= 3 * seconds ||
		    (t >= seconds && vmstat("spf_huge_pmd_changed") > changed0))
			break;
		if (!new_round(c, r, false))
			break;
		for (int h = 0; h < HUGES; h++)
			if (!race_huge(c, r, h, h % 2 == 0))
				return;
	}
}

SPF_RACE_FIXTURE(huge_wp);

TEST_F_TIMEOUT(huge_wp, race, SPF_TIMEOUT)
{
	struct ctx c = { 0 };
	long long wp0, alone_wp;
	long alone;
	pthread_t tr;
	int ret;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	if (!thp_madvise_allowed())
		SKIP(return, "transparent huge pages are off (%s)", THP_ENABLED);
	c.fb = failbox_new();
	ASSERT_NE(NULL, c.fb);
	/* PROT_NONE guards: the VMA merges with no neighbour */
	self->map_len = (HUGES + 2) * PMD_SIZE_;
	self->map = mmap(NULL, self->map_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	c.b = (char *)(((uintptr_t)self->map + 2 * PMD_SIZE_ - 1) &
		       ~(PMD_SIZE_ - 1));
	ASSERT_EQ(0, pin_to_cpu(0));
	ret = pthread_create(&tr, NULL, racer, &c);
	ASSERT_EQ(0, ret);

	SPF_BEGIN(spf0);
	spf0.also_success = "spf_success_huge_wp";
	wp0 = vmstat("spf_success_huge_wp");
	alone = run_alone(&c, test_seconds() / 2);
	alone_wp = vmstat("spf_success_huge_wp") - wp0;
	if (!failed(c.fb)) {
		if (spf_window_open(_metadata, DELAY))
			fail(c.fb, "cannot open the window: spf_delay=%s", DELAY);
		else
			run_race(&c, test_seconds() / 2);
		spf_delay_set(spf_delay_before);
	}
	atomic_store(&c.stop, 1);
	pthread_join(tr, NULL);
	SPF_END(spf0, "spf_huge_pmd_changed");

	TH_LOG("alone: %ld rounds of %d write-protect faults, %lld made writable speculatively",
	       alone, HUGES, alone_wp);
	TH_LOG("raced: %ld writes, %ld held in the fault", c.reads, c.held);
	failbox_report(c.fb);
	EXPECT_EQ(0, failed(c.fb));
	EXPECT_LT(0, alone);
	EXPECT_LT(0, c.held);
	failbox_free(c.fb);
}

SPF_SCALE_TIMEOUT(huge_wp, race)

TEST_HARNESS_MAIN
