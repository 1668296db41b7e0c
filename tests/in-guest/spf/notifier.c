// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative copy on write in an mm that has, or is getting,
 * an MMU notifier. test_hmm's mirror (/dev/hmm_dmirror0, CONFIG_TEST_HMM)
 * is the secondary MMU: opening it registers an interval notifier on the
 * opener's mm, HMM_DMIRROR_READ maps the pages into the mirror (without a
 * reference: the mirror drops them when the notifier says so) and reads
 * them there. A copy on write that replaces a mirrored page without
 * calling the notifier leaves the mirror reading the old page.
 *
 * Each phase runs in forked children: a registration is for the life of
 * an mm, and each race needs an mm without one. The page under test is
 * the zero page, a read fault's, so a stale mirror reads zeros, never
 * freed memory.
 *
 *  1. alone: a child opens the mirror, then each round zaps its pages,
 *     writes the first half (new pages on empty PTEs: speculative, no
 *     notifier to call) and, for each page of the second half, reads it,
 *     mirrors it, writes it (a copy of the zero page, which must give up
 *     to the classic path: spf_abort_notifier) and reads it through the
 *     mirror again, which must see the write;
 *  2. registered mid-fault: each round a child reads its page, and
 *     writes it on CPU 0 while a thread on CPU 1 opens the mirror a few
 *     milliseconds later and mirrors the page. spf_delay=cow_copied holds
 *     the copy between its copy and its PTE lock, under RCU: registration
 *     must mark the VMA and wait for it (mm_take_all_locks()), so that
 *     the copy gives up on the mark and the classic path, calling the
 *     notifier, redoes it. The debug kernel charges those aborts to
 *     mm_take_all_locks (spf_abort_writers): the race happened. The
 *     mirror read after the write must see the write.
 */
#include "spf_window.h"
#include <sys/ioctl.h>
#include <sys/wait.h>
#include "test_hmm_uapi.h"

#define DELAY "cow_copied:40000"	/* longer than a grace period here */
#define MIRROR "/dev/hmm_dmirror0"
#define PAGES 8
#define REGISTER_AFTER_US 5000	/* into the copy's 40 ms delay */

/* What the children tell the test, in shared memory. */
struct ctx {
	struct failbox *fb;
	atomic_long rounds;
	atomic_long cows;	/* copies of a mirrored zero page */
	atomic_int ready;	/* the registrar runs on CPU 1 */
	atomic_int go;		/* the write is about to start */
	atomic_int written;	/* the write returned */
};

static volatile uint64_t *page_word(char *b, long p)
{
	return (volatile uint64_t *)(b + p * PS);
}

/* The first word of page p as the mirror reads it; 0 or -1. */
static int mirror_read(struct ctx *c, int fd, char *b, long p, uint64_t *val)
{
	static __thread uint64_t buf[WORDS_PER_PAGE];
	struct hmm_dmirror_cmd cmd = {
		.addr = (uintptr_t)(b + p * PS),
		.ptr = (uintptr_t)buf,
		.npages = 1,
	};

	if (ioctl(fd, HMM_DMIRROR_READ, &cmd)) {
		fail(c->fb, "HMM_DMIRROR_READ of %p: %s", b + p * PS,
		     strerror(errno));
		return -1;
	}
	*val = buf[0];
	return 0;
}

static int mirror_open(struct ctx *c)
{
	int fd = open(MIRROR, O_RDWR);

	if (fd < 0)
		fail(c->fb, "open(%s): %s (CONFIG_TEST_HMM)", MIRROR,
		     strerror(errno));
	return fd;
}

/*
 * Read page p (the zero page), mirror it, write v (a copy), and read it
 * through the mirror again: it must see v.
 */
static void cow_mirrored(struct ctx *c, int fd, char *b, long r, long p,
			 uint64_t v)
{
	uint64_t seen;

	if (*page_word(b, p)) {
		fail(c->fb, "round %ld: page %ld reads %#lx after a zap", r, p,
		     (unsigned long)*page_word(b, p));
		return;
	}
	if (mirror_read(c, fd, b, p, &seen))
		return;
	if (seen)
		fail(c->fb, "round %ld: the mirror reads %#lx in the zero page %ld",
		     r, (unsigned long)seen, p);
	*page_word(b, p) = v;
	atomic_fetch_add(&c->cows, 1);
	if (!mirror_read(c, fd, b, p, &seen) && seen != v)
		fail(c->fb, "round %ld: the mirror reads %#lx in page %ld, the CPU wrote %#lx: the copy on write did not call the notifier",
		     r, (unsigned long)seen, p, (unsigned long)v);
}

/* Phase 1, in a child: faults in an mm that has a notifier all along. */
static void alone_child(struct ctx *c, double seconds)
{
	double end = now_s() + seconds;
	int fd = mirror_open(c);
	char *b = map_anon(NULL, PAGES * PS, 0);
	long r;

	if (fd < 0)
		return;
	if (!b) {
		fail(c->fb, "mmap: %s", strerror(errno));
		return;
	}
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		if (madvise(b, PAGES * PS, MADV_DONTNEED)) {
			fail(c->fb, "MADV_DONTNEED: %s", strerror(errno));
			break;
		}
		for (long p = 0; p < PAGES / 2; p++)
			*page_word(b, p) = mkval(r, 0, p, 1);
		for (long p = PAGES / 2; p < PAGES; p++)
			cow_mirrored(c, fd, b, r, p, mkval(r, 0, p, 2));
		for (long p = 0; p < PAGES / 2; p++)
			if (*page_word(b, p) != mkval(r, 0, p, 1))
				fail(c->fb, "round %ld: page %ld reads %#lx, wrote %#lx",
				     r, p, (unsigned long)*page_word(b, p),
				     (unsigned long)mkval(r, 0, p, 1));
		atomic_fetch_add(&c->rounds, 1);
	}
	close(fd);
}

