// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing the VMA changes that leave access alone: mlock()/munlock(),
 * madvise() flag changes (MADV_DONTFORK, MADV_WIPEONFORK, MADV_NOHUGEPAGE
 * and their opposites), mbind() policies, mprotect() adding and removing
 * PROT_EXEC, and the soft-dirty reset of /proc/self/clear_refs (which
 * write-protects every PTE and flushes the TLB at its end). Each is applied
 * to a random part of the region, splitting the VMA, and undone at random,
 * merging it again: the VMA's bounds, flags, policy and anon_vma change
 * under the faults.
 *
 * Each thread has pages of its own: it reads, writes and reads back its
 * word of each, then empties them with MADV_DONTNEED (which fails on
 * mlocked parts: those pages may or may not be emptied, and the next read
 * tells). Checks:
 *  - no access ever faults (SIGSEGV, SIGBUS);
 *  - every value read is the thread's last write, or 0 after its
 *    MADV_DONTNEED: no write lost (to a page copied or reused under a
 *    write-protect fault), no page from elsewhere;
 *  - at the end, the main thread finds every last write in place, and the
 *    anonymous RSS comes back.
 */
#include "spf_common.h"

#include <sys/syscall.h>

#define NPAGES 64
#define MPOL_DEFAULT_ 0
#define MPOL_PREFERRED_ 1

enum op { OP_MLOCK, OP_DONTFORK, OP_WIPEONFORK, OP_NOHUGEPAGE, OP_MBIND,
	  OP_EXEC, OP_SOFTDIRTY, NR_OPS };
static const char *const op_name[NR_OPS] = {
	"mlock", "MADV_DONTFORK", "MADV_WIPEONFORK", "MADV_NOHUGEPAGE",
	"mbind", "PROT_EXEC", "clear_refs",
};

struct ctx {
	char *base;
	size_t len;
	int nthreads;
	long own;
	atomic_int stop;
	atomic_long checked, einval;
	uint64_t expect[MAX_THREADS][NPAGES];	/* after the threads stop */
	struct failbox *fb;
};

static void *worker(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	long first = t * c->own;
	uint64_t *expect = c->expect[t];
	bool maybe_zero[NPAGES] = { false };
	unsigned seq = 0;

	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		for (long p = first; p < first + c->own; p++) {
			volatile uint64_t *w = word_of(c->base, p, t);
			uint64_t v, nv = mkval(0, t, p, ++seq);

			if (probe_read(w, &v)) {
				fail(c->fb, "thread %d: read of %p: signal %d code %d",
				     t, (void *)w, probe_signo, probe_code);
				return NULL;
			}
			if (v != expect[p] && !(maybe_zero[p] && v == 0))
				fail(c->fb, "thread %d page %ld: read %#lx, expected %#lx%s",
				     t, p, (unsigned long)v,
				     (unsigned long)expect[p],
				     maybe_zero[p] ? " or 0" : "");
			atomic_fetch_add(&c->checked, 1);
			if (probe_write(w, nv)) {
				fail(c->fb, "thread %d: write to %p: signal %d code %d",
				     t, (void *)w, probe_signo, probe_code);
				return NULL;
			}
			expect[p] = nv;
			maybe_zero[p] = false;
			if (probe_read(w, &v) || v != nv)
				fail(c->fb, "thread %d page %ld: read back %#lx, wrote %#lx",
				     t, p, (unsigned long)v, (unsigned long)nv);
		}
		if (!madvise(c->base + first * PS, c->own * PS, MADV_DONTNEED)) {
			memset(expect + first, 0, c->own * sizeof(*expect));
		} else if (errno == EINVAL) {
			/* an mlocked part: emptied up to it, or not */
			atomic_fetch_add(&c->einval, 1);
			for (long p = first; p < first + c->own; p++)
				maybe_zero[p] = true;
		} else {
			fail(c->fb, "thread %d: MADV_DONTNEED: %s", t,
			     strerror(errno));
		}
		sched_yield();
	}
	/* the main thread checks what is left: settle the doubt first */
	for (long p = first; p < first + c->own; p++) {
		if (maybe_zero[p] && *word_of(c->base, p, t) == 0)
			expect[p] = 0;
	}
	return NULL;
}

