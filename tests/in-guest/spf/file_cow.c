// SPDX-License-Identifier: GPL-2.0
/*
 * Write faults on a private file mapping (copy on write of a page-cache
 * page) racing truncation.
 *
 * The file is a memfd, or with SPF_FILE_DIR an unnamed file there
 * (tests/in-guest/spf-races runs this binary again as file_cow@ext4), of
 * NPAGES pages, mapped MAP_PRIVATE and writable. Every word of page p of
 * the file holds pval(epoch, p). Thread t owns a block of pages: in each
 * pass it writes a new value to its word of each of them (the first write
 * to a page that is not mapped is a fault that copies the cached page,
 * which speculation handles), reads it back, reads the page's last word
 * (the file's, as copied), and at the end of the pass reads its word of
 * every cut page again before it empties its block with MADV_DONTNEED,
 * which drops the copies: the next pass copies again.
 *
 * Each round the main thread shrinks the file to a random number of pages
 * lo, grows it back and rewrites the cut pages with a new epoch. A phase
 * counter says where it is: 0 before the shrink, 1 while it runs, 2 once
 * it returned, 3 while the grow runs, 4 after it, 5 during the rewrite, 6
 * after it. An access loads the phase before and after; its outcome must
 * be legal in one of the phases in between. On a cut page:
 *  - a write that began and ended while the file was short (phase 2)
 *    must get SIGBUS (BUS_ADRERR): a private copy must not survive the
 *    truncation (it zaps them after removing the pages from the cache,
 *    which a speculative copy that holds the page's lock cannot miss),
 *    and a copy must not be made of a page no longer in the file;
 *  - SIGBUS is legal only while the file is, or may be, short (1 to 3);
 *  - the copied last word is the old epoch before the shrink returned, 0
 *    (a hole) once the grow returned, the new epoch once the rewrite did
 *    (either, or a mix of their bytes, during the rewrite);
 *  - the second read of a cut page must not find the thread's value once
 *    the shrink returned if the write was done before it began to return
 *    (phase 1 at most after the access): truncation zaps every private
 *    copy of the range before it returns, and without
 *    that read a copy that outlived it would be dropped by the pass's
 *    MADV_DONTNEED unseen.
 * Pages below lo keep their epoch and are never cut.
 */
#include "spf_file.h"

#define NPAGES 64
#define NPHASES 7
#define TAG_WORD (WORDS_PER_PAGE - 1)

struct ctx {
	int nthreads;
	long per;		/* pages per thread */
	int fd;
	char *base;
	size_t len;
	struct rounds rs;
	/* set for each round while the threads wait at the barrier */
	long lo;		/* pages [lo, NPAGES) are cut */
	unsigned long ep[NPAGES];	/* each page's epoch at round start */
	unsigned long enew;
	atomic_int phase;
	atomic_long writes, copies_checked, sigbus, strict, reread;
	uint64_t *buf;		/* pwrite()'s source */
	struct failbox *fb;
};

/* Each byte of x is a's or b's: pwrite() need not store a word at once. */
static bool is_mix(uint64_t x, uint64_t a, uint64_t b)
{
	for (int i = 0; i < 64; i += 8) {
		uint64_t m = 0xffULL << i;

		if ((x & m) != (a & m) && (x & m) != (b & m))
			return false;
	}
	return true;
}

/* May the file's word of cut page p read x in phase ph? */
static bool tag_legal(const struct ctx *c, int ph, long p, uint64_t x)
{
	uint64_t old = pval(c->ep[p], p), nw = pval(c->enew, p);

	if (p < c->lo)
		return x == old;
	switch (ph) {
	case 0:
	case 1:
		return x == old;
	case 2:
		return false;
	case 3:
	case 4:
		return x == 0;
	case 5:
		return is_mix(x, 0, nw);
	default:
		return x == nw;
	}
}

/* Is x legal for the file's word of page p in one of phases a to b? */
static bool tag_legal_in(const struct ctx *c, int a, int b, long p, uint64_t x)
{
	for (int ph = a; ph <= b; ph++)
		if (tag_legal(c, ph, p, x))
			return true;
	return false;
}

/* A SIGBUS at the address, in a phase where the page may be cut. */
static bool bus_legal(const struct ctx *c, int a, int b, long p,
		      volatile uint64_t *w)
{
	return p >= c->lo && a <= 3 && b >= 1 && probe_signo == SIGBUS &&
	       probe_code == BUS_ADRERR && probe_addr == (void *)w;
}

