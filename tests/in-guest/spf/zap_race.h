/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Faults racing an operation that empties a mapped region: each thread
 * reads its word of every page, writes a new value and reads it back, on
 * pages all threads share (so one thread's copy on write races another's
 * write), while the main thread empties the whole region now and then.
 * The zero page comes in on the reads after each zap, and is copied on
 * write by the next write: the zero-page COW races the zap too.
 *
 * The main thread bumps `started` before the operation and `done` after
 * it. For the last value v a thread wrote to a word, it notes D0 = done
 * before the write and S1 = started after it; a read that loads D2 = done
 * before it and S3 = started after it must return:
 *
 *   - 0 when D2 > S1: zap number S1 + 1 began after the write and ended
 *     before the read (a refault after the zap reads zeros, not the value
 *     a fault installed behind the zap's back);
 *   - v when S3 == D0: no zap ran at any time between the write and the
 *     read (a lost write: the value went to a page that is not mapped);
 *   - v or 0 otherwise; never anything else (a value from an older write,
 *     another thread, another page or another generation of mapping).
 *
 * At the end the main thread checks every word the same way, unmaps the
 * region and checks that the anonymous RSS is back to where it was.
 */
#ifndef ZAP_RACE_H
#define ZAP_RACE_H

#include "spf_common.h"

#define ZAP_NPAGES 64

struct zap_word {
	uint64_t v;	/* last value written, 0 if none */
	long d0, s1;	/* done before, started after that write */
};

struct zap_ctx {
	char *base;
	size_t len;
	int nthreads;
	/* empty [base, base + len): returns 0 or an errno */
	int (*zap)(struct zap_ctx *c);
	/* abort counters the zap makes move, NULL-terminated; NULL: none */
	const char *const *overlap;
	atomic_long started, done;	/* zaps */
	atomic_long progress;		/* writes */
	atomic_int stop;
	atomic_long reads, zeros, exact;
	struct zap_word (*w)[ZAP_NPAGES];	/* [thread][page] */
	struct failbox *fb;
};

struct zap_targ {
	struct zap_ctx *c;
	int id;
};

/* Check x, read between D2 (done before) and S3 (started after). */
static void zap_check(struct zap_ctx *c, int t, long p, const char *what,
		      uint64_t x, long d2, long s3)
{
	struct zap_word *st = &c->w[t][p];

	atomic_fetch_add(&c->reads, 1);
	if (d2 > st->s1 && st->v) {
		atomic_fetch_add(&c->zeros, 1);
		if (x != 0)
			fail(c->fb, "thread %d page %ld: %s %#lx after zap %ld, which began after the write of %#lx; expected 0",
			     t, p, what, (unsigned long)x, st->s1 + 1,
			     (unsigned long)st->v);
		return;
	}
	if (s3 == st->d0) {
		atomic_fetch_add(&c->exact, 1);
		if (x != st->v)
			fail(c->fb, "thread %d page %ld: %s %#lx, wrote %#lx and no zap ran since (zaps %ld..%ld)",
			     t, p, what, (unsigned long)x, (unsigned long)st->v,
			     st->d0, s3);
		return;
	}
	if (x != st->v && x != 0)
		fail(c->fb, "thread %d page %ld: %s %#lx, expected %#lx or 0",
		     t, p, what, (unsigned long)x, (unsigned long)st->v);
}

static bool zap_read(struct zap_ctx *c, int t, long p, const char *what)
{
	volatile uint64_t *w = word_of(c->base, p, t);
	long d2, s3;
	uint64_t x;

	d2 = atomic_load(&c->done);
	if (probe_read(w, &x)) {
		fail(c->fb, "thread %d: %s of %p: signal %d code %d",
		     t, what, (void *)w, probe_signo, probe_code);
		return false;
	}
	s3 = atomic_load(&c->started);
	zap_check(c, t, p, what, x, d2, s3);
	return true;
}

static void *zap_worker(void *arg)
{
	struct zap_targ *a = arg;
	struct zap_ctx *c = a->c;
	int t = a->id;
	unsigned seq = 0;

	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		for (long p = 0; p < ZAP_NPAGES; p++) {
			volatile uint64_t *w = word_of(c->base, p, t);
			uint64_t nv = mkval(0, t, p, ++seq);
			long d0, s1;

			if (!zap_read(c, t, p, "read"))
				return NULL;
			d0 = atomic_load(&c->done);
			if (probe_write(w, nv)) {
				fail(c->fb, "thread %d: write to %p: signal %d code %d",
				     t, (void *)w, probe_signo, probe_code);
				return NULL;
			}
			atomic_thread_fence(memory_order_seq_cst);
			s1 = atomic_load(&c->started);
			c->w[t][p] = (struct zap_word){ .v = nv, .d0 = d0, .s1 = s1 };
			atomic_fetch_add(&c->progress, 1);
			if (!zap_read(c, t, p, "read back"))
				return NULL;
		}
		/* two CPUs, more threads: let the zapper in */
		sched_yield();
	}
	return NULL;
}

/*
 * The whole test; the caller has mapped c->base (c->len bytes, writable,
 * private anonymous) and set c->zap. Returns the number of zaps.
 */
static long zap_race(struct __test_metadata *_metadata, struct zap_ctx *c)
{
	struct zap_targ args[MAX_THREADS];
	struct team tm = { 0 };
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1;
	int err;

	c->nthreads = test_threads();
	c->fb = failbox_new();
	c->w = mmap(NULL, sizeof(*c->w) * MAX_THREADS, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!c->fb || c->w == MAP_FAILED) {
		TH_LOG("mmap: %s", strerror(errno));
		_metadata->passed = 0;
		return 0;
	}
	for (int i = 0; i < c->nthreads; i++)
		args[i] = (struct zap_targ){ .c = c, .id = i };

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	if (team_start(&tm, c->nthreads, zap_worker, args, sizeof(args[0]))) {
		fail(c->fb, "cannot start threads");
		atomic_store(&c->stop, 1);
	}
	while (now_s() < end && !failed(c->fb)) {
		/* let the threads write something first, or not */
		atomic_store(&c->progress, 0);
		wait_progress(&c->progress,
			      rnd(&seed) % (ZAP_NPAGES * c->nthreads), end);
		atomic_fetch_add(&c->started, 1);
		err = c->zap(c);
		atomic_fetch_add(&c->done, 1);
		if (err)
			fail(c->fb, "zap %ld: %s", atomic_load(&c->done),
			     strerror(err));
	}
	atomic_store(&c->stop, 1);
	team_join(&tm);
	spf_run_end(_metadata, &spf0, c->overlap);

	/* every word, with no zap running */
	for (int t = 0; t < c->nthreads; t++) {
		for (long p = 0; p < ZAP_NPAGES; p++) {
			long d2 = atomic_load(&c->done);
			uint64_t x = *word_of(c->base, p, t);

			zap_check(c, t, p, "final read", x, d2,
				  atomic_load(&c->started));
		}
	}
	munmap(c->base, c->len);
	rss1 = rss_anon_pages();

	TH_LOG("%ld zaps, %ld reads (%ld had to be zero, %ld exact), anon RSS %ld -> %ld pages, seed %#lx",
	       atomic_load(&c->done), atomic_load(&c->reads),
	       atomic_load(&c->zeros), atomic_load(&c->exact), rss0, rss1,
	       (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, atomic_load(&c->done));
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	munmap(c->w, sizeof(*c->w) * MAX_THREADS);
	failbox_free(c->fb);
	return atomic_load(&c->done);
}

#endif /* ZAP_RACE_H */
