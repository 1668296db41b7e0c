// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative fault in a VMA whose neighbour below grows up to
 * it and shrinks back, by mremap() (vma_merge() and __vma_adjust() with
 * the faulting VMA as the adjusted VMA's next, left as it is). Only the
 * VMAs a writer changes may be marked: a mark on the unchanged neighbour
 * makes every fault in flight there give up (spf_abort_vma_changed) and
 * every fault that starts during the write episode too (vma_busy), for
 * nothing.
 *
 * Layout: A, one read-only page at the top of one PMD, a one-page hole,
 * then B, NPAGES writable pages at the start of the next PMD (no page
 * table shared with A), a one-page hole above B. The main thread (CPU 0)
 * zaps and writes B's pages one at a time, each write a speculative
 * anonymous fault that spf_delay=walk holds between reading the PTE and
 * locking it, while a writer (CPU 1) loops mremap() growing a VMA by a
 * page into its hole and shrinking it back:
 *
 *  1. B itself (its end moves: the faults must give up; the proof that
 *     the writer's episodes overlap faults in flight);
 *  2. A, whose growth makes B its next without changing it: no fault in
 *     B may give up because of a mark (spf_abort_vma_changed and
 *     spf_abort_vma_busy do not move).
 *
 * /sys/kernel/debug/spf_abort_writers (CONFIG_DEBUG_SPF_ABORT_WRITERS)
 * names the writer each phase's aborts were charged to.
 */
#include "spf_window.h"

#define DELAY "walk:2000"
#define NPAGES 8

struct ctx {
	char *grow;		/* the last page of the VMA the writer resizes */
	atomic_int stop;
	atomic_long ops;	/* grow and shrink cycles */
	struct failbox *fb;
};

static void *writer(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "writer: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		if (mremap(c->grow, PS, 2 * PS, 0) != c->grow) {
			fail(c->fb, "writer: mremap() growing %p: %s", c->grow,
			     strerror(errno));
			break;
		}
		if (mremap(c->grow, 2 * PS, PS, 0) != c->grow) {
			fail(c->fb, "writer: mremap() shrinking %p: %s", c->grow,
			     strerror(errno));
			break;
		}
		atomic_fetch_add(&c->ops, 1);
	}
	return NULL;
}

struct phase {
	long rounds;
	long long aborts;	/* spf_abort_vma_changed + vma_busy */
	long long charged;	/* of those, charged to a writer, or -1 */
	long ops;
	char writers[512];
};

/*
 * One phase: the writer grows and shrinks c->grow while this thread
 * faults B's pages in for seconds; every value written must read back.
 */
static void run_phase(struct __test_metadata *_metadata, struct ctx *c,
		      char *b, double seconds, struct phase *ph)
{
	long long changed0, busy0;
	double end;
	pthread_t tw;
	int r;

	atomic_store(&c->stop, 0);
	atomic_store(&c->ops, 0);
	spf_writers_reset();
	changed0 = vmstat("spf_abort_vma_changed");
	busy0 = vmstat("spf_abort_vma_busy");
	ASSERT_EQ(0, pthread_create(&tw, NULL, writer, c));
	end = now_s() + seconds;
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		for (long p = 0; p < NPAGES; p++) {
			volatile uint64_t *w = (volatile uint64_t *)(b + p * PS);
			uint64_t v = mkval(r, 0, p, 1);

			ASSERT_EQ(0, madvise(b + p * PS, PS, MADV_DONTNEED));
			*w = v;
			if (*w != v)
				fail(c->fb, "round %d: page %ld reads %#lx, wrote %#lx",
				     r, p, (unsigned long)*w, (unsigned long)v);
		}
	}
	atomic_store(&c->stop, 1);
	pthread_join(tw, NULL);
	ph->rounds = r - 1;
	ph->ops = atomic_load(&c->ops);
	ph->aborts = vmstat("spf_abort_vma_changed") - changed0 +
		     vmstat("spf_abort_vma_busy") - busy0;
	ph->charged = spf_writers_read(ph->writers, sizeof(ph->writers), NULL);
}

SPF_WINDOW_FIXTURE(neighbour, DELAY);

TEST_F_TIMEOUT(neighbour, race, SPF_TIMEOUT)
{
	struct phase self_ph, below_ph;
	struct ctx *c;
	char *base, *a, *b;

	SPF_WINDOW_CTX(c);
	base = reserve_pmds(2, &self->map, &self->map_len);
	ASSERT_NE(NULL, base);
	/* A | hole | PMD boundary | B | hole, the holes unmapped */
	b = base + PMD_SIZE_;
	a = b - 2 * PS;
	ASSERT_EQ(0, munmap(a, 2 * PS + (NPAGES + 1) * PS));
	ASSERT_EQ(a, mmap(a, PS, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
			  MAP_FIXED_NOREPLACE, -1, 0));
	ASSERT_EQ(b, map_anon(b, NPAGES * PS, MAP_FIXED_NOREPLACE));
	/* B's anon_vma, and its page table */
	memset(b, 1, NPAGES * PS);
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	c->grow = b + (NPAGES - 1) * PS;
	run_phase(_metadata, c, b, test_seconds() / 2, &self_ph);
	c->grow = a;
	if (!failed(c->fb))
		run_phase(_metadata, c, b, test_seconds() / 2, &below_ph);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");

	failbox_report(c->fb);
	ASSERT_EQ(0, failed(c->fb));
	TH_LOG("B grown and shrunk %ld times: %ld rounds, %lld faults gave up on a mark (%s)",
	       self_ph.ops, self_ph.rounds, self_ph.aborts, self_ph.writers);
	TH_LOG("A below grown and shrunk %ld times: %ld rounds, %lld faults in B gave up on a mark (%s)",
	       below_ph.ops, below_ph.rounds, below_ph.aborts, below_ph.writers);
	/* the window: the writer's episodes overlapped faults in flight */
	EXPECT_LT(0, self_ph.aborts);
	/* a debug kernel names the writer: mremap()'s, not "unknown" */
	if (self_ph.charged >= 0)
		EXPECT_LT(0, self_ph.charged);
	EXPECT_LT(0, below_ph.ops);
	EXPECT_LT(0, below_ph.rounds);
	if (below_ph.aborts)
		TH_LOG("round %ld: %lld faults in B gave up while mremap() grew and shrank only A below it: a writer marked a VMA it did not change (%s)",
		       below_ph.rounds, below_ph.aborts, below_ph.writers);
	EXPECT_EQ(0, below_ph.aborts);
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(neighbour, race)

TEST_HARNESS_MAIN
