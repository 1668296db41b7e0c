// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative NUMA hinting fault between the walk, which read
 * the PROT_NONE PTE that NUMA balancing's scanner left, and the PTE lock,
 * under which it makes the PTE accessible again. A zap (MADV_DONTNEED)
 * and a migration change that PTE without marking the VMA: only the
 * check under the lock that the PTE is still the one the walk read
 * (spf_numa_pte_changed counts the faults it stops) keeps the fault from
 * making present a PTE that is none (physical page 0 mapped into the
 * process) or a migration entry. Skipped (spf_hole=numa), the read after
 * the zap returns physical page 0's bytes instead of zeroes. mprotect()
 * marks the VMA, and the fault gives up on the mark.
 *
 * Migrations started by a process (move_pages(), mbind(MPOL_MF_MOVE),
 * migrate_pages()) begin with lru_cache_disable(), whose
 * synchronize_rcu_expedited() waits for the speculative faults in
 * flight: they reach the window only when they began before the fault,
 * which a test cannot arrange. The zap stands for them here: the same
 * check stops both.
 *
 * A guest with NUMA balancing (CONFIG_NUMA_BALANCING; the test turns it
 * on and makes its scanner run every few milliseconds), a VMA of PAGES
 * pages, and two threads whose stacks and shared state are in a VMA with
 * a memory policy of its own, which the scanner leaves alone, and whose
 * calls into libc go through a read-only GOT (the Makefile links with -z
 * now): their only hinting faults are those on the PAGES pages (held
 * 40 ms in the race), and no two of them take one on the same PTE at
 * once.
 *
 *  1. alone: each round writes the pages, waits for two passes of the
 *     scanner and reads them back: hinting faults, which speculation
 *     completes (spf_success_numa), and every value must read back;
 *  2. each round writes and scans the pages again, then reads them one
 *     by one on CPU 0, each read a hinting fault held by spf_delay=numa
 *     before its PTE lock, while a thread on CPU 1 zaps the page (even
 *     pages) or makes it read-only (odd pages) a few milliseconds into
 *     the delay: a zapped page must read 0 and one made read-only its
 *     value; the zaps move spf_numa_pte_changed, the mprotect() calls
 *     give aborts charged to their marks (spf_abort_writers); past its
 *     time until both have moved, up to three times it.
 */
#include "spf_window.h"
#include <linux/mempolicy.h>

#define DELAY "numa:40000"
#define HELD_US 30000		/* a read this long was held by the delay */
#define PAGES 8
#define RACE_AFTER_US 5000	/* into the read's 40 ms delay */
#define SCAN_WAIT_S 5.0		/* for two passes of the scanner */
#define STACK (256 << 10)	/* each thread's, TLS included */

#define NUMA_SYSCTL "/proc/sys/kernel/numa_balancing"
#define SCAN_DIR "/sys/kernel/debug/sched/numa_balancing/"

/* The scanner's knobs, as the test sets them and as they were. */
static const struct {
	const char *name;
	const char *value;
} scan_knobs[] = {
	{ "scan_delay_ms", "0" },	/* from the first tick */
	{ "scan_period_min_ms", "10" },	/* every 10 ms of runtime */
	{ "scan_period_max_ms", "20" },
	{ "scan_size_mb", "4" },	/* the test's mm in one pass */
};

#define NR_KNOBS ARRAY_SIZE(scan_knobs)

struct saved_numa {
	char sysctl[32];
	char knobs[NR_KNOBS][32];
};

enum racer_op { OP_NONE, OP_ZAP, OP_PROTECT };

struct race_counts {
	long reads, held;
	long long protect_aborts;
	char writers[512];
};

/* Shared by the threads, in a VMA the scanner leaves alone. */
struct ctx {
	char *b;
	struct failbox *fb;
	struct __test_metadata *md;	/* for the window's log */
	atomic_int op;		/* what the racer does next, once */
	atomic_int page;	/* to which page */
	atomic_int done;	/* the racer's call returned */
	atomic_int stop;
	double seconds;		/* of each phase */
	long alone;		/* rounds */
	double scan_wait_s;	/* waiting for the scanner, in all */
	long scan_waits;
	struct race_counts n;
	char sched[8192];	/* /proc/self/sched, read here */
	char vmstat[16384];	/* and /proc/vmstat */
};

