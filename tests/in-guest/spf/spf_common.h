/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the speculative page fault race tests.
 *
 * Every test races threads that fault on anonymous memory (file.c: on a
 * shared file mapping) against one operation that changes the VMA or its
 * page tables (file.c: or the file), and checks the data the threads
 * read: which values are legal depends on what the operation had done
 * (begun, returned) when the access started, which the threads learn from
 * counters the operating thread bumps around the system call.
 *
 * Faults are observed with a per-thread sigsetjmp()/siglongjmp() handler;
 * the handler is installed with SA_NODEFER, so jumping out of it leaves
 * SIGSEGV unblocked and sigsetjmp() need not save the signal mask (no
 * system call per access). Worker threads never use ASSERT_*: the harness
 * longjmp()s from them into the main thread's stack. They record failures
 * in a failbox, which the main thread reports.
 */
#ifndef SPF_COMMON_H
#define SPF_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The 6.1 harness has an unused parameter: not ours to fix. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

#define PS 4096UL
#define PMD_SIZE_ (2UL << 20)
#define GIB (1UL << 30)
#define MAX_THREADS 8
#define WORDS_PER_PAGE (PS / sizeof(uint64_t))
/* Word 511 of each page belongs to nobody but fork()ed children. */
#define CHILD_WORD (WORDS_PER_PAGE - 1)
/* RSS may grow this much for reasons of its own (the main thread's stack). */
#define RSS_SLACK_PAGES 16
/*
 * Harness timeout of every test: the tests stop themselves long before.
 * SPF_TIMEOUT is what TEST_F_TIMEOUT() gets; SPF_SCALE_TIMEOUT() after a
 * test raises it to 90 s + 4 x SPF_TEST_SECONDS, for long runs.
 */
#define SPF_TIMEOUT 90
#define SPF_SCALE_TIMEOUT(fixture, test) \
	static void __attribute__((constructor)) \
	_spf_timeout_##fixture##_##test(void) \
	{ \
		const char *s = getenv("SPF_TEST_SECONDS"); \
		double d = s ? atof(s) : 0; \
		if (d > 0 && 90 + 4 * d > SPF_TIMEOUT) \
			_##fixture##_##test##_object.timeout = 90 + 4 * d; \
	}

/* Thread t's word in page p: its own cache line. */
static inline volatile uint64_t *word_of(char *base, long p, int t)
{
	return (volatile uint64_t *)(base + p * PS) + t * 8;
}

/*
 * A value written by a thread: nonzero, and it names its writer, its page
 * and when it was written, so a stale or misplaced value is recognised.
 * [63:40] epoch (round), [39:32] thread, [31:16] page, [15:0] sequence.
 */
static inline uint64_t mkval(unsigned long epoch, int t, long p, unsigned seq)
{
	return (uint64_t)(epoch & 0xffffff) << 40 | (uint64_t)(t & 0xff) << 32 |
	       (uint64_t)(p & 0xffff) << 16 | ((seq % 0xffff) + 1);
}
static inline unsigned long val_epoch(uint64_t v) { return v >> 40; }
static inline int val_thread(uint64_t v) { return (v >> 32) & 0xff; }
static inline long val_page(uint64_t v) { return (v >> 16) & 0xffff; }

/* ---- time, knobs, randomness ---- */

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* How long each test races: SPF_TEST_SECONDS (default 2). */
static inline double test_seconds(void)
{
	const char *s = getenv("SPF_TEST_SECONDS");
	double d = s ? atof(s) : 2.0;

	return d > 0 ? d : 2.0;
}

/* Faulting threads per test: SPF_TEST_THREADS (default 3). */
static inline int test_threads(void)
{
	const char *s = getenv("SPF_TEST_THREADS");
	int n = s ? atoi(s) : 3;

	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
}

/* SPF_TEST_SEED makes a run repeat its choices; else the clock picks. */
static inline uint64_t test_seed(void)
{
	const char *s = getenv("SPF_TEST_SEED");

	if (s && *s)
		return strtoull(s, NULL, 0) | 1;
	return ((uint64_t)(now_s() * 1e9) ^ ((uint64_t)getpid() << 32)) | 1;
}

