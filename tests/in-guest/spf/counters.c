// SPDX-License-Identifier: GPL-2.0
/*
 * The speculative page fault counters, and vm.speculative_page_fault.
 *
 * Two threads each write every page of their own 2 MiB (one big
 * MADV_NOHUGEPAGE anonymous mapping, 2 MiB-aligned, so each has its own
 * page table and its own PTE lock), then empty it with MADV_DONTNEED, and
 * again: the multi-fault-all benchmark's loop. Checks:
 *
 *  - with vm.speculative_page_fault=1, spf_success grows by at least 80%
 *    of the faults the process took (getrusage() ru_minflt) in the rounds
 *    after the first. The first round is not counted: the mapping has
 *    no anon_vma yet (creating one needs mmap_lock) and no page tables;
 *    MADV_DONTNEED keeps both, so the later rounds fault on empty PTEs of
 *    existing page tables, the case speculation is for;
 *  - with vm.speculative_page_fault=0, the same loop leaves spf_attempt
 *    where it was: every fault takes the classic path;
 *  - the faults are counted either way (ru_minflt grows by about one per
 *    page written).
 * The sysctl's old value is restored at the end, even on failure. Needs
 * root and a kernel with speculative page faults (SKIP otherwise).
 *
 * huge_pmd_reasons: why speculation gives up at a huge PMD, one counter a
 * reason. In a process that has not used the huge zero page yet, in
 * two MADV_HUGEPAGE PMDs of their own:
 *  - a read of the first: the mm has no huge zero page yet, and taking it
 *    may allocate it (spf_abort_huge_first);
 *  - a read of the second: the huge zero page, mapped speculatively
 *    (spf_success_huge);
 *  - a write to it: the classic path splits the huge zero page's PMD
 *    (spf_abort_huge_wp).
 * Needs THP not "never" and the huge zero page on (SKIP otherwise).
 */
#include "spf_common.h"

#define NTHREADS 2
#define CHUNK_PAGES 512