/* Turn NUMA balancing on, its scanner fast; 0 or -1 (logged). */
static int numa_on(struct __test_metadata *_metadata, struct saved_numa *s)
{
	char path[256];

	if (param_read(NUMA_SYSCTL, s->sysctl, sizeof(s->sysctl))) {
		TH_LOG("cannot read %s (%s): the test needs CONFIG_NUMA_BALANCING",
		       NUMA_SYSCTL, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < NR_KNOBS; i++) {
		snprintf(path, sizeof(path), SCAN_DIR "%s", scan_knobs[i].name);
		if (param_read(path, s->knobs[i], sizeof(s->knobs[i])) ||
		    param_write(path, scan_knobs[i].value)) {
			TH_LOG("cannot set %s (%s): the test needs debugfs and CONFIG_SCHED_DEBUG",
			       path, strerror(errno));
			return -1;
		}
	}
	if (param_write(NUMA_SYSCTL, "1")) {
		TH_LOG("cannot write 1 to %s: %s", NUMA_SYSCTL, strerror(errno));
		return -1;
	}
	return 0;
}

static void numa_restore(struct saved_numa *s)
{
	char path[256];

	if (s->sysctl[0])
		param_write(NUMA_SYSCTL, s->sysctl);
	for (size_t i = 0; i < NR_KNOBS; i++) {
		snprintf(path, sizeof(path), SCAN_DIR "%s", scan_knobs[i].name);
		if (s->knobs[i][0])
			param_write(path, s->knobs[i]);
	}
}

/*
 * How many passes the scanner has made over this mm, or -1; read into
 * c->sched, not a buffer the scanner would make PROT_NONE.
 */
static long scan_seq(struct ctx *c)
{
	int fd = open("/proc/self/sched", O_RDONLY);
	ssize_t len;
	char *seq;

	if (fd < 0)
		return -1;
	len = read(fd, c->sched, sizeof(c->sched) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	c->sched[len] = 0;
	seq = strstr(c->sched, "mm->numa_scan_seq");
	if (!seq || !strchr(seq, ':'))
		return -1;
	return atol(strchr(seq, ':') + 1);
}

/*
 * Wait, running, until the scanner has passed over the mm twice: the
 * second pass started after the pages were written, so they are PROT_NONE
 * now. Before that, move the pages to the node they are on: that drains
 * the per-CPU LRU batches, whose reference on a new page makes the
 * scanner skip it. False on a failure.
 */
static bool wait_for_scanner(struct ctx *c)
{
	void *pages[PAGES];
	int nodes[PAGES], status[PAGES];
	double t, end = now_s() + SCAN_WAIT_S;
	long seq0;

	for (int p = 0; p < PAGES; p++)
		pages[p] = c->b + p * PS;
	if (syscall(SYS_move_pages, 0, PAGES, pages, NULL, status, 0)) {
		fail(c->fb, "move_pages(query): %s", strerror(errno));
		return false;
	}
	for (int p = 0; p < PAGES; p++)
		nodes[p] = status[p] < 0 ? 0 : status[p];
	if (syscall(SYS_move_pages, 0, PAGES, pages, nodes, status, 0)) {
		fail(c->fb, "move_pages(to their nodes): %s", strerror(errno));
		return false;
	}
	t = now_s();
	seq0 = scan_seq(c);
	if (seq0 < 0) {
		fail(c->fb, "no mm->numa_scan_seq in /proc/self/sched");
		return false;
	}
	while (scan_seq(c) < seq0 + 2)
		if (now_s() > end) {
			fail(c->fb, "NUMA balancing's scanner made no two passes in %.0f s",
			     SCAN_WAIT_S);
			return false;
		}
	c->scan_wait_s += now_s() - t;
	c->scan_waits++;
	return true;
}

/*
 * A /proc/vmstat counter, or -1, read into c->vmstat: with the delay on,
 * stdio's heap would take a held hinting fault at each touch.
 */
static long long vmstat_of(struct ctx *c, const char *name)
{
	int fd = open("/proc/vmstat", O_RDONLY);
	size_t len = strlen(name), got = 0;
	ssize_t k = 1;
	char *line;

	if (fd < 0)
		return -1;
	while (k > 0 && got < sizeof(c->vmstat) - 1) {
		k = read(fd, c->vmstat + got, sizeof(c->vmstat) - 1 - got);
		if (k > 0)
			got += k;
	}
	close(fd);
	c->vmstat[got] = 0;
	for (line = c->vmstat; line; line = strchr(line, '\n')) {
		line += *line == '\n';
		if (!strncmp(line, name, len) && line[len] == ' ')
			return atoll(line + len + 1);
	}
	return -1;
}

static bool write_all(struct ctx *c, long r)
{
	for (long p = 0; p < PAGES; p++)
		*(volatile uint64_t *)(c->b + p * PS) = mkval(r, 0, p, 1);
	return wait_for_scanner(c);
}

/* Read page p of round r back (a hinting fault); false on a failure. */
static bool read_back(struct ctx *c, long r, long p)
{
	uint64_t v = *(volatile uint64_t *)(c->b + p * PS);

	if (v == mkval(r, 0, p, 1))
		return true;
	fail(c->fb, "round %ld: page %ld reads %#lx after a hinting fault, wrote %#lx",
	     r, p, (unsigned long)v, (unsigned long)mkval(r, 0, p, 1));
	return false;
}

static long run_alone(struct ctx *c, double seconds)
{
	double end = now_s() + seconds;
	long r;

	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		if (!write_all(c, r))
			break;
		for (long p = 0; p < PAGES; p++)
			if (!read_back(c, r, p))
				break;
	}
	return r - 1;
}

/* On CPU 1: zap or protect the page a few milliseconds into each read. */
static void *racer(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "racer: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		int op = atomic_exchange(&c->op, OP_NONE);
		char *page = c->b + atomic_load(&c->page) * PS;

		if (op == OP_NONE) {
			sched_yield();
			continue;
		}
		usleep(RACE_AFTER_US);
		if (op == OP_ZAP && madvise(page, PS, MADV_DONTNEED))
			fail(c->fb, "MADV_DONTNEED: %s", strerror(errno));
		if (op == OP_PROTECT && mprotect(page, PS, PROT_READ))
			fail(c->fb, "mprotect(PROT_READ): %s", strerror(errno));
		atomic_store(&c->done, 1);
	}
	return NULL;
}