struct registrar {
	struct ctx *c;
	char *b;
	long r;
};

/* On CPU 1: open the mirror while the write on CPU 0 is in its copy. */
static void *registrar(void *arg)
{
	struct registrar *rg = arg;
	struct ctx *c = rg->c;
	uint64_t seen, v = mkval(rg->r, 0, 1, 3);
	int fd;

	if (pin_to_cpu(1))
		fail(c->fb, "registrar: cannot run on CPU 1: %s", strerror(errno));
	atomic_store(&c->ready, 1);
	while (!atomic_load(&c->go))
		;
	usleep(REGISTER_AFTER_US);
	fd = mirror_open(c);
	if (fd < 0)
		return NULL;
	/* the zero page or the copy, whichever the PTE has now */
	if (!mirror_read(c, fd, rg->b, 1, &seen) && seen && seen != v)
		fail(c->fb, "round %ld: the mirror reads %#lx, neither zero nor the write %#lx",
		     rg->r, (unsigned long)seen, (unsigned long)v);
	while (!atomic_load(&c->written))
		;
	if (!mirror_read(c, fd, rg->b, 1, &seen) && seen != v)
		fail(c->fb, "round %ld: the mirror reads %#lx, the CPU wrote %#lx: a copy on write that began before the registration did not call the notifier",
		     rg->r, (unsigned long)seen, (unsigned long)v);
	close(fd);
	return NULL;
}

/* Phase 2, in a child per round: the notifier comes during the copy. */
static void raced_child(struct ctx *c, long r)
{
	struct registrar rg = { .c = c, .r = r };
	pthread_t t;

	rg.b = map_anon(NULL, 2 * PS, 0);
	if (!rg.b) {
		fail(c->fb, "mmap: %s", strerror(errno));
		return;
	}
	/* the VMA's anon_vma, then the zero page under test */
	*page_word(rg.b, 0) = 1;
	if (*page_word(rg.b, 1)) {
		fail(c->fb, "round %ld: a new page reads %#lx", r,
		     (unsigned long)*page_word(rg.b, 1));
		return;
	}
	if (pin_to_cpu(0)) {
		fail(c->fb, "cannot run on CPU 0: %s", strerror(errno));
		return;
	}
	if (pthread_create(&t, NULL, registrar, &rg)) {
		fail(c->fb, "pthread_create failed");
		return;
	}
	/* A slow kernel (KCSAN) starts the thread later than the copy's delay. */
	while (!atomic_load(&c->ready))
		;
	atomic_store(&c->go, 1);
	*page_word(rg.b, 1) = mkval(r, 0, 1, 3);
	atomic_store(&c->written, 1);
	pthread_join(t, NULL);
}

/* Run fn in a forked child; false if the child did not exit cleanly. */
static bool in_child(struct ctx *c, void (*fn)(struct ctx *, double, long),
		     double seconds, long r)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		fail(c->fb, "fork: %s", strerror(errno));
		return false;
	}
	if (!pid) {
		fn(c, seconds, r);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fail(c->fb, "round %ld: the child ended with status %#x", r,
		     status);
		return false;
	}
	return true;
}

static void alone_fn(struct ctx *c, double seconds, long r)
{
	(void)r;
	alone_child(c, seconds);
}

static void raced_fn(struct ctx *c, double seconds, long r)
{
	(void)seconds;
	raced_child(c, r);
}

SPF_WINDOW_FIXTURE(notifier, DELAY);

TEST_F_TIMEOUT(notifier, race, SPF_TIMEOUT)
{
	long long notifier0, cows_alone, aborts_alone, stopped;
	char writers[512];
	double end;
	long alone_rounds, r;
	struct ctx *c;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);

	SPF_BEGIN(spf0);
	notifier0 = vmstat("spf_abort_notifier");
	in_child(c, alone_fn, test_seconds() / 2, 0);
	aborts_alone = vmstat("spf_abort_notifier") - notifier0;
	cows_alone = atomic_load(&c->cows);
	alone_rounds = atomic_load(&c->rounds);

	spf_writers_reset();
	end = now_s() + test_seconds() / 2;
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		atomic_store(&c->ready, 0);
		atomic_store(&c->go, 0);
		atomic_store(&c->written, 0);
		if (!in_child(c, raced_fn, 0, r))
			break;
	}
	stopped = spf_writers_read(writers, sizeof(writers),
				   "mm_take_all_locks");
	SPF_END(spf0, "spf_abort_notifier");

	TH_LOG("alone: %ld rounds, %lld copies of mirrored pages, %lld speculative faults gave up for the notifier",
	       alone_rounds, cows_alone, aborts_alone);
	TH_LOG("registered mid-fault: %ld rounds, %lld copies stopped by the registration marks (%s)",
	       r - 1, stopped, writers);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, alone_rounds);
	/*
	 * Only the copies gave up: one each, and some slack for copies
	 * elsewhere in the guest that have notifiers (none are expected).
	 */
	EXPECT_LE(cows_alone, aborts_alone);
	EXPECT_GE(cows_alone + 4, aborts_alone);
	EXPECT_LT(0, stopped);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(notifier, race)

TEST_HARNESS_MAIN
