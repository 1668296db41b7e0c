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
 *
 * pgtable_shmem.c builds this test with PGTABLE_SHMEM 1: the VMA maps a
 * memfd shared, and the installs are those of shmem write faults (with
 * THP disabled for the process, shmem would not give the VMA a huge
 * folio, so the classic path would install a table too).
 */
#include "gigabyte_vma.h"

#include <sys/mman.h>
#include <sys/prctl.h>

#ifndef PGTABLE_SHMEM
#define PGTABLE_SHMEM 0
#define PGTABLE pgtable
#else
#define PGTABLE pgtable_shmem
#endif
/* The fixture's name expanded before the harness pastes it. */
#define PGTABLE_SCALE_TIMEOUT(fixture, test) SPF_SCALE_TIMEOUT(fixture, test)

#define DELAY "pgtable:1000"
#define TABLES 16		/* page tables in the VMA */
#define REMAP_US 2000		/* the remapper's pause between its munmap()s */

/* The word this thread writes in table t in round r. */
static volatile uint64_t *table_word(struct gigabyte_vma *c, int t, long r)
{
	return (volatile uint64_t *)(c->b + t * PMD_SIZE_ + (r % 512) * PS);
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
static void run_phase(struct __test_metadata *_metadata, struct gigabyte_vma *c,
		      double seconds, bool race, struct phase *ph)
{
	long long installed0 = vmstat("spf_pgtable_installed");
	long long marked0 = vmstat("spf_pgtable_marked");
	double end;
	long r;

	/* its stack is outside: the gigabyte must stay empty */
	if (race)
		ASSERT_EQ(0, gigabyte_vma_race(c));
	end = now_s() + seconds;
	for (r = 1; now_s() < end && !failed(c->fb); r++) {
		if (!race && gigabyte_vma_remap(c)) {
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
	if (race)
		gigabyte_vma_race_end(c);
	ph->rounds = r - 1;
	ph->installed = vmstat("spf_pgtable_installed") - installed0;
	ph->marked = vmstat("spf_pgtable_marked") - marked0;
}

/*
 * Whether the VMA is alone in its gigabyte, as /proc/self/maps says; a
 * mapping beside it would keep munmap() from freeing the PMD table.
 */
static bool gigabyte_alone(struct __test_metadata *_metadata, struct gigabyte_vma *c)
{
	uintptr_t g = (uintptr_t)c->b, s, e;
	char line[512];
	bool alone = true;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < g + GIB &&
		    e > g && !(s == g && e == g + c->len)) {
			TH_LOG("another mapping in the VMA's gigabyte: %s", line);
			alone = false;
		}
	fclose(f);
	return alone;
}

SPF_WINDOW_FIXTURE(PGTABLE, DELAY);

TEST_F_TIMEOUT(PGTABLE, race, SPF_TIMEOUT)
{
	struct phase alone, raced;
	struct gigabyte_vma *c;
	int fd = -1;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	/* page tables, not huge pages, in the VMAs mapped here */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	if (PGTABLE_SHMEM) {
		fd = memfd_create("pgtable", MFD_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ftruncate(fd, TABLES * PMD_SIZE_));
	}
	c = gigabyte_vma_new(TABLES * PMD_SIZE_, fd, 0, REMAP_US, &self->map,
			     &self->map_len);
	ASSERT_NE(NULL, c);
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
	gigabyte_vma_free(c);
	if (fd >= 0)
		close(fd);
}

PGTABLE_SCALE_TIMEOUT(PGTABLE, race)

TEST_HARNESS_MAIN
