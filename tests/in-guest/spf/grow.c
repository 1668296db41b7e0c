// SPDX-License-Identifier: GPL-2.0
/*
 * Window: mmap() that merges a new mapping into the VMA above it grows
 * that VMA in place without marking it (patch 45): vma_expand() moves
 * vm_start and vm_pgoff down together, so every address the VMA covered
 * keeps its page offset and a speculative fault there may go on. What a
 * fault must not use is a copy of the VMA taken between the two writes:
 * vm_start moved and vm_pgoff not gives every address the page offset
 * GAP pages further on. The copy is checked against vm_bounds_seq, odd
 * while the bounds are written (spf_abort_vma_growing moves only then).
 *
 * A memfd of FILE_PAGES pages, each holding its own number. Its pages
 * [GAP, FILE_PAGES) are mapped shared and read-only at the top of a
 * PROT_NONE reservation; pages [0, GAP) mapped MAP_FIXED just below merge
 * into that VMA, and the reservation mapped back over them splits them
 * off again. With spf_delay=grow the growth waits between its writes:
 *
 *  1. this thread alone reads a page of the VMA each round (its PTE
 *     zapped first): each holds its number, and speculation maps it
 *     (spf_success_file);
 *  2. the same, the read on CPU 0 starting during the wait of a growth
 *     on CPU 1: it must read the page's own number. The fault gives up on
 *     the odd number and the classic path waits for mmap_lock, or it
 *     copied the half-grown VMA and mapped page p + GAP of the file.
 */
#include "spf_window.h"
#include "spf_file.h"

#include <pthread.h>
#include <sys/mman.h>

#define DELAY "grow:3000"
#define GAP 8			/* pages the growth adds below */
#define PAGES 32		/* pages of the VMA before it grows */
#define FILE_PAGES (GAP + PAGES)
#define READ_AFTER_US 1000	/* into the growth's 3 ms wait */

struct ctx {
	char *lo;		/* where the growth maps pages [0, GAP) */
	char *vma;		/* the VMA of pages [GAP, FILE_PAGES) */
	int fd;
	struct failbox *fb;
	atomic_long round;	/* the round whose growth may start */
	atomic_long growing;	/* the round whose mmap() has started */
	atomic_long shrunk;	/* the round whose VMA is back to PAGES pages */
	atomic_bool stop;
};

/* The round's page: below PAGES - GAP, so that a torn copy reads a page of the file. */
static long round_page(long r)
{
	return r % (PAGES - GAP);
}

static volatile uint64_t *page_word(struct ctx *c, long p)
{
	return (volatile uint64_t *)(c->vma + p * PS);
}

/* The file page whose value v is, or -1. */
static long file_page_of(uint64_t v)
{
	for (long i = 0; i < FILE_PAGES; i++)
		if (pval(0, i) == v)
			return i;
	return -1;
}

/* Map pages [0, GAP) of the region below the VMA MAP_FIXED; 0 or -1. */
static int map_below(struct ctx *c, int prot, int flags, int fd)
{
	void *p = mmap(c->lo, GAP * PS, prot, flags | MAP_FIXED, fd, 0);

	return p == MAP_FAILED ? -1 : 0;
}

/* CPU 1: each round, grow the VMA while the round's read starts, then shrink it. */
static void *grower(void *arg)
{
	struct ctx *c = arg;
	long done = 0;

	if (pin_to_cpu(1))
		fail(c->fb, "grower: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop)) {
		long r = atomic_load(&c->round);

		if (r == done) {
			sched_yield();
			continue;
		}
		atomic_store(&c->growing, r);
		/* the file's pages [0, GAP): they merge into the VMA above */
		if (map_below(c, PROT_READ, MAP_SHARED, c->fd))
			fail(c->fb, "round %ld: mmap() of the pages below: %s", r,
			     strerror(errno));
		/* the reservation back: the VMA splits to PAGES again */
		if (map_below(c, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1))
			fail(c->fb, "round %ld: mmap() of the reservation back: %s",
			     r, strerror(errno));
		atomic_store(&c->shrunk, r);
		done = r;
	}
	return NULL;
}