/*
 * Read page p, PROT_NONE, while the racer zaps it or makes it read-only
 * a few milliseconds into the hinting fault; false on a failure.
 */
static bool race_page(struct ctx *c, long r, long p, bool zap,
		      struct race_counts *n)
{
	uint64_t v, want = mkval(r, 0, p, 1);
	double t;

	atomic_store(&c->page, p);
	atomic_store(&c->done, 0);
	atomic_store(&c->op, zap ? OP_ZAP : OP_PROTECT);
	t = now_s();
	v = *(volatile uint64_t *)(c->b + p * PS);
	if ((now_s() - t) * 1e6 >= HELD_US)
		n->held++;
	n->reads++;
	while (!atomic_load(&c->done) && !failed(c->fb))
		sched_yield();
	if (zap ? v != 0 && v != want : v != want) {
		fail(c->fb, "round %ld: page %ld reads %#lx after %s, wrote %#lx%s",
		     r, p, (unsigned long)v,
		     zap ? "a zap in its hinting fault" :
			   "mprotect(PROT_READ) in its hinting fault",
		     (unsigned long)want, zap ? " (or 0)" : "");
		return false;
	}
	if (!zap && mprotect(c->b + p * PS, PS, PROT_READ | PROT_WRITE)) {
		fail(c->fb, "mprotect(PROT_READ | PROT_WRITE): %s",
		     strerror(errno));
		return false;
	}
	return true;
}

/*
 * Rounds of PAGES raced reads, half of them zapped, half protected; past
 * its time while neither kind has raced yet, up to three times it: on a
 * busy host the racer's wakeup may come after the delay, or a hinting
 * fault may want to migrate and give up before the delay (spf_abort_numa).
 */
static void run_race(struct ctx *c, double seconds, struct race_counts *n)
{
	long long zapped0 = vmstat_of(c, "spf_numa_pte_changed");
	long long marked0 = vmstat_of(c, "spf_abort_vma_changed");
	double start = now_s();

	for (long r = 1; !failed(c->fb); r++) {
		double t = now_s() - start;

		if (t >= 3 * seconds ||
		    (t >= seconds &&
		     vmstat_of(c, "spf_numa_pte_changed") > zapped0 &&
		     vmstat_of(c, "spf_abort_vma_changed") > marked0))
			break;
		if (!write_all(c, r))
			break;
		for (long p = 0; p < PAGES; p++)
			if (!race_page(c, r, p, p % 2 == 0, n))
				return;
	}
}

/*
 * On CPU 0: the pages alone, then raced, with the delay on only for the
 * race: held 40 ms, every hinting fault of the test process would make it
 * crawl (its heap, its libraries' data: what it touches after a pass).
 */