static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random range [*lo, *hi) of n pages, one page at least. */
static inline void rnd_range(uint64_t *seed, long n, long *lo, long *hi)
{
	*lo = rnd(seed) % n;
	*hi = *lo + 1 + rnd(seed) % (n - *lo);
}

/* Wait until *progress reaches target, or the deadline passes. */
static inline void wait_progress(atomic_long *progress, long target,
				 double deadline)
{
	while (atomic_load(progress) < target && now_s() < deadline)
		sched_yield();
}

/* ---- failures recorded by any thread (or a forked child) ---- */

#define FAIL_MSGS 8
struct failbox {
	atomic_int n;
	char msg[FAIL_MSGS][240];
};

/* In shared memory, so that forked children can report too. */
static inline struct failbox *failbox_new(void)
{
	void *p = mmap(NULL, sizeof(struct failbox), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline void failbox_free(struct failbox *fb)
{
	if (fb)
		munmap(fb, sizeof(*fb));
}

static inline __attribute__((format(printf, 2, 3)))
void fail(struct failbox *fb, const char *fmt, ...)
{
	int i = atomic_fetch_add(&fb->n, 1);
	va_list ap;

	if (i >= FAIL_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(fb->msg[i], sizeof(fb->msg[i]), fmt, ap);
	va_end(ap);
}

static inline int failed(struct failbox *fb)
{
	return atomic_load(&fb->n);
}

/* Log what the threads found; the caller then checks failed() == 0. */
#define failbox_report(fb) do { \
	int __n = atomic_load(&(fb)->n); \
	for (int __i = 0; __i < __n && __i < FAIL_MSGS; __i++) \
		TH_LOG("%s", (fb)->msg[__i]); \
	if (__n > FAIL_MSGS) \
		TH_LOG("... and %d more failures", __n - FAIL_MSGS); \
} while (0)

/* ---- faults as return values ---- */

static __thread sigjmp_buf *volatile probe_env;
static __thread volatile int probe_signo;
static __thread volatile int probe_code;
static __thread void *volatile probe_addr;

static __attribute__((unused)) void probe_handler(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *env = probe_env;

	(void)uc;
	if (env) {
		probe_env = NULL;
		probe_signo = sig;
		probe_code = si->si_code;
		probe_addr = si->si_addr;
		siglongjmp(*env, 1);
	}
	/* Not a probe: say where, and let the fault kill us. */
	{
		char msg[96] = "# unexpected signal ", *q = msg + 20;
		uintptr_t a = (uintptr_t)si->si_addr;

		*q++ = '0' + sig / 10;
		*q++ = '0' + sig % 10;
		memcpy(q, " at 0x", 6);
		q += 6;
		for (int i = 60; i >= 0; i -= 4)
			*q++ = "0123456789abcdef"[(a >> i) & 15];
		*q++ = '\n';
		if (write(2, msg, q - msg) < 0)
			q = msg;	/* nothing to do about it here */
	}
	signal(sig, SIG_DFL);
}

static inline int probe_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = probe_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL))
		return -1;
	return 0;
}

/*
 * The fixture the race tests share: the probe's SIGSEGV/SIGBUS handler
 * installed before the test, and the region it races on (self->map,
 * self->map_len, when it sets them) unmapped after it, however it ends.
 * SPF_RACE_FIXTURE_WITH() adds a statement to the setup and one to the
 * teardown (spf_window.h's delay).
 */
#define SPF_RACE_FIXTURE_WITH(name, setup, teardown)			\
	FIXTURE(name) {							\
		char *map;						\
		size_t map_len;						\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		ASSERT_EQ(0, probe_install());				\
		setup;							\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		teardown;						\
		if (self->map)						\
			munmap(self->map, self->map_len);		\
	}
#define SPF_RACE_FIXTURE(name) SPF_RACE_FIXTURE_WITH(name, (void)0, (void)0)

/* 0 and the value, or -1 when the read faulted (probe_* say how). */
static __attribute__((noinline, unused))
int probe_read(volatile uint64_t *p, uint64_t *val)
{
	sigjmp_buf env;
	uint64_t v;

	if (sigsetjmp(env, 0))
		return -1;
	probe_env = &env;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	v = *p;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_env = NULL;
	*val = v;
	return 0;
}

