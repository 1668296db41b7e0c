// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing fork(), which write-protects the parent's PTEs for copy on
 * write (per-VMA locks corrupted memory here in 6.4: fb49c455323f).
 *
 * The threads write (a new value each time, tagged with the number of
 * forks that had returned when the write began) and read back their word
 * of every page while the main thread forks again and again. The first
 * half of the region is shared by all threads (their writes race each
 * other's copies on write); in the second half each thread has pages of
 * its own, which it empties with MADV_DONTNEED after each pass to keep
 * faulting. Checks:
 *
 *  parent:
 *  - every value read is the thread's last write (or 0 after its own
 *    MADV_DONTNEED): no write is lost to a copy made under it;
 *  - the word reserved for children is 0 on every page: the parent never
 *    sees a child's marker;
 *  child (fork number n):
 *  - every word is 0 or a value its thread wrote to that page before
 *    fork number n returned in the parent: tagged with less than n;
 *  - it writes a marker to its word of every page and reads it back;
 *  - after the parent's threads have written on (or 100 ms), it reads
 *    everything again: the same values, and its markers: never the
 *    parent's writes after the fork.
 * At the end, the anonymous RSS is back to where it was.
 */
#include "spf_common.h"

#define NPAGES 64
#define SHARED_PAGES 32
#define MARKER 0xc41d000000000000ULL

struct ctx {
	char *base;
	size_t len;
	int nthreads;
	long own;		/* private pages per thread */
	atomic_long forks;	/* forks that returned in the parent */
	atomic_int stop;
	atomic_long checked, zaps;
	struct failbox *fb;
	/* MAP_SHARED: the children watch the parent's threads progress */
	atomic_long *progress;
	uint64_t *snap;		/* the child's copy, [page][word] */
};

/* The thread's word of page p: read, write a new value, read back. */
static bool access_page(struct ctx *c, int t, long p, uint64_t *expect,
			unsigned *seq)
{
	volatile uint64_t *w = word_of(c->base, p, t);
	volatile uint64_t *cw = (volatile uint64_t *)(c->base + p * PS) +
				CHILD_WORD;
	uint64_t v, nv;

	if (probe_read(w, &v)) {
		fail(c->fb, "thread %d: read of %p: signal %d", t, (void *)w,
		     probe_signo);
		return false;
	}
	if (v != *expect)
		fail(c->fb, "thread %d page %ld: read %#lx, expected %#lx (fork %ld)",
		     t, p, (unsigned long)v, (unsigned long)*expect,
		     atomic_load(&c->forks));
	nv = mkval(atomic_load(&c->forks), t, p, ++*seq);
	if (probe_write(w, nv)) {
		fail(c->fb, "thread %d: write to %p: signal %d", t, (void *)w,
		     probe_signo);
		return false;
	}
	*expect = nv;
	if (probe_read(w, &v) || v != nv)
		fail(c->fb, "thread %d page %ld: read back %#lx, wrote %#lx (fork %ld)",
		     t, p, (unsigned long)v, (unsigned long)nv,
		     atomic_load(&c->forks));
	v = *cw;
	if (v != 0)
		fail(c->fb, "thread %d page %ld: the parent reads %#lx in the child's word",
		     t, p, (unsigned long)v);
	atomic_fetch_add(&c->checked, 1);
	return true;
}

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	long first = SHARED_PAGES + t * c->own;
	uint64_t expect[NPAGES] = { 0 };
	unsigned seq = 0;

	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		for (long p = 0; p < SHARED_PAGES; p++)
			if (!access_page(c, t, p, &expect[p], &seq))
				return NULL;
		for (long p = first; p < first + c->own; p++)
			if (!access_page(c, t, p, &expect[p], &seq))
				return NULL;
		if (madvise(c->base + first * PS, c->own * PS, MADV_DONTNEED))
			fail(c->fb, "thread %d: MADV_DONTNEED: %s", t,
			     strerror(errno));
		for (long p = first; p < first + c->own; p++)
			expect[p] = 0;
		atomic_fetch_add(&c->zaps, 1);
		atomic_fetch_add(c->progress, 1);
		sched_yield();
	}
	return NULL;
}

/* Is v a value thread t may have written to page p before fork n? */
static bool legal_in_child(uint64_t v, int t, long p, long n)
{
	return v == 0 || (val_thread(v) == t && val_page(v) == p &&
			  (long)val_epoch(v) < n);
}