static void *faulter(void *arg)
{
	struct ctx *c = arg;
	struct __test_metadata *_metadata = c->md;

	if (pin_to_cpu(0)) {
		fail(c->fb, "faulter: cannot run on CPU 0: %s", strerror(errno));
		return NULL;
	}
	c->alone = run_alone(c, c->seconds);
	if (failed(c->fb))
		return NULL;
	if (spf_window_open(_metadata, DELAY)) {
		fail(c->fb, "cannot open the window: spf_delay=%s", DELAY);
		return NULL;
	}
	/* mprotect() is the only writer that marks in the race */
	spf_writers_reset();
	run_race(c, c->seconds, &c->n);
	spf_delay_set(spf_delay_before);
	/*
	 * Read once the delay is off: with the scanner this fast, stdio's
	 * heap and libc's data would take a held hinting fault at every
	 * touch.
	 */
	c->n.protect_aborts = spf_writers_read(c->n.writers,
					       sizeof(c->n.writers), NULL);
	return NULL;
}

#define CTX_LEN ((sizeof(struct ctx) + PS - 1) / PS * PS + 2 * STACK)

/*
 * The context and the threads' stacks, with a policy of their own: the
 * scanner leaves a VMA alone unless its policy migrates on faults
 * (MPOL_F_MOF, which only the default policy has), so the threads take
 * no hinting faults of their own, held 40 ms each, that would make the
 * racer late. NULL on a failure.
 */
static struct ctx *ctx_new(void)
{
	unsigned long node0 = 1;
	char *m = mmap(NULL, CTX_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (syscall(SYS_mbind, m, CTX_LEN, MPOL_PREFERRED, &node0,
		    sizeof(node0) * 8, 0)) {
		munmap(m, CTX_LEN);
		return NULL;
	}
	return (struct ctx *)m;
}

/* Thread i of the two, on its stack in the context's VMA; 0 or an errno. */
static int start_thread(struct ctx *c, int i, pthread_t *t,
			void *(*fn)(void *))
{
	char *stack = (char *)c + CTX_LEN - (i + 1) * STACK;
	pthread_attr_t attr;
	int ret = pthread_attr_init(&attr);

	if (!ret)
		ret = pthread_attr_setstack(&attr, stack, STACK);
	if (!ret)
		ret = pthread_create(t, &attr, fn, c);
	pthread_attr_destroy(&attr);
	return ret;
}

SPF_RACE_FIXTURE(numa);

TEST_F_TIMEOUT(numa, race, SPF_TIMEOUT)
{
	struct saved_numa saved = { 0 };
	pthread_t tr, tf;
	struct ctx *c;
	int ret;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	c = ctx_new();
	ASSERT_NE(NULL, c);
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->md = _metadata;
	/* PROT_NONE guards: the VMA merges with no neighbour */
	self->map_len = (PAGES + 2) * PS;
	self->map = mmap(NULL, self->map_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	c->b = map_anon(self->map + PS, PAGES * PS, MAP_FIXED);
	ASSERT_NE(NULL, c->b);
	ret = numa_on(_metadata, &saved);
	if (ret)
		numa_restore(&saved);
	ASSERT_EQ(0, ret);
	/*
	 * The threads after the knobs: a thread takes its first scan period
	 * from scan_delay_ms when it is made, and any thread's period sets
	 * when the next scan of the mm may start.
	 */
	ret = start_thread(c, 0, &tr, racer);
	if (ret)
		numa_restore(&saved);
	ASSERT_EQ(0, ret);

	SPF_BEGIN(spf0);
	spf0.also_success = "spf_success_numa";
	c->seconds = test_seconds() / 2;
	ret = start_thread(c, 1, &tf, faulter);
	if (!ret)
		pthread_join(tf, NULL);
	atomic_store(&c->stop, 1);
	pthread_join(tr, NULL);
	numa_restore(&saved);
	SPF_END(spf0, "spf_numa_pte_changed");
	ASSERT_EQ(0, ret);

	TH_LOG("alone: %ld rounds of %d pages written, scanned and read back",
	       c->alone, PAGES);
	TH_LOG("two passes of the scanner took %.0f ms on average",
	       c->scan_waits ? c->scan_wait_s * 1e3 / c->scan_waits : 0.0);
	TH_LOG("raced: %ld reads, %ld held in a hinting fault; mprotect() marks stopped %lld (%s)",
	       c->n.reads, c->n.held, c->n.protect_aborts, c->n.writers);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, c->alone);
	EXPECT_LT(0, c->n.held);
	EXPECT_LT(0, c->n.protect_aborts);
	failbox_free(c->fb);
	munmap(c, CTX_LEN);
}

SPF_SCALE_TIMEOUT(numa, race)

TEST_HARNESS_MAIN
