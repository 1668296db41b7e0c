/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the window tests share. A window test reaches one window of the
 * speculative paths every time instead of hoping: it widens the window
 * with the debug kernel's spf_delay= (CONFIG_DEBUG_SPF_HOLES) to
 * milliseconds, and proves it was reached by a counter that only the race
 * moves. tests/README.md has the table of windows, delay points, counters,
 * tests and the spf_hole= mutation each test must catch; qemu/spf-windows
 * runs it on spf-debug.
 */
#ifndef SPF_WINDOW_H
#define SPF_WINDOW_H

#include "spf_common.h"

#define SPF_DELAY_PARAM "/sys/module/kernel/parameters/spf_delay"

/* Write spec ("POINT:MICROSECONDS,...", or "none") to spf_delay; 0 or -1. */
static inline int spf_delay_set(const char *spec)
{
	return param_write(SPF_DELAY_PARAM, spec);
}

/*
 * The delays that were on before a window test opened its window (the
 * runner's "every delay on" pass sets them all): "none", or what the
 * kernel printed for them. Restored when the test ends.
 */
static char spf_delay_before[512] = "none";

/* spf_delay_before, read from the kernel; 0 or -1. */
static inline int spf_delay_save(void)
{
	return param_read(SPF_DELAY_PARAM, spf_delay_before, sizeof(spf_delay_before));
}

/*
 * Add delay to the delays already on for a window test, saying so in the
 * log (its own points replace theirs: the kernel takes a point's last
 * value); -1 when the kernel has no spf_delay: without the delay the test
 * would only hope to reach its window, and that is what the other race
 * tests do.
 */
static inline int spf_window_open(struct __test_metadata *_metadata,
				  const char *delay)
{
	char spec[sizeof(spf_delay_before) + 128];	/* and the test's delay */

	if (spf_delay_save()) {
		TH_LOG("cannot read %s (%s): window tests need a kernel with CONFIG_DEBUG_SPF_HOLES",
		       SPF_DELAY_PARAM, strerror(errno));
		return -1;
	}
	if (!strcmp(spf_delay_before, "none"))
		snprintf(spec, sizeof(spec), "%s", delay);
	else
		snprintf(spec, sizeof(spec), "%s,%s", spf_delay_before, delay);
	if (spf_delay_set(spec)) {
		TH_LOG("cannot write %s to %s (%s)", spec, SPF_DELAY_PARAM,
		       strerror(errno));
		return -1;
	}
	TH_LOG("window: spf_delay=%s", delay);
	if (strcmp(spf_delay_before, "none"))
		TH_LOG("beside the delays already on: %s", spf_delay_before);
	return 0;
}

/* A race fixture whose test runs with spf_delay=delay added, undone after. */
#define SPF_WINDOW_FIXTURE(name, delay)					\
	SPF_RACE_FIXTURE_WITH(name,					\
			      ASSERT_EQ(0, spf_window_open(_metadata, delay)), \
			      spf_delay_set(spf_delay_before))

/*
 * The start of a window test's body: two CPUs, or a skip; and c, the
 * test's struct ctx, zeroed and populated (no fault of its own lands in
 * the race), which its threads share, with a failbox for their failures
 * in c->fb. SPF_WINDOW_CTX_FREE(c) undoes it.
 */
#define SPF_WINDOW_CTX(c)						\
	do {								\
		if (sysconf(_SC_NPROCESSORS_ONLN) < 2)			\
			SKIP(return, "needs two CPUs");			\
		(c) = mmap(NULL, sizeof(*(c)), PROT_READ | PROT_WRITE,	\
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,	\
			   -1, 0);					\
		ASSERT_NE(MAP_FAILED, (c));				\
		(c)->fb = failbox_new();				\
		ASSERT_NE(NULL, (c)->fb);				\
	} while (0)

#define SPF_WINDOW_CTX_FREE(c)						\
	do {								\
		failbox_free((c)->fb);					\
		munmap((c), sizeof(*(c)));				\
	} while (0)

/* Run the calling thread on CPU cpu only; 0 or -1. */
static inline int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The page frame that maps addr in this process, from /proc/self/pagemap
 * (root sees frame numbers); 0 when nothing is mapped, -1 on error.
 */
static inline long long pagemap_pfn(const void *addr)
{
	uint64_t e;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	off_t off = (uintptr_t)addr / PS * sizeof(e);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &e, sizeof(e), off);
	close(fd);
	if (n != sizeof(e))
		return -1;
	if (!(e >> 63))
		return 0;
	return e & ((1ULL << 55) - 1);
}

/*
 * Which writers' marks made speculative faults give up, as the debug
 * kernel counts them (CONFIG_DEBUG_SPF_ABORT_WRITERS): one line per
 * place that marked, "BUSY CHANGED SYMBOL+OFFSET/SIZE".
 */
#define SPF_WRITERS_FILE "/sys/kernel/debug/spf_abort_writers"

/* Zero the debug kernel's charges, where it has them. */
static inline void spf_writers_reset(void)
{
	int fd = open(SPF_WRITERS_FILE, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, "0\n", 2) != 2)
		perror(SPF_WRITERS_FILE);
	close(fd);
}

/*
 * The charges as one line, "BUSY CHANGED WRITER; ...; unknown N"; returns
 * the aborts charged to the writers whose symbol is @only (every writer
 * when NULL), or -1 without the file.
 */
static inline long long spf_writers_read(char *buf, size_t len,
					 const char *only)
{
	char line[256], fn[200];
	long long busy, changed, charged = 0;
	size_t k = 0, n = only ? strlen(only) : 0;
	FILE *f = fopen(SPF_WRITERS_FILE, "r");

	snprintf(buf, len, "no %s", SPF_WRITERS_FILE);
	if (!f)
		return -1;
	buf[0] = 0;
	/* the header line first */
	if (fgets(line, sizeof(line), f))
		while (fgets(line, sizeof(line), f) && k < len) {
			line[strcspn(line, "\n")] = 0;
			if (sscanf(line, "%lld %lld %199s", &busy, &changed, fn) == 3 &&
			    (!only || (!strncmp(fn, only, n) && fn[n] == '+')))
				charged += busy + changed;
			k += snprintf(buf + k, len - k, "%s%s", k ? "; " : "", line);
		}
	fclose(f);
	return charged;
}

#endif /* SPF_WINDOW_H */