struct ctx {
	char *base;
	struct rounds rs;	/* a round's number: the loops to run */
	struct failbox *fb;
};

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	char *mine = c->base + a->id * CHUNK_PAGES * PS;
	int n;

	while ((n = rounds_next(&c->rs)) >= 0) {
		for (int r = 0; r < n; r++) {
			for (long p = 0; p < CHUNK_PAGES; p++)
				*(volatile char *)(mine + p * PS) = 1;
			if (madvise(mine, CHUNK_PAGES * PS, MADV_DONTNEED))
				fail(c->fb, "thread %d: MADV_DONTNEED: %s",
				     a->id, strerror(errno));
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

/* Run the loop for n rounds; the faults the process took meanwhile. */
static long run_rounds(struct ctx *c, int n)
{
	struct rusage ru0, ru1;

	getrusage(RUSAGE_SELF, &ru0);
	rounds_release(&c->rs, n);
	rounds_wait(&c->rs);
	getrusage(RUSAGE_SELF, &ru1);
	return ru1.ru_minflt - ru0.ru_minflt;
}

FIXTURE(counters) {
	int old;		/* the sysctl's value before, -1 if unread */
	char *map;
	size_t map_len;
};

FIXTURE_SETUP(counters)
{
	self->old = -1;
	if (access(SPF_SYSCTL, F_OK))
		SKIP(return, "no %s: a kernel without speculative page faults",
		     SPF_SYSCTL);
	if (geteuid() != 0)
		SKIP(return, "not root: cannot write %s", SPF_SYSCTL);
	self->old = spf_sysctl_read();
	ASSERT_LE(0, self->old);
	ASSERT_LE(0, vmstat("spf_success"));
}

FIXTURE_TEARDOWN(counters)
{
	if (self->old >= 0 && spf_sysctl_read() != self->old &&
	    spf_sysctl_write(self->old))
		TH_LOG("cannot restore %s to %d", SPF_SYSCTL, self->old);
	if (self->map)
		munmap(self->map, self->map_len);
}

TEST_F_TIMEOUT(counters, spf_success_and_sysctl, SPF_TIMEOUT)
{
	struct ctx c = { 0 };
	double budget = test_seconds() / 3, t0;
	long long succ0, succ1, att0, att1, att2, att3;
	long faults, faults_off, rounds;
	struct spf_stats st0, st1;
	char deltas[1024];
	int on;

	if (self->old < 0)
		return;		/* skipped in setup */
	c.fb = failbox_new();
	ASSERT_NE(NULL, c.fb);
	self->map_len = (NTHREADS + 1) * CHUNK_PAGES * PS;
	self->map = map_anon(NULL, self->map_len, 0);
	ASSERT_NE(NULL, self->map);
	/* 2 MiB-aligned: a page table per thread */
	c.base = (char *)(((uintptr_t)self->map + PMD_SIZE_ - 1) &
			  ~(PMD_SIZE_ - 1));
	ASSERT_EQ(0, spf_sysctl_write(1));
	ASSERT_EQ(1, spf_sysctl_read());
	ASSERT_EQ(0, rounds_start(&c.rs, NTHREADS, worker, &c));

	/* the first round: anon_vma and page tables, by the classic path */
	t0 = now_s();
	run_rounds(&c, 1);
	/* as many rounds as fit in a third of the time, 3 at least */
	rounds = (long)(budget / (now_s() - t0 + 1e-6));
	rounds = rounds < 3 ? 3 : rounds > 200 ? 200 : rounds;

	spf_stats(&st0);
	succ0 = vmstat("spf_success");
	att0 = vmstat("spf_attempt");
	faults = run_rounds(&c, rounds);
	succ1 = vmstat("spf_success");
	att1 = vmstat("spf_attempt");
	spf_stats(&st1);
	spf_delta(&st0, &st1, deltas, sizeof(deltas));

	ASSERT_EQ(0, spf_sysctl_write(0));
	on = spf_sysctl_read();
	att2 = vmstat("spf_attempt");
	faults_off = run_rounds(&c, rounds);
	att3 = vmstat("spf_attempt");

	rounds_stop(&c.rs);

	TH_LOG("%ld rounds of %d pages: sysctl 1: %ld faults, spf_attempt +%lld, spf_success +%lld (%.1f%%); sysctl 0: %ld faults, spf_attempt +%lld",
	       rounds, NTHREADS * CHUNK_PAGES, faults, att1 - att0,
	       succ1 - succ0, faults ? 100.0 * (succ1 - succ0) / faults : 0.0,
	       faults_off, att3 - att2);
	TH_LOG("sysctl 1: counters that moved:%s", deltas);
	failbox_report(c.fb);
	EXPECT_EQ(0, failed(c.fb));
	EXPECT_EQ(0, on);
	/* every page written is a fault, classic or speculative */
	EXPECT_GE(faults, rounds * NTHREADS * CHUNK_PAGES * 95 / 100);
	EXPECT_GE(faults_off, rounds * NTHREADS * CHUNK_PAGES * 95 / 100);
	/* at least 80% speculative */
	EXPECT_GE((succ1 - succ0) * 100, (long long)faults * 80);
	/* and none tried with the sysctl off */
	EXPECT_EQ(0, att3 - att2);
	failbox_free(c.fb);
}

SPF_SCALE_TIMEOUT(counters, spf_success_and_sysctl)

#define THP_ZERO_PAGE "/sys/kernel/mm/transparent_hugepage/use_zero_page"

/* What one access to p moved the named counter by. */
static long long access_delta(char *p, bool write, const char *name)
{
	long long v0 = vmstat(name);

	if (write)
		*(volatile char *)p = 1;
	else
		(void)*(volatile char *)p;
	return vmstat(name) - v0;
}

TEST_F_TIMEOUT(counters, huge_pmd_reasons, SPF_TIMEOUT)
{
	long long first, zero, wp;
	char buf[16] = "", *resv, *b;
	size_t resv_len;

	if (self->old < 0)
		return;		/* skipped in setup */
	if (!thp_madvise_allowed() ||
	    param_read(THP_ZERO_PAGE, buf, sizeof(buf)) || atoi(buf) != 1)
		SKIP(return, "needs THP (%s) and the huge zero page (%s)",
		     THP_ENABLED, THP_ZERO_PAGE);
	b = reserve_pmds(2, &resv, &resv_len);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(b, mmap(b, 2 * PMD_SIZE_, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	ASSERT_EQ(0, madvise(b, 2 * PMD_SIZE_, MADV_HUGEPAGE));
	ASSERT_EQ(0, spf_sysctl_write(1));

	first = access_delta(b, false, "spf_abort_huge_first");
	zero = access_delta(b + PMD_SIZE_, false, "spf_success_huge");
	wp = access_delta(b + PMD_SIZE_, true, "spf_abort_huge_wp");
	munmap(resv, resv_len);

	TH_LOG("first read: spf_abort_huge_first +%lld; second read: spf_success_huge +%lld; its write: spf_abort_huge_wp +%lld",
	       first, zero, wp);
	EXPECT_LE(1, first);
	EXPECT_LE(1, zero);
	EXPECT_LE(1, wp);
}

SPF_SCALE_TIMEOUT(counters, huge_pmd_reasons)

TEST_HARNESS_MAIN