struct phase {
	long rounds;
	long long success, growing;
};

static void run_phase(struct __test_metadata *_metadata, struct ctx *c,
		      double seconds, bool race, struct phase *ph)
{
	long long success0 = vmstat("spf_success_file");
	long long growing0 = vmstat("spf_abort_vma_growing");
	pthread_t tg;
	double end;
	long r;

	atomic_store(&c->round, 0);
	atomic_store(&c->growing, 0);
	atomic_store(&c->shrunk, 0);
	atomic_store(&c->stop, false);
	if (race)
		ASSERT_EQ(0, pthread_create(&tg, NULL, grower, c));
	end = now_s() + seconds;
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		long p = round_page(r);
		volatile uint64_t *w = page_word(c, p);
		uint64_t v;

		/* the PTE of page p none again: the read is a fault */
		if (madvise(c->vma + p * PS, PS, MADV_DONTNEED)) {
			fail(c->fb, "round %ld: MADV_DONTNEED of page %ld: %s", r,
			     p, strerror(errno));
			break;
		}
		if (race) {
			atomic_store(&c->round, r);
			while (atomic_load(&c->growing) != r && !failed(c->fb))
				sched_yield();
			usleep(READ_AFTER_US);
		}
		if (probe_read(w, &v))
			fail(c->fb, "round %ld: read of page %ld: signal %d at %p",
			     r, p, probe_signo, probe_addr);
		else if (v != pval(0, GAP + p))
			fail(c->fb, "round %ld: file page %ld reads %#lx, file page %ld's value: the fault used a half-grown copy of the VMA",
			     r, GAP + p, (unsigned long)v, file_page_of(v));
		if (!race)
			continue;
		while (atomic_load(&c->shrunk) != r && !failed(c->fb))
			sched_yield();
	}
	atomic_store(&c->stop, true);
	if (race)
		pthread_join(tg, NULL);
	ph->rounds = r - 1;
	ph->success = vmstat("spf_success_file") - success0;
	ph->growing = vmstat("spf_abort_vma_growing") - growing0;
}

SPF_WINDOW_FIXTURE(grow, DELAY);

TEST_F_TIMEOUT(grow, race, SPF_TIMEOUT)
{
	struct phase alone, raced = { 0 };
	uint64_t *buf;
	char *res;
	struct ctx *c;

	SPF_WINDOW_CTX(c);
	c->fd = memfd_create("spf-grow", MFD_CLOEXEC);
	ASSERT_LE(0, c->fd);
	ASSERT_EQ(0, ftruncate(c->fd, FILE_PAGES * PS));
	/* page i holds pval(0, i): in the page cache, where reads hit */
	buf = malloc(FILE_PAGES * PS);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, write_file_pages(c->fd, buf, 0, FILE_PAGES, 0));
	free(buf);
	/* a guard page, the GAP pages the growth takes, the VMA */
	res = mmap(NULL, (1 + FILE_PAGES) * PS, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	self->map = res;
	self->map_len = (1 + FILE_PAGES) * PS;
	c->lo = res + PS;
	c->vma = c->lo + GAP * PS;
	ASSERT_EQ(c->vma, mmap(c->vma, PAGES * PS, PROT_READ,
			       MAP_SHARED | MAP_FIXED, c->fd, GAP * PS));
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN_FILE(spf0);
	run_phase(_metadata, c, test_seconds() / 2, false, &alone);
	if (!failed(c->fb))
		run_phase(_metadata, c, test_seconds() / 2, true, &raced);
	SPF_END(spf0, "spf_abort_vma_growing");

	TH_LOG("alone: %ld reads, spf_success_file +%lld", alone.rounds,
	       alone.success);
	TH_LOG("during the growth: %ld reads, spf_abort_vma_growing +%lld",
	       raced.rounds, raced.growing);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	/* the reads alone were speculative page-cache hits */
	EXPECT_LE(alone.rounds, alone.success);
	EXPECT_LT(0, raced.rounds);
	close(c->fd);
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(grow, race)

TEST_HARNESS_MAIN