/* Apply op, or undo it, to len bytes at addr: 0 or an errno. */
static int apply(enum op op, bool undo, char *addr, size_t len)
{
	unsigned long node0 = 1;
	int r = 0;

	switch (op) {
	case OP_MLOCK:
		r = undo ? munlock(addr, len) : mlock(addr, len);
		break;
	case OP_DONTFORK:
		r = madvise(addr, len, undo ? MADV_DOFORK : MADV_DONTFORK);
		break;
	case OP_WIPEONFORK:
		r = madvise(addr, len, undo ? MADV_KEEPONFORK : MADV_WIPEONFORK);
		break;
	case OP_NOHUGEPAGE:
		/* the region is too small for a huge page either way */
		r = madvise(addr, len, undo ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
		break;
	case OP_MBIND:
		r = syscall(SYS_mbind, addr, len,
			    undo ? MPOL_DEFAULT_ : MPOL_PREFERRED_,
			    undo ? NULL : &node0, undo ? 0 : 64, 0);
		break;
	case OP_EXEC:
		r = mprotect(addr, len, PROT_READ | PROT_WRITE |
			     (undo ? 0 : PROT_EXEC));
		break;
	case OP_SOFTDIRTY: {
		int fd = open("/proc/self/clear_refs", O_WRONLY);

		if (fd < 0)
			return errno;
		r = write(fd, "4", 1) == 1 ? 0 : -1;
		close(fd);
		break;
	}
	default:
		break;
	}
	return r ? errno : 0;
}

SPF_RACE_FIXTURE(vma_flags);

TEST_F_TIMEOUT(vma_flags, race, SPF_TIMEOUT)
{
	struct ctx *c;
	struct team tm = { 0 };
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long rss0, rss1, done[NR_OPS] = { 0 }, unsupported[NR_OPS] = { 0 };
	char line[NR_OPS * 40] = "", *q = line;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->nthreads = test_threads();
	c->len = NPAGES * PS;
	c->own = NPAGES / c->nthreads;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->base = self->map = map_anon(NULL, c->len, 0);
	self->map_len = c->len;
	ASSERT_NE(NULL, c->base);

	SPF_BEGIN(spf0);
	prefault_stack();
	rss0 = rss_anon_pages();
	ASSERT_EQ(0, team_run(&tm, c->nthreads, worker, c));

	while (now_s() < end && !failed(c->fb)) {
		enum op op = rnd(&seed) % NR_OPS;
		long lo = rnd(&seed) % NPAGES;
		long n = 1 + rnd(&seed) % (NPAGES - lo);
		int err;

		if (unsupported[op])
			continue;
		err = apply(op, rnd(&seed) % 2, c->base + lo * PS, n * PS);
		if (!err) {
			done[op]++;
		} else if (err == ENOSYS || err == EPERM || err == ENOMEM ||
			   err == EINVAL || err == EACCES || err == ENOENT) {
			/* not in this kernel or not allowed here: drop it */
			unsupported[op] = err;
		} else {
			fail(c->fb, "%s of pages %ld-%ld: %s", op_name[op], lo,
			     lo + n - 1, strerror(err));
		}
		/* a few accesses between changes */
		for (int i = rnd(&seed) % 4; i > 0; i--)
			sched_yield();
	}
	atomic_store(&c->stop, 1);
	team_join(&tm);
	SPF_END(spf0, "spf_abort_vma_changed", "spf_abort_vma_busy");
	munlock(c->base, c->len);
	for (int t = 0; t < c->nthreads; t++)
		for (long p = t * c->own; p < (t + 1) * c->own; p++)
			if (*word_of(c->base, p, t) != c->expect[t][p])
				fail(c->fb, "thread %d's word of page %ld is %#lx, it wrote %#lx",
				     t, p, (unsigned long)*word_of(c->base, p, t),
				     (unsigned long)c->expect[t][p]);
	munmap(c->base, c->len);
	self->map = NULL;
	rss1 = rss_anon_pages();

	for (int i = 0; i < NR_OPS; i++)
		q += snprintf(q, line + sizeof(line) - q, " %s %ld%s%s", op_name[i],
			      done[i], unsupported[i] ? " then " : "",
			      unsupported[i] ? strerror(unsupported[i]) : "");
	TH_LOG("changes:%s; %ld values checked, %ld MADV_DONTNEEDs failed on mlocked pages, anon RSS %ld -> %ld pages, seed %#lx",
	       line, atomic_load(&c->checked), atomic_load(&c->einval), rss0,
	       rss1, (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LE(rss1, rss0 + RSS_SLACK_PAGES);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(vma_flags, race)

TEST_HARNESS_MAIN
