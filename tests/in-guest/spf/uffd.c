// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing userfaultfd registration (UFFDIO_REGISTER_MODE_MISSING).
 *
 * A speculative fault does not handle userfaultfd-armed VMAs; one that
 * read the VMA before the registration must not complete after it. Each
 * round the threads fault on pages of their own (read, write, read back,
 * MADV_DONTNEED, again) while the main thread registers the region and
 * empties it with MADV_DONTNEED. From then on every fault on a missing
 * page must reach the handler thread, which fills the page with
 * UFFDIO_COPY of a marker page. Checks:
 *
 *  - after registration + MADV_DONTNEED returned, a read returns the
 *    marker (or the thread's write since), never 0: a zero page or a new
 *    page installed behind the handler's back reads 0;
 *  - then each thread empties its pages again and the first read of
 *    each must return exactly the marker: the fault reached the handler;
 *  - reads of other threads' pages are never 0 either;
 *  - every value read is the thread's last write, the marker of that
 *    word, or (before the zap) 0; nothing else;
 *  - the handler resolved at least twice as many faults in the round as
 *    there are pages: each page was emptied twice after registration
 *    (by the main thread, then by its thread), and touched after each.
 * The main thread unregisters the region after each round.
 */
#include "spf_common.h"

#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>

#define NPAGES 64
#define MARK 0x3a4b000000000000ULL

static inline uint64_t marker(long p, long k)
{
	return MARK | (uint64_t)p << 16 | k;
}

struct ctx {
	char *base;
	size_t len;
	int nthreads, uffd;
	long own;		/* pages per thread */
	struct rounds rs;	/* rs.stop ends the handler too */
	atomic_int zapped;	/* round whose register + zap returned */
	atomic_long copies, eexist, stale, msgs, checked, strict;
	atomic_long handled;	/* messages resolve() is done with */
	struct failbox *fb;
};

/* v read from thread t's word of page p: legal? */
static bool check(struct ctx *c, int r, int t, long p, const char *what,
		  uint64_t v, uint64_t last, bool zapped)
{
	atomic_fetch_add(&c->checked, 1);
	if ((last && v == last) || v == marker(p, t * 8))
		return true;
	if (v == 0 && !zapped)
		return true;
	if (v == 0)
		fail(c->fb, "round %d: thread %d page %ld: %s 0 after registration and MADV_DONTNEED: a page the handler never saw",
		     r, t, p, what);
	else
		fail(c->fb, "round %d: thread %d page %ld: %s %#lx, expected %#lx or the marker %#lx",
		     r, t, p, what, (unsigned long)v, (unsigned long)last,
		     (unsigned long)marker(p, t * 8));
	return false;
}

/* Read, write, read back thread t's word of its pages. */
static void pass(struct ctx *c, int r, int t, uint64_t *last, unsigned *seq,
		 bool strict)
{
	for (long p = t * c->own; p < (t + 1) * c->own; p++) {
		volatile uint64_t *w = word_of(c->base, p, t);
		uint64_t v, nv = mkval(r, t, p, ++*seq);
		bool zapped = atomic_load(&c->zapped) == r;

		if (probe_read(w, &v)) {
			fail(c->fb, "round %d: read of %p: signal %d", r,
			     (void *)w, probe_signo);
			return;
		}
		if (strict) {
			/* emptied by this thread after the zap */
			atomic_fetch_add(&c->strict, 1);
			if (v != marker(p, t * 8))
				fail(c->fb, "round %d: thread %d page %ld: read %#lx after its own MADV_DONTNEED of the registered range, expected the marker %#lx",
				     r, t, p, (unsigned long)v,
				     (unsigned long)marker(p, t * 8));
		} else {
			check(c, r, t, p, "read", v, last[p - t * c->own],
			      zapped);
		}
		zapped = atomic_load(&c->zapped) == r;
		if (probe_write(w, nv)) {
			fail(c->fb, "round %d: write to %p: signal %d", r,
			     (void *)w, probe_signo);
			return;
		}
		last[p - t * c->own] = nv;
		atomic_fetch_add(&c->rs.progress, 1);
		if (probe_read(w, &v)) {
			fail(c->fb, "round %d: read back of %p: signal %d", r,
			     (void *)w, probe_signo);
			return;
		}
		/* after the zap, nothing but this thread empties the page */
		if (!zapped)
			check(c, r, t, p, "read back", v, nv, false);
		else if (v != nv)
			fail(c->fb, "round %d: thread %d page %ld: read back %#lx, wrote %#lx",
			     r, t, p, (unsigned long)v, (unsigned long)nv);
	}
}

static void zap_own(struct ctx *c, int t, uint64_t *last)
{
	if (madvise(c->base + t * c->own * PS, c->own * PS, MADV_DONTNEED))
		fail(c->fb, "thread %d: MADV_DONTNEED: %s", t, strerror(errno));
	memset(last, 0, c->own * sizeof(*last));
}

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	uint64_t last[NPAGES] = { 0 };
	unsigned seq = 0;
	int r;

	while ((r = rounds_next(&c->rs)) >= 0) {
		/* fault until the main thread has registered and zapped */
		while (atomic_load(&c->zapped) != r && !failed(c->fb)) {
			pass(c, r, t, last, &seq, false);
			zap_own(c, t, last);
			sched_yield();
		}
		/* a pass over pages the handler filled, or this thread wrote */
		pass(c, r, t, last, &seq, false);
		/* empty them: each first read must go through the handler */
		zap_own(c, t, last);
		pass(c, r, t, last, &seq, true);
		/* and the other threads' pages: never 0 */
		for (long p = 0; p < c->own * c->nthreads; p++) {
			uint64_t v = *word_of(c->base, p, 0);

			if (v != marker(p, 0) &&
			    (val_thread(v) != 0 || val_page(v) != p ||
			     val_epoch(v) != (unsigned long)r))
				fail(c->fb, "round %d: thread %d reads %#lx in page %ld, expected the marker or a write of thread 0",
				     r, t, (unsigned long)v, p);
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

/* One fault message: resolve it with a copy of the page's marker page. */
static void resolve(struct ctx *c, const struct uffd_msg *msg, uint64_t *page)
{
	struct uffdio_copy copy;
	unsigned long addr;
	long p;

	if (msg->event != UFFD_EVENT_PAGEFAULT) {
		fail(c->fb, "handler: event %d", msg->event);
		return;
	}
	addr = msg->arg.pagefault.address & ~(PS - 1);
	p = (addr - (unsigned long)c->base) / PS;
	if (addr < (unsigned long)c->base || p >= NPAGES) {
		fail(c->fb, "handler: fault at %#lx, outside the region",
		     (unsigned long)msg->arg.pagefault.address);
		return;
	}
	for (long k = 0; k < (long)WORDS_PER_PAGE; k++)
		page[k] = marker(p, k);
	copy = (struct uffdio_copy){
		.dst = addr, .src = (unsigned long)page, .len = PS,
	};
	if (!ioctl(c->uffd, UFFDIO_COPY, &copy)) {
		atomic_fetch_add(&c->copies, 1);
	} else if (errno == EEXIST) {
		/* filled already: wake whoever still waits */
		struct uffdio_range range = { .start = addr, .len = PS };

		atomic_fetch_add(&c->eexist, 1);
		ioctl(c->uffd, UFFDIO_WAKE, &range);
	} else {
		/* unregistered after the fault was queued */
		atomic_fetch_add(&c->stale, 1);
	}
}

static void *handler(void *arg)
{
	struct ctx *c = arg;
	uint64_t *page = mmap(NULL, PS, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED) {
		fail(c->fb, "handler: mmap: %s", strerror(errno));
		return NULL;
	}
	while (!atomic_load(&c->rs.stop)) {
		struct pollfd pfd = { .fd = c->uffd, .events = POLLIN };
		struct uffd_msg msg;

		if (poll(&pfd, 1, 10) <= 0)
			continue;
		if (read(c->uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		atomic_fetch_add(&c->msgs, 1);
		resolve(c, &msg, page);
		atomic_fetch_add(&c->handled, 1);
	}
	munmap(page, PS);
	return NULL;
}

FIXTURE(uffd) {
	int uffd;
};

FIXTURE_SETUP(uffd)
{
	struct uffdio_api api = { .api = UFFD_API };

	ASSERT_EQ(0, probe_install());
	self->uffd = syscall(__NR_userfaultfd,
			     O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (self->uffd < 0 && errno == EINVAL)
		self->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (self->uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	if (ioctl(self->uffd, UFFDIO_API, &api)) {
		close(self->uffd);
		self->uffd = -1;
		SKIP(return, "UFFDIO_API: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(uffd)
{
	if (self->uffd >= 0)
		close(self->uffd);
}

TEST_F_TIMEOUT(uffd, register_race, SPF_TIMEOUT)
{
	struct ctx c = { .nthreads = test_threads(), .len = NPAGES * PS };
	struct team th = { 0 };
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1, rounds = 0, fewest = -1;

	if (self->uffd < 0)
		return;		/* skipped in setup */
	c.uffd = self->uffd;
	c.own = NPAGES / c.nthreads;
	c.fb = failbox_new();
	ASSERT_NE(NULL, c.fb);
	c.base = map_anon(NULL, c.len, 0);
	ASSERT_NE(NULL, c.base);
	atomic_init(&c.zapped, -1);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	th.keep_nice = true;	/* the handler serves the faulting threads */
	ASSERT_EQ(0, team_start(&th, 1, handler, &c, 0));
	ASSERT_EQ(0, rounds_start(&c.rs, c.nthreads, worker, &c));

	for (int r = 0; ; r++) {
		struct uffdio_register reg = {
			.range = { .start = (unsigned long)c.base, .len = c.len },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};
		struct uffdio_range range = reg.range;
		long copies0 = atomic_load(&c.copies), copies;

		rounds_release(&c.rs, r);
		wait_progress(&c.rs.progress,
			      rnd(&seed) % (c.own * c.nthreads * 2), end + 1);
		if (ioctl(c.uffd, UFFDIO_REGISTER, &reg))
			fail(c.fb, "round %d: UFFDIO_REGISTER: %s", r,
			     strerror(errno));
		if (madvise(c.base, c.len, MADV_DONTNEED))
			fail(c.fb, "round %d: MADV_DONTNEED: %s", r,
			     strerror(errno));
		atomic_store(&c.zapped, r);
		rounds_wait(&c.rs);
		/*
		 * UFFDIO_COPY wakes the faulting thread before the handler
		 * counts the copy: wait until it is done with every message
		 * the round's faults sent, or a round counts short.
		 */
		while (atomic_load(&c.handled) < atomic_load(&c.msgs) && now_s() < end + 10)
			sched_yield();
		copies = atomic_load(&c.copies) - copies0;
		/* emptied twice after registration, and touched after each */
		if (copies < 2 * c.own * c.nthreads)
			fail(c.fb, "round %d: the handler resolved %ld faults, fewer than twice the %ld pages emptied after registration",
			     r, copies, c.own * c.nthreads);
		if (fewest < 0 || copies < fewest)
			fewest = copies;
		if (ioctl(c.uffd, UFFDIO_UNREGISTER, &range))
			fail(c.fb, "round %d: UFFDIO_UNREGISTER: %s", r,
			     strerror(errno));
		rounds++;
		if (now_s() > end || failed(c.fb))
			break;
	}
	rounds_stop(&c.rs);
	team_join(&th);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");
	munmap(c.base, c.len);
	rss1 = rss_anon_pages();

	TH_LOG("%ld rounds, %ld faults reached the handler (%ld copies, %ld already filled, %ld stale; at least %ld a round), %ld values checked, %ld first reads after an own MADV_DONTNEED, anon RSS %ld -> %ld pages, seed %#lx",
	       rounds, atomic_load(&c.msgs), atomic_load(&c.copies),
	       atomic_load(&c.eexist), atomic_load(&c.stale), fewest,
	       atomic_load(&c.checked), atomic_load(&c.strict), rss0, rss1,
	       (unsigned long)seed0);
	failbox_report(c.fb);
	EXPECT_EQ(0, failed(c.fb));
	EXPECT_LT(0, rounds);
	EXPECT_LT(0, atomic_load(&c.copies));
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	failbox_free(c.fb);
}

SPF_SCALE_TIMEOUT(uffd, register_race)

TEST_HARNESS_MAIN