/* 0 when the write was done, -1 when it faulted. */
static __attribute__((noinline, unused))
int probe_write(volatile uint64_t *p, uint64_t val)
{
	sigjmp_buf env;

	if (sigsetjmp(env, 0))
		return -1;
	probe_env = &env;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*p = val;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	probe_env = NULL;
	return 0;
}

/*
 * A fault that the test allows: SIGSEGV with the expected si_code at the
 * address accessed. Anything else is recorded as a failure.
 */
static inline bool probe_fault_is(struct failbox *fb, volatile uint64_t *p,
				  int code, const char *what)
{
	if (probe_signo != SIGSEGV || probe_addr != (void *)p ||
	    probe_code != code) {
		fail(fb, "%s %p: signal %d code %d at %p, expected SIGSEGV code %d",
		     what, (void *)p, probe_signo, probe_code, probe_addr, code);
		return false;
	}
	return true;
}

/* ---- threads on stacks of our own, given back at join ---- */

#define STACK_SIZE (256UL << 10)

struct team_slot {
	void *(*fn)(void *);
	void *arg;
	int nice;
};

/* What team_run() gives each thread: the test's context, the index. */
struct team_arg {
	void *c;
	int id;
};

struct team {
	int n;
	bool keep_nice;		/* set before team_start(): no renice */
	pthread_t tid[MAX_THREADS + 2];
	struct team_slot slot[MAX_THREADS + 2];
	struct team_arg arg[MAX_THREADS + 2];	/* team_run()'s */
	char *stacks;
	size_t stacks_len;
};

/*
 * The faulting threads run at a lower priority (SPF_TEST_NICE, default
 * 5): with more of them than CPUs, the thread that changes the VMA would
 * otherwise wait for CPU time, and race them less often.
 */
static inline int test_nice(void)
{
	const char *s = getenv("SPF_TEST_NICE");

	return s && *s ? atoi(s) : 5;
}

static __attribute__((unused)) void *team_entry(void *arg)
{
	struct team_slot *sl = arg;

	if (sl->nice)
		setpriority(PRIO_PROCESS, syscall(SYS_gettid), sl->nice);
	return sl->fn(sl->arg);
}

static inline int team_start(struct team *tm, int n, void *(*fn)(void *),
			     void *args, size_t argsz)
{
	pthread_attr_t a;
	int nice = tm->keep_nice ? 0 : test_nice();

	tm->n = 0;
	tm->stacks_len = n * STACK_SIZE;
	tm->stacks = mmap(NULL, tm->stacks_len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tm->stacks == MAP_FAILED)
		return -1;
	for (int i = 0; i < n; i++) {
		tm->slot[i] = (struct team_slot){
			.fn = fn, .arg = (char *)args + i * argsz, .nice = nice,
		};
		pthread_attr_init(&a);
		pthread_attr_setstack(&a, tm->stacks + i * STACK_SIZE,
				      STACK_SIZE);
		if (pthread_create(&tm->tid[i], &a, team_entry, &tm->slot[i])) {
			pthread_attr_destroy(&a);
			return -1;
		}
		pthread_attr_destroy(&a);
		tm->n++;
	}
	return 0;
}

/* n threads running fn(struct team_arg *), each with c and its index. */
static inline int team_run(struct team *tm, int n, void *(*fn)(void *),
			   void *c)
{
	for (int i = 0; i < n && i < MAX_THREADS + 2; i++)
		tm->arg[i] = (struct team_arg){ .c = c, .id = i };
	return team_start(tm, n, fn, tm->arg, sizeof(tm->arg[0]));
}

static inline void team_join(struct team *tm)
{
	for (int i = 0; i < tm->n; i++)
		pthread_join(tm->tid[i], NULL);
	if (tm->stacks && tm->stacks != MAP_FAILED)
		munmap(tm->stacks, tm->stacks_len);
	tm->n = 0;
	tm->stacks = NULL;
}

/* ---- rounds: threads that race one operation of the main thread each ---- */

/*
 * Each round the main thread sets up what the threads need while they
 * wait at the start barrier, releases them, runs its operation, and waits
 * at the done barrier until they are through with the round:
 *
 *	worker:	while ((r = rounds_next(rs)) >= 0) {
 *			... race in round r ...
 *			rounds_end(rs);
 *		}
 *	main:	rounds_start(rs, n, worker, c);
 *		for each round r: ... rounds_release(rs, r); ... operation;
 *			rounds_wait(rs); ... check ...
 *		rounds_stop(rs);
 * Whatever the main thread wrote before rounds_release() the threads see
 * after rounds_next() returned (the barrier orders it), and the other way
 * round from rounds_end() to rounds_wait().
 */