/* The child of fork number n: only this thread runs here. */
static int child(struct ctx *c, long n)
{
	uint64_t mark = MARKER | n;
	long target = atomic_load(c->progress) + 2L * c->nthreads;
	double until = now_s() + 0.1;

	for (long p = 0; p < NPAGES; p++) {
		volatile uint64_t *pg = (volatile uint64_t *)(c->base + p * PS);

		for (int t = 0; t < c->nthreads; t++) {
			uint64_t v = *word_of(c->base, p, t);

			c->snap[p * WORDS_PER_PAGE + t] = v;
			if (!legal_in_child(v, t, p, n)) {
				fail(c->fb, "child of fork %ld: thread %d's word of page %ld is %#lx, written after the fork",
				     n, t, p, (unsigned long)v);
				return 1;
			}
		}
		if (pg[CHILD_WORD] != 0) {
			fail(c->fb, "child of fork %ld: child word of page %ld is %#lx",
			     n, p, (unsigned long)pg[CHILD_WORD]);
			return 1;
		}
		pg[CHILD_WORD] = mark;
		if (pg[CHILD_WORD] != mark) {
			fail(c->fb, "child of fork %ld: page %ld: wrote %#lx, read back %#lx",
			     n, p, (unsigned long)mark,
			     (unsigned long)pg[CHILD_WORD]);
			return 1;
		}
	}
	/* the parent's threads write on */
	while (atomic_load(c->progress) < target && now_s() < until)
		sched_yield();
	for (long p = 0; p < NPAGES; p++) {
		volatile uint64_t *pg = (volatile uint64_t *)(c->base + p * PS);

		for (int t = 0; t < c->nthreads; t++) {
			uint64_t v = *word_of(c->base, p, t);

			if (v != c->snap[p * WORDS_PER_PAGE + t]) {
				fail(c->fb, "child of fork %ld: thread %d's word of page %ld changed from %#lx to %#lx",
				     n, t, p,
				     (unsigned long)c->snap[p * WORDS_PER_PAGE + t],
				     (unsigned long)v);
				return 1;
			}
		}
		if (pg[CHILD_WORD] != mark) {
			fail(c->fb, "child of fork %ld: page %ld: its marker %#lx became %#lx",
			     n, p, (unsigned long)mark,
			     (unsigned long)pg[CHILD_WORD]);
			return 1;
		}
	}
	return 0;
}

SPF_RACE_FIXTURE(fork);

TEST_F_TIMEOUT(fork, race, SPF_TIMEOUT)
{
	struct ctx c = { .nthreads = test_threads(), .len = NPAGES * PS };
	struct team tm = { 0 };
	double end = now_s() + test_seconds();
	long rss0, rss1, forks = 0;
	size_t snap_len = NPAGES * PS;

	c.own = (NPAGES - SHARED_PAGES) / c.nthreads;
	c.fb = failbox_new();
	ASSERT_NE(NULL, c.fb);
	c.progress = mmap(NULL, PS, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c.progress);
	c.snap = mmap(NULL, snap_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c.snap);
	c.base = map_anon(NULL, c.len, 0);
	ASSERT_NE(NULL, c.base);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	ASSERT_EQ(0, team_run(&tm, c.nthreads, worker, &c));

	while (now_s() < end && !failed(c.fb)) {
		long n = atomic_load(&c.forks) + 1;
		int status;
		pid_t pid = fork();

		if (pid == 0)
			_exit(child(&c, n));
		if (pid < 0) {
			fail(c.fb, "fork: %s", strerror(errno));
			break;
		}
		atomic_store(&c.forks, n);
		forks++;
		if (waitpid(pid, &status, 0) != pid) {
			fail(c.fb, "waitpid: %s", strerror(errno));
			break;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail(c.fb, "child of fork %ld: %s %d", n,
			     WIFEXITED(status) ? "exit status" : "signal",
			     WIFEXITED(status) ? WEXITSTATUS(status) :
						 WTERMSIG(status));
	}
	atomic_store(&c.stop, 1);
	team_join(&tm);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");
	munmap(c.base, c.len);
	rss1 = rss_anon_pages();

	TH_LOG("%ld forks, %ld accesses, %ld MADV_DONTNEEDs, anon RSS %ld -> %ld pages",
	       forks, atomic_load(&c.checked), atomic_load(&c.zaps), rss0, rss1);
	failbox_report(c.fb);
	EXPECT_EQ(0, failed(c.fb));
	EXPECT_LT(0, forks);
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	munmap(c.snap, snap_len);
	munmap(c.progress, PS);
	failbox_free(c.fb);
}

SPF_SCALE_TIMEOUT(fork, race)

TEST_HARNESS_MAIN
