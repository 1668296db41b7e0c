// SPDX-License-Identifier: GPL-2.0
/*
 * Window: the first write fault of a fresh anonymous VMA, which has no
 * anon_vma yet. Speculation takes mmap_lock by trylock to prepare one
 * (spf_prepare_anon_vma()) and must check, once it holds the lock, that
 * the VMA it found without the lock is still the one: a VMA that munmap()
 * unlinked since the lookup is freed after the lookup's grace period, and
 * preparing its anon_vma reads and writes freed memory (KASAN reports it,
 * and the runner's kernel log check sees the report).
 *
 * A VMA of PAGES pages between two PROT_NONE guards (it never merges with
 * a neighbour that has an anon_vma), mapped again over itself with
 * mmap(MAP_FIXED): a new VMA without an anon_vma, never a gap. With
 * spf_delay=anon_vma each first write waits before the trylock, under
 * RCU, and again once it left RCU, holding mmap_lock:
 *
 *  1. this thread alone, each round: maps the VMA again and reads a page
 *     (the zero page, which needs no anon_vma), maps it again and writes
 *     a page, which must read back: spf_anon_vma_prepared moves once a
 *     round, for the write only;
 *  2. the same first writes on CPU 0 (this thread maps the VMA again
 *     before each: a write that refaults after the remapper's zap would
 *     fault inside the remapper's mmap() and give up at the lookup) while
 *     a remapper on CPU 1 maps it again every few milliseconds, so that
 *     first writes find the VMA replaced once they hold mmap_lock
 *     (spf_anon_vma_marked moves only then).
 */
#include "spf_window.h"

#define DELAY "anon_vma:40000"	/* longer than a grace period here */
#define PAGES 16
#define REMAP_US 2000		/* the remapper's pause between its mmap()s */

struct ctx {
	char *b;		/* the VMA, between its guards */
	atomic_int stop;
	atomic_long remaps;
	struct failbox *fb;
};

/* A word of page p of the VMA (p modulo PAGES). */
static volatile uint64_t *page_word(struct ctx *c, long p)
{
	return (volatile uint64_t *)(c->b + (p % PAGES) * PS);
}

/* Map the VMA again over itself: a new VMA, no anon_vma; 0 or -1. */
static int remap(struct ctx *c)
{
	if (mmap(c->b, PAGES * PS, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != c->b) {
		fail(c->fb, "mmap() at %p: %s", c->b, strerror(errno));
		return -1;
	}
	return 0;
}

static void *remapper(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "remapper: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		usleep(REMAP_US);
		if (remap(c))
			break;
		atomic_fetch_add(&c->remaps, 1);
	}
	return NULL;
}

struct phase {
	long rounds;
	long long prepared;	/* spf_anon_vma_prepared */
	long long marked;	/* spf_anon_vma_marked */
};

/* Alone: a zero-page read and a first write in a new VMA each round. */
static void run_alone(struct ctx *c, double seconds, struct phase *ph)
{
	long long prepared0 = vmstat("spf_anon_vma_prepared");
	long long marked0 = vmstat("spf_anon_vma_marked");
	double end = now_s() + seconds;
	long r;

	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		volatile uint64_t *rd = page_word(c, r);
		volatile uint64_t *wr = page_word(c, r + 1);
		uint64_t v = mkval(r, 0, r % PAGES, 1);

		if (remap(c))
			break;
		if (*rd)
			fail(c->fb, "round %ld: a new page reads %#lx", r,
			     (unsigned long)*rd);
		if (remap(c))
			break;
		if (probe_write(wr, v))
			fail(c->fb, "round %ld: first write: signal %d", r,
			     probe_signo);
		else if (*wr != v)
			fail(c->fb, "round %ld: reads %#lx, wrote %#lx", r,
			     (unsigned long)*wr, (unsigned long)v);
	}
	ph->rounds = r - 1;
	ph->prepared = vmstat("spf_anon_vma_prepared") - prepared0;
	ph->marked = vmstat("spf_anon_vma_marked") - marked0;
}

/*
 * Beside the remapper: a write may land in a VMA that is replaced before
 * it is read, so the kernel log is the check.
 */
static void run_race(struct __test_metadata *_metadata, struct ctx *c,
		     double seconds, struct phase *ph)
{
	long long prepared0 = vmstat("spf_anon_vma_prepared");
	long long marked0 = vmstat("spf_anon_vma_marked");
	double end = now_s() + seconds;
	pthread_t tr;
	long r;

	atomic_store(&c->stop, 0);
	ASSERT_EQ(0, pthread_create(&tr, NULL, remapper, c));
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		/* its own first write, not a refault in the remapper's zap */
		if (remap(c))
			break;
		if (probe_write(page_word(c, r), mkval(r, 0, r % PAGES, 2)))
			fail(c->fb, "round %ld: write: signal %d", r,
			     probe_signo);
	}
	atomic_store(&c->stop, 1);
	pthread_join(tr, NULL);
	ph->rounds = r - 1;
	ph->prepared = vmstat("spf_anon_vma_prepared") - prepared0;
	ph->marked = vmstat("spf_anon_vma_marked") - marked0;
}

SPF_WINDOW_FIXTURE(anon_vma, DELAY);

TEST_F_TIMEOUT(anon_vma, race, SPF_TIMEOUT)
{
	struct phase alone = { 0 }, raced = { 0 };
	struct ctx *c;

	SPF_WINDOW_CTX(c);
	/* the guards: a page of PROT_NONE on each side */
	self->map_len = (PAGES + 2) * PS;
	self->map = mmap(NULL, self->map_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	c->b = self->map + PS;
	ASSERT_EQ(0, remap(c));
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	run_alone(c, test_seconds() / 2, &alone);
	if (!failed(c->fb))
		run_race(_metadata, c, test_seconds() / 2, &raced);
	SPF_END(spf0, "spf_anon_vma_marked");

	TH_LOG("alone: %ld rounds, %lld anon_vmas prepared speculatively",
	       alone.rounds, alone.prepared);
	TH_LOG("beside the remapper's %ld mmap()s: %ld first writes, %lld prepared, %lld found the VMA replaced",
	       atomic_load(&c->remaps), raced.rounds, raced.prepared,
	       raced.marked);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	/* the first writes of the rounds alone prepared their anon_vma */
	EXPECT_LT(0, alone.prepared);
	/*
	 * and the zero-page reads did not: one a round, two of slack for a
	 * first write elsewhere in the guest meanwhile
	 */
	EXPECT_GE(alone.rounds + 2, alone.prepared);
	EXPECT_LT(0, atomic_load(&c->remaps));
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(anon_vma, race)

TEST_HARNESS_MAIN