struct rounds {
	atomic_int round;	/* the round the threads run, >= 0 */
	atomic_int stop;	/* set: the threads leave their loop */
	atomic_long progress;	/* accesses in this round, for wait_progress() */
	pthread_barrier_t start, done;
	struct team tm;
};

/* Barriers for n threads and the main one, and n threads running fn. */
static inline int rounds_start(struct rounds *rs, int n, void *(*fn)(void *),
			       void *c)
{
	pthread_barrier_init(&rs->start, NULL, n + 1);
	pthread_barrier_init(&rs->done, NULL, n + 1);
	return team_run(&rs->tm, n, fn, c);
}

/* Worker: wait for the next round; its number, or -1: the test is over. */
static inline int rounds_next(struct rounds *rs)
{
	pthread_barrier_wait(&rs->start);
	if (atomic_load(&rs->stop))
		return -1;
	return atomic_load(&rs->round);
}

/* Worker: done with this round. */
static inline void rounds_end(struct rounds *rs)
{
	pthread_barrier_wait(&rs->done);
}

/* Main thread: round r begins, with no progress yet. */
static inline void rounds_release(struct rounds *rs, int r)
{
	atomic_store(&rs->round, r);
	atomic_store(&rs->progress, 0);
	pthread_barrier_wait(&rs->start);
}

/* Main thread: wait until every thread is done with the round. */
static inline void rounds_wait(struct rounds *rs)
{
	pthread_barrier_wait(&rs->done);
}

/* Main thread, between rounds: end the threads' loop and join them. */
static inline void rounds_stop(struct rounds *rs)
{
	atomic_store(&rs->stop, 1);
	pthread_barrier_wait(&rs->start);
	team_join(&rs->tm);
	pthread_barrier_destroy(&rs->start);
	pthread_barrier_destroy(&rs->done);
}

/* ---- memory accounting ---- */

/*
 * Anonymous resident pages of this process (statm resident - shared).
 * Linux 6.1 caches a task's RSS changes and folds them into the mm's
 * counters every 64th fault, at exit, or when the task zaps pages of its
 * own mm: zap one page to fold the calling thread's cache. Call it when no
 * other thread runs (their caches were folded when they exited).
 */
static inline long rss_anon_pages(void)
{
	long size, resident, shared;
	char buf[128];
	ssize_t n;
	int fd;
	volatile char *p = mmap(NULL, PS, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	*p = 1;
	munmap((void *)p, PS);
	fd = open("/proc/self/statm", O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%ld %ld %ld", &size, &resident, &shared) != 3)
		return -1;
	return resident - shared;
}

/* Touch stack the main thread may use later, so it does not count. */
static __attribute__((noinline, unused)) void prefault_stack(void)
{
	volatile char buf[64 << 10];

	for (size_t i = 0; i < sizeof(buf); i += 512)
		buf[i] = 0;
}

/* ---- /proc ---- */

/* A /proc/vmstat counter, or -1 when the kernel has none of that name. */
static inline long long vmstat(const char *name)
{
	char line[256];
	size_t len = strlen(name);
	long long v = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && line[len] == ' ') {
			v = atoll(line + len + 1);
			break;
		}
	}
	fclose(f);
	return v;
}

/* All spf_* counters of /proc/vmstat, as "name value" lines. */
#define MAX_SPF 48
struct spf_stats {
	int n;
	char name[MAX_SPF][40];
	long long v[MAX_SPF];
};

static inline void spf_stats(struct spf_stats *st)
{
	char line[256];
	FILE *f = fopen("/proc/vmstat", "r");

	st->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && st->n < MAX_SPF) {
		if (strncmp(line, "spf_", 4) ||
		    sscanf(line, "%39s %lld", st->name[st->n],
			   &st->v[st->n]) != 2)
			continue;
		st->n++;
	}
	fclose(f);
}

