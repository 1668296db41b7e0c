// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative read fault on a none PTE of an anonymous VMA maps
 * the zero page from its walk, interrupts off (spf_map_zero_page()): it
 * tries the PTE lock and checks the VMA's mark under it. mprotect() to
 * PROT_NONE marks the VMA, finds the PTE none and returns without a TLB
 * flush, so nothing waits for the faulting CPU: a fault that did not
 * check the mark maps the zero page with the old protection, and the page
 * stays readable after mprotect() returned.
 *
 * One anonymous VMA of PAGES pages, page 0 written first so that its page
 * table exists and every other read is a zero-page fault. With
 * spf_delay=zero_page each such fault waits before the lock:
 *
 *  1. this thread alone reads a page of every round's new pages: each
 *     reads 0, and speculation maps them (spf_success);
 *  2. this thread on CPU 0 reads a none page while a thread on CPU 1
 *     makes that page PROT_NONE during the wait, then reads it again once
 *     mprotect() returned: that second read must get SIGSEGV. The fault
 *     gives up on the mark (spf_abort_vma_changed moves only then) and
 *     the classic path delivers SIGSEGV, or it came first and mapped the
 *     zero page that mprotect() then took away.
 */
#include "spf_window.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#define DELAY "zero_page:3000"
#define PAGES 256
#define PROTECT_AFTER_US 500	/* into the fault's 3 ms wait */

struct ctx {
	char *base;
	struct failbox *fb;
	atomic_long round;	/* the round whose read has started */
	atomic_long protected;	/* the round whose mprotect() returned */
	atomic_bool stop;
};

static volatile uint64_t *page_word(struct ctx *c, long p)
{
	return (volatile uint64_t *)(c->base + p * PS);
}

/* The page of round r: never page 0, whose table the VMA keeps. */
static long round_page(long r)
{
	return 1 + r % (PAGES - 1);
}

/* CPU 1: each round, PROT_NONE on the round's page during the fault's wait. */
static void *protector(void *arg)
{
	struct ctx *c = arg;
	long done = 0;

	if (pin_to_cpu(1))
		fail(c->fb, "protector: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop)) {
		long r = atomic_load(&c->round);

		if (r == done) {
			sched_yield();
			continue;
		}
		usleep(PROTECT_AFTER_US);
		if (mprotect(c->base + round_page(r) * PS, PS, PROT_NONE))
			fail(c->fb, "round %ld: mprotect(PROT_NONE): %s", r,
			     strerror(errno));
		atomic_store(&c->protected, r);
		done = r;
	}
	return NULL;
}

/* Page p back to a none PTE, readable and writable: a new zero-page fault. */
static int reset_page(struct ctx *c, long p)
{
	if (mprotect(c->base + p * PS, PS, PROT_READ | PROT_WRITE))
		return -1;
	return madvise(c->base + p * PS, PS, MADV_DONTNEED);
}

struct phase {
	long rounds, segv_first;
	long long success, changed;
};

static void run_phase(struct __test_metadata *_metadata, struct ctx *c,
		      double seconds, bool race, struct phase *ph)
{
	long long success0 = vmstat("spf_success");
	long long changed0 = vmstat("spf_abort_vma_changed");
	pthread_t tp;
	double end;
	long r;

	atomic_store(&c->round, 0);
	atomic_store(&c->protected, 0);
	atomic_store(&c->stop, false);
	if (race)
		ASSERT_EQ(0, pthread_create(&tp, NULL, protector, c));
	end = now_s() + seconds;
	ph->segv_first = 0;
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		long p = round_page(r);
		volatile uint64_t *w = page_word(c, p);
		uint64_t v;

		if (reset_page(c, p)) {
			fail(c->fb, "round %ld: page %ld back to a none PTE: %s",
			     r, p, strerror(errno));
			break;
		}
		atomic_store(&c->round, r);
		if (probe_read(w, &v)) {
			if (!race) {
				fail(c->fb, "round %ld: read of page %ld alone: signal %d",
				     r, p, probe_signo);
				break;
			}
			if (probe_fault_is(c->fb, w, SEGV_ACCERR, "first read of"))
				ph->segv_first++;
		} else if (v) {
			fail(c->fb, "round %ld: page %ld reads %#lx, not the zero page",
			     r, p, (unsigned long)v);
		}
		if (!race)
			continue;
		while (atomic_load(&c->protected) != r && !failed(c->fb))
			sched_yield();
		if (!probe_read(w, &v))
			fail(c->fb, "round %ld: page %ld reads %#lx after mprotect(PROT_NONE) returned: the zero page was mapped with the old protection",
			     r, p, (unsigned long)v);
		else
			probe_fault_is(c->fb, w, SEGV_ACCERR, "second read of");
	}
	atomic_store(&c->stop, true);
	if (race)
		pthread_join(tp, NULL);
	ph->rounds = r - 1;
	ph->success = vmstat("spf_success") - success0;
	ph->changed = vmstat("spf_abort_vma_changed") - changed0;
}

SPF_WINDOW_FIXTURE(zero_page, DELAY);

TEST_F_TIMEOUT(zero_page, race, SPF_TIMEOUT)
{
	struct phase alone, raced = { 0 };
	struct ctx *c;

	SPF_WINDOW_CTX(c);
	/* small pages: a huge zero page has no PTE to race for */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	c->base = self->map = map_anon(NULL, PAGES * PS, 0);
	self->map_len = PAGES * PS;
	ASSERT_NE(NULL, c->base);
	*page_word(c, 0) = 1;	/* the page table every read finds */
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	run_phase(_metadata, c, test_seconds() / 2, false, &alone);
	if (!failed(c->fb))
		run_phase(_metadata, c, test_seconds() / 2, true, &raced);
	SPF_END(spf0, "spf_abort_vma_changed");

	TH_LOG("alone: %ld zero-page reads, spf_success +%lld", alone.rounds,
	       alone.success);
	TH_LOG("beside mprotect(PROT_NONE): %ld rounds, %ld first reads got SIGSEGV, spf_abort_vma_changed +%lld",
	       raced.rounds, raced.segv_first, raced.changed);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	/* the reads alone were speculative zero-page faults */
	EXPECT_LE(alone.rounds, alone.success);
	EXPECT_LT(0, raced.rounds);
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(zero_page, race)

TEST_HARNESS_MAIN