/*
 * Write thread t's word of page p, read it back and read the copied last
 * word; check what came back against the phases the access spanned. The
 * phase after the access, with *nvp the value written, or -1 when the
 * write did not stay.
 */
static int access_page(struct ctx *c, int t, long p, unsigned *seq,
		       uint64_t *nvp)
{
	volatile uint64_t *w = word_of(c->base, p, t);
	volatile uint64_t *tw = (volatile uint64_t *)(c->base + p * PS) +
				TAG_WORD;
	int r = atomic_load(&c->rs.round), a, b, step;
	uint64_t nv = mkval(r, t, p, ++*seq), back = 0, tag = 0;

	*nvp = nv;
	a = atomic_load(&c->phase);
	step = probe_write(w, nv) ? 1 : probe_read(w, &back) ? 2 :
	       probe_read(tw, &tag) ? 3 : 0;
	b = atomic_load(&c->phase);
	atomic_fetch_add(&c->writes, 1);
	if (p >= c->lo && a == 2 && b == 2)
		atomic_fetch_add(&c->strict, 1);

	if (step) {
		atomic_fetch_add(&c->sigbus, 1);
		if (!bus_legal(c, a, b, p, step == 3 ? tw : w)) {
			fail(c->fb, "round %d: thread %d page %ld (cut from %ld): access %d from phase %d to phase %d: signal %d code %d at %p",
			     r, t, p, c->lo, step, a, b, probe_signo,
			     probe_code, probe_addr);
		}
		return -1;
	}
	if (p >= c->lo && a == 2 && b == 2) {
		fail(c->fb, "round %d: thread %d page %ld (cut from %ld): a write while the file was short succeeded: a private copy outlived truncation",
		     r, t, p, c->lo);
		return -1;
	}
	/* truncation may have zapped the copy since: the file's word then */
	if (back != nv && !(p >= c->lo && b >= 3 &&
			    tag_legal_in(c, a > 3 ? a : 3, b, p, back))) {
		fail(c->fb, "round %d: thread %d page %ld: wrote %#lx, read back %#lx, from phase %d to phase %d",
		     r, t, p, (unsigned long)nv, (unsigned long)back,
		     a, b);
		return -1;
	}
	if (!tag_legal_in(c, a, b, p, tag))
		fail(c->fb, "round %d: thread %d page %ld (cut from %ld, epoch %lu, new %lu): copied word %#lx (epoch %lu page %ld) from phase %d to phase %d",
		     r, t, p, c->lo, c->ep[p], c->enew,
		     (unsigned long)tag, val_epoch(tag), val_page(tag), a, b);
	atomic_fetch_add(&c->copies_checked, 1);
	return back == nv ? b : -1;
}

/*
 * Read thread t's word of cut page p again, written with nv in an access
 * done by phase b: once the shrink has returned, a write done before it
 * began to return must be gone with its copy (a fault, or the file's
 * word).
 */
static void reread_page(struct ctx *c, int t, long p, int b, uint64_t nv)
{
	volatile uint64_t *w = word_of(c->base, p, t);
	int r = atomic_load(&c->rs.round), a2 = atomic_load(&c->phase);
	uint64_t v;

	if (probe_read(w, &v) || b > 1 || a2 < 2)
		return;
	atomic_fetch_add(&c->reread, 1);
	if (v == nv)
		fail(c->fb, "round %d: thread %d page %ld (cut from %ld): %#lx, written by phase %d, read again from phase %d: a private copy outlived truncation",
		     r, t, p, c->lo, (unsigned long)nv, b, a2);
}