/* "name +delta" for the counters that moved from a to b. */
static inline void spf_delta(const struct spf_stats *a, const struct spf_stats *b,
		      char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = 0;
	for (int i = 0; i < a->n && i < b->n && k < len; i++)
		if (b->v[i] != a->v[i])
			k += snprintf(buf + k, len - k, " %s +%lld",
				      a->name[i], b->v[i] - a->v[i]);
}

/* ---- speculation: the sysctl, and proof that it happened ---- */

#define SPF_SYSCTL "/proc/sys/vm/speculative_page_fault"

/*
 * The first line of a sysctl or parameter file at path into buf (size
 * bytes, the newline dropped); 0, or -1 when it cannot be read or is empty.
 */
static inline int param_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Write s to the sysctl or parameter file at path in one write; 0 or -1. */
static inline int param_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n, len = strlen(s);

	if (fd < 0)
		return -1;
	n = write(fd, s, len);
	close(fd);
	return n == len ? 0 : -1;
}

/* vm.speculative_page_fault, or -1 when the kernel has none. */
static inline int spf_sysctl_read(void)
{
	char buf[16];

	return param_read(SPF_SYSCTL, buf, sizeof(buf)) ? -1 : atoi(buf);
}

static inline int spf_sysctl_write(int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d\n", v);
	return param_write(SPF_SYSCTL, buf);
}

/*
 * What a race test sets vm.speculative_page_fault to: SPF_TEST_SYSCTL,
 * default 1. With 0, every race test must fail: that is how a test suite
 * shows the race tests test speculation.
 */
static inline int test_sysctl(void)
{
	const char *s = getenv("SPF_TEST_SYSCTL");

	return s && *s ? atoi(s) : 1;
}

struct spf_run {
	int saved;		/* the sysctl before the test; -1: none */
	struct spf_stats st0;
	/*
	 * NULL, or a second success counter that must move too, for a test
	 * whose faults are of one kind: "spf_success_file" says the file
	 * path ran, not just the anonymous faults of the test's own stacks.
	 * SPF_BEGIN() sets it to NULL; set it after.
	 */
	const char *also_success;
};

/* Whether /proc/vmstat had a counter of this name. */
static inline bool spf_stat_known(const struct spf_stats *st, const char *name)
{
	for (int i = 0; i < st->n; i++)
		if (!strcmp(st->name[i], name))
			return true;
	return false;
}

static inline long long spf_stat_delta(const struct spf_run *r,
				       const struct spf_stats *st1,
				       const char *name)
{
	for (int i = 0; i < r->st0.n && i < st1->n; i++)
		if (!strcmp(r->st0.name[i], name))
			return st1->v[i] - r->st0.v[i];
	return 0;
}

/* The named counters' deltas from spf_run_begin() to st1, summed. */
static inline long long spf_run_delta(const struct spf_run *r,
				      const struct spf_stats *st1,
				      const char *const *names)
{
	long long d = 0;

	for (int i = 0; names[i]; i++)
		d += spf_stat_delta(r, st1, names[i]);
	return d;
}

/*
 * Whether a race test whose time is up should go on: speculative faults
 * complete, but the counters of the race (overlap[]) have not moved yet.
 * The caller gives up anyway at some limit of its own (three times its
 * time, say), and spf_run_end() then fails the test.
 */
static inline bool spf_run_race_pending(const struct spf_run *r,
					const char *const *overlap)
{
	struct spf_stats st1;

	spf_stats(&st1);
	return r->st0.n && spf_stat_delta(r, &st1, "spf_success") > 0 &&
	       spf_run_delta(r, &st1, overlap) == 0;
}

/* Set the sysctl for the race and note the counters. */
static inline void spf_run_begin(struct __test_metadata *_metadata,
				 struct spf_run *r)
{
	r->also_success = NULL;
	r->saved = spf_sysctl_read();
	if (r->saved >= 0 && spf_sysctl_write(test_sysctl())) {
		TH_LOG("cannot write %s: %s", SPF_SYSCTL, strerror(errno));
		_metadata->passed = 0;
	}
	spf_stats(&r->st0);
}

/*
 * After the race: put the sysctl back, log what speculation did, and fail
 * unless speculative faults completed (spf_success moved, and so did
 * r->also_success if set) and, when overlap[] names counters, one of those
 * moved: speculative faults that a writer overlapped and that gave up
 * because of it, proof that the race this test is about happened. Skip
 * only on a kernel without counters.
 */
