// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative anonymous fault that found its PMD empty installs
 * a page table there (spf_pgtable_install()), checking the VMA's mark
 * under page_table_lock. munmap() marks the VMA, skips the empty PMD
 * without a lock and, when nothing else maps in the same gigabyte, frees
 * the PMD table above it: an install that did not check the mark writes
 * into that freed table, and the page table it installed is never freed
 * ("BUG: non-zero pgtables_bytes on freeing mm" when the process exits,
 * which the runner's kernel log check sees).
 *
 * One anonymous VMA of TABLES page tables at the start of an empty,
 * 1 GiB-aligned gigabyte whose neighbours are PROT_NONE reservations (so
 * munmap() frees the PMD table too). Page 0 is written first, by the
 * classic path, which gives the VMA its anon_vma and its first table;
 * every other table is a speculative install. With spf_delay=pgtable
 * each install waits, interrupts off, before it takes the locks:
 *
 *  1. this thread alone unmaps and maps the VMA again, then writes a
 *     page in each table: every value reads back and tables are
 *     installed (spf_pgtable_installed);
 *  2. this thread writes to the tables on CPU 0 while a remapper on
 *     CPU 1 unmaps and maps the VMA again every few milliseconds, so
 *     that installs find the VMA marked (spf_pgtable_marked moves only
 *     then).
 */
#include "spf_window.h"

#include <sys/prctl.h>

#define DELAY "pgtable:1000"
#define TABLES 16		/* page tables in the VMA */
#define REMAP_US 2000		/* the remapper's pause between its munmap()s */

struct ctx {
	char *b;		/* the VMA, at the start of its gigabyte */
	char *stack;		/* the remapper's, mapped before the gigabyte */
	atomic_int stop;
	atomic_long remaps;
	struct failbox *fb;
};

static size_t vma_len(void)
{
	return TABLES * PMD_SIZE_;
}

/* The word this thread writes in table t in round r. */
static volatile uint64_t *table_word(struct ctx *c, int t, long r)
{
	return (volatile uint64_t *)(c->b + t * PMD_SIZE_ + (r % 512) * PS);
}

/* Unmap the VMA and map it again, page 0 written (its anon_vma); 0 or -1. */
static int remap(struct ctx *c)
{
	if (munmap(c->b, vma_len())) {
		fail(c->fb, "munmap(): %s", strerror(errno));
		return -1;
	}
	if (mmap(c->b, vma_len(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != c->b) {
		fail(c->fb, "mmap() at %p: %s", c->b, strerror(errno));
		return -1;
	}
	return probe_write((volatile uint64_t *)c->b, 1);
}

static void *remapper(void *arg)
{
	struct ctx *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "remapper: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		usleep(REMAP_US);
		if (remap(c)) {
			fail(c->fb, "remapper: page 0 of the new VMA: signal %d",
			     probe_signo);
			break;
		}
		atomic_fetch_add(&c->remaps, 1);
	}
	return NULL;
}

struct phase {
	long rounds;
	long long installed;	/* spf_pgtable_installed */
	long long marked;	/* spf_pgtable_marked */
};

/*
 * One phase of seconds. Alone, this thread remaps the VMA every round and
 * every value it writes must read back; beside the remapper a write may
 * meet the VMA unmapped or be unmapped before it is read, and the kernel
 * log is the check.
 */
static void run_phase(struct __test_metadata *_metadata, struct ctx *c,
		      double seconds, bool race, struct phase *ph)
{
	long long installed0 = vmstat("spf_pgtable_installed");
	long long marked0 = vmstat("spf_pgtable_marked");
	pthread_attr_t a;
	pthread_t tr;
	double end;
	long r;

	atomic_store(&c->stop, 0);
	if (race) {
		/* a stack of its own: the gigabyte must stay empty */
		ASSERT_EQ(0, pthread_attr_init(&a));
		ASSERT_EQ(0, pthread_attr_setstack(&a, c->stack, STACK_SIZE));
		ASSERT_EQ(0, pthread_create(&tr, &a, remapper, c));
		pthread_attr_destroy(&a);
	}
	end = now_s() + seconds;
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		if (!race && remap(c)) {
			fail(c->fb, "round %ld: page 0 of the new VMA: signal %d",
			     r, probe_signo);
			break;
		}
		for (int t = 1; t < TABLES; t++) {
			volatile uint64_t *w = table_word(c, t, r);
			uint64_t v = mkval(r, 0, t, 1);

			if (probe_write(w, v)) {
				if (!race)
					fail(c->fb, "round %ld: write to table %d: signal %d",
					     r, t, probe_signo);
				continue;
			}
			if (!race && *w != v)
				fail(c->fb, "round %ld: table %d reads %#lx, wrote %#lx",
				     r, t, (unsigned long)*w, (unsigned long)v);
		}
	}
	atomic_store(&c->stop, 1);
	if (race)
		pthread_join(tr, NULL);
	ph->rounds = r - 1;
	ph->installed = vmstat("spf_pgtable_installed") - installed0;
	ph->marked = vmstat("spf_pgtable_marked") - marked0;
}

/*
 * Whether the VMA is alone in its gigabyte, as /proc/self/maps says; a
 * mapping beside it would keep munmap() from freeing the PMD table.
 */
static bool gigabyte_alone(struct __test_metadata *_metadata, struct ctx *c)
{
	uintptr_t g = (uintptr_t)c->b, s, e;
	char line[512];
	bool alone = true;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < g + GIB &&
		    e > g && !(s == g && e == g + vma_len())) {
			TH_LOG("another mapping in the VMA's gigabyte: %s", line);
			alone = false;
		}
	fclose(f);
	return alone;
}

SPF_WINDOW_FIXTURE(pgtable, DELAY);

TEST_F_TIMEOUT(pgtable, race, SPF_TIMEOUT)
{
	struct phase alone, raced;
	struct ctx *c;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	/* page tables, not huge pages, in the VMAs mapped here */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c->stack);
	c->b = reserve_gigabyte(&self->map, &self->map_len);
	ASSERT_NE(NULL, c->b);
	ASSERT_EQ(c->b, mmap(c->b, vma_len(), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	run_phase(_metadata, c, test_seconds() / 2, false, &alone);
	if (!failed(c->fb))
		run_phase(_metadata, c, test_seconds() / 2, true, &raced);
	SPF_END(spf0, "spf_pgtable_marked");

	TH_LOG("alone: %ld rounds, %lld page tables installed speculatively",
	       alone.rounds, alone.installed);
	TH_LOG("beside the remapper's %ld munmap()s: %ld rounds, %lld installed, %lld found the VMA marked",
	       atomic_load(&c->remaps), raced.rounds, raced.installed,
	       raced.marked);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	/* speculation installed the tables of the rounds alone */
	EXPECT_LT(0, alone.installed);
	EXPECT_LT(0, atomic_load(&c->remaps));
	EXPECT_TRUE(gigabyte_alone(_metadata, c));
	failbox_free(c->fb);
	munmap(c->stack, STACK_SIZE);
	munmap(c, sizeof(*c));
}

SPF_SCALE_TIMEOUT(pgtable, race)

TEST_HARNESS_MAIN