static void *writer(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	long first = t * c->per;
	unsigned seq = 0;
	uint64_t nv[NPAGES];
	int done[NPAGES];

	while (rounds_next(&c->rs) >= 0) {
		bool last = false;

		/* a pass that begins after the rewrite checks the end state */
		while (!last && !failed(c->fb)) {
			last = atomic_load(&c->phase) == NPHASES - 1;
			for (long p = first; p < first + c->per; p++)
				done[p] = access_page(c, t, p, &seq, &nv[p]);
			for (long p = first; p < first + c->per; p++)
				if (p >= c->lo && done[p] >= 0)
					reread_page(c, t, p, done[p], nv[p]);
			madvise(c->base + first * PS, c->per * PS,
				MADV_DONTNEED);
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

/* Operation i of the round (shrink, grow, rewrite). 0 or an errno. */
static int do_op(struct ctx *c, int i)
{
	switch (i) {
	case 0:
		return ftruncate(c->fd, c->lo * PS) ? errno : 0;
	case 1:
		return ftruncate(c->fd, NPAGES * PS) ? errno : 0;
	default:
		return write_file_pages(c->fd, c->buf, c->lo, NPAGES, c->enew);
	}
}

FIXTURE(file_cow) {
	struct ctx *c;
};

FIXTURE_SETUP(file_cow)
{
	ASSERT_EQ(0, probe_install());
}

FIXTURE_TEARDOWN(file_cow)
{
	struct ctx *c = self->c;

	if (!c)
		return;
	if (c->base)
		munmap(c->base, c->len);
	if (c->fd >= 0)
		close(c->fd);
	if (c->buf)
		munmap(c->buf, NPAGES * PS);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

TEST_F_TIMEOUT(file_cow, truncate, SPF_TIMEOUT)
{
	const char *dir = getenv("SPF_FILE_DIR");
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	unsigned long epoch = 1;
	long rounds = 0;
	struct ctx *c;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	self->c = c;
	c->fd = -1;
	c->nthreads = test_threads();
	c->per = NPAGES / c->nthreads;
	c->len = NPAGES * PS;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->buf = mmap(NULL, NPAGES * PS, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c->buf);
	c->fd = new_test_file("spf-file-cow");
	ASSERT_LE(0, c->fd) TH_LOG("a new file (SPF_FILE_DIR=%s): %s",
				   dir ? dir : "", strerror(errno));
	ASSERT_EQ(0, write_file_pages(c->fd, c->buf, 0, NPAGES, epoch));
	for (long p = 0; p < NPAGES; p++)
		c->ep[p] = epoch;
	c->base = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		       c->fd, 0);
	ASSERT_NE(MAP_FAILED, c->base) c->base = NULL;
	madvise(c->base, c->len, MADV_NOHUGEPAGE);
	/* the copies need the mapping's anon_vma, which a first copy makes */
	*(volatile char *)c->base = 0;
	ASSERT_EQ(0, madvise(c->base, c->len, MADV_DONTNEED));

	SPF_BEGIN_FILE(spf0);
	prefault_stack();
	ASSERT_EQ(0, rounds_start(&c->rs, c->nthreads, writer, c));
	for (int r = 0; ; r++) {
		c->lo = rnd(&seed) % NPAGES;
		c->enew = ++epoch;
		atomic_store(&c->phase, 0);
		rounds_release(&c->rs, r);
		for (int i = 0; i < 3; i++) {
			int err;

			usleep(rnd(&seed) % 500);
			atomic_fetch_add(&c->phase, 1);
			err = do_op(c, i);
			atomic_fetch_add(&c->phase, 1);
			if (err)
				fail(c->fb, "round %d: operation %d: %s", r, i,
				     strerror(err));
		}
		rounds_wait(&c->rs);
		rounds++;
		for (long p = c->lo; p < NPAGES; p++)
			c->ep[p] = c->enew;
		/*
		 * A slow host can spend the whole race in one round that never
		 * wrote while the file was short: go on until one did, or for
		 * twice the race's length more.
		 */
		if (failed(c->fb) ||
		    (now_s() > end && atomic_load(&c->strict) > 0) ||
		    now_s() > end + 2 * test_seconds())
			break;
	}
	rounds_stop(&c->rs);

	TH_LOG("%ld rounds, %ld writes: %ld copies checked, %ld SIGBUS, %ld writes while the file was short, %ld copies read again after the shrink; seed %#lx",
	       rounds, atomic_load(&c->writes),
	       atomic_load(&c->copies_checked), atomic_load(&c->sigbus),
	       atomic_load(&c->strict), atomic_load(&c->reread),
	       (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, rounds);
	/* the window this test is about: writes that had to fail */
	EXPECT_LT(0, atomic_load(&c->strict));
	/*
	 * Truncation marks no VMA: a copy it overtakes finds the page gone
	 * or locked (spf_abort_file_miss) or its PTE changed under the lock.
	 */
	SPF_END(spf0, NULL);
}

SPF_SCALE_TIMEOUT(file_cow, truncate)

TEST_HARNESS_MAIN