static inline void spf_run_end(struct __test_metadata *_metadata,
			       struct spf_run *r, const char *const *overlap)
{
	struct spf_stats st1;
	long long success, raced = 0;
	char d[1024], names[256] = "";
	size_t k = 0;

	spf_stats(&st1);
	if (r->saved >= 0 && spf_sysctl_write(r->saved))
		TH_LOG("cannot restore %s to %d", SPF_SYSCTL, r->saved);
	if (!r->st0.n) {
		if (_metadata->passed)
			SKIP(return, "no spf_* counters in /proc/vmstat: this kernel has no speculative page faults");
		return;
	}
	spf_delta(&r->st0, &st1, d, sizeof(d));
	TH_LOG("speculative page fault counters:%s", d[0] ? d : " none moved");
	success = spf_stat_delta(r, &st1, "spf_success");
	for (int i = 0; overlap && overlap[i]; i++) {
		raced += spf_stat_delta(r, &st1, overlap[i]);
		k += snprintf(names + k, sizeof(names) - k, "%s%s",
			      i ? " + " : "", overlap[i]);
	}
	if (success <= 0)
		TH_LOG("no speculative fault completed (vm.speculative_page_fault=%d): the race was not tested",
		       test_sysctl());
	EXPECT_LT(0, success);
	if (r->also_success) {
		long long also = spf_stat_delta(r, &st1, r->also_success);

		if (!spf_stat_known(&st1, r->also_success))
			TH_LOG("no %s in /proc/vmstat: this kernel does not count the faults this test is about",
			       r->also_success);
		else if (also <= 0)
			TH_LOG("%s did not move (vm.speculative_page_fault=%d): the race was not tested",
			       r->also_success, test_sysctl());
		EXPECT_LT(0, also);
	}
	if (overlap && overlap[0]) {
		TH_LOG("the race happened %lld times (%s)", raced, names);
		EXPECT_LT(0, raced);
	}
}

/*
 * SPF_BEGIN(r) before the race; SPF_END(r, "spf_abort_...", ...) after
 * it, naming the abort counters that the race makes move, or
 * SPF_END(r, NULL) where no counter shows the race.
 */
#define SPF_BEGIN(r) struct spf_run r; spf_run_begin(_metadata, &r)
/* SPF_BEGIN() for a test of file faults: spf_success_file must move too. */
#define SPF_BEGIN_FILE(r) SPF_BEGIN(r); (r).also_success = "spf_success_file"
#define SPF_END(r, ...) \
	spf_run_end(_metadata, &(r), (const char *const[]){ __VA_ARGS__, NULL })

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* Whether THP may be used in a VMA with MADV_HUGEPAGE. */
static inline bool thp_madvise_allowed(void)
{
	char buf[128] = "";
	FILE *f = fopen(THP_ENABLED, "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strstr(buf, "[never]");
}

/* An anonymous mapping, THP off: faults stay at the PTE level. */
static inline char *map_anon(void *addr, size_t len, int extra_flags)
{
	char *p = mmap(addr, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

/*
 * Reserve 2 MiB-aligned address space, pmds * 2 MiB, with a PROT_NONE
 * mapping (bigger by 2 MiB on each side, so that nothing else shares the
 * page tables at either end). The reservation keeps other mappings (the
 * threads' stacks) out: the caller maps over it with MAP_FIXED, or opens a
 * hole in it for MAP_FIXED_NOREPLACE while no other thread maps anything.
 * *resv and *resv_len are for the final munmap().
 */
static inline char *reserve_pmds(size_t pmds, char **resv, size_t *resv_len)
{
	size_t len = (pmds + 2) * PMD_SIZE_;
	char *r = mmap(NULL, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	*resv = r;
	*resv_len = len;
	return (char *)(((uintptr_t)r + PMD_SIZE_) & ~(PMD_SIZE_ - 1));
}

/* Put address space back into the reservation (after munmap, mremap). */
static inline int re_reserve(char *addr, size_t len)
{
	return mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_NORESERVE | MAP_FIXED, -1, 0) == addr ? 0 : -1;
}

#endif /* SPF_COMMON_H */
