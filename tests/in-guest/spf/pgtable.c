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
 * memfd shared, filled beforehand, and the installs are those of shmem
 * read faults that map the cached page (with THP disabled for the
 * process, shmem would not give the VMA a huge folio, so the classic path
 * would install a table too). It reads rather than writes: munmap()
 * flushes the TLB in the middle of its zap for a dirty PTE of a file page,
 * and that flush waits for the faulting CPU's interrupts, off until the
 * install is done, so with dirty pages every install would come before
 * free_pgtables() and the hole could not leak a table.
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

/* The word this thread touches in table t in round r. */
static volatile uint64_t *table_word(struct gigabyte_vma *c, int t, long r)
{
	return (volatile uint64_t *)(c->b + t * PMD_SIZE_ + (r % 512) * PS);
}

/* What the memfd holds at the start of page p of table t. */
static uint64_t file_word(int t, long p)
{
	return mkval(0, t, p, 1);
}

/* Fill the memfd: every page of every table starts with file_word(). */
static int fill_file(int fd)
{
	static uint64_t page[PS / sizeof(uint64_t)];

	for (int t = 0; t < TABLES; t++)
		for (long p = 0; p < (long)(PMD_SIZE_ / PS); p++) {
			page[0] = file_word(t, p);
			if (pwrite(fd, page, PS, t * PMD_SIZE_ + p * PS) != PS)
				return -1;
		}
	return 0;
}

/*
 * Touch word w of table t in round r: write a new value in anonymous
 * memory, read the file's value in the memfd. 0 with *want and *got for
 * the check, or -1 if the access took a signal.
 */
static int touch(volatile uint64_t *w, int t, long r, uint64_t *want, uint64_t *got)
{
	if (PGTABLE_SHMEM) {
		*want = file_word(t, r % 512);
		return probe_read(w, got);
	}
	*want = mkval(r, 0, t, 1);
	if (probe_write(w, *want))
		return -1;
	*got = *w;
	return 0;
}

struct phase {
	long rounds;
	long long installed;	/* spf_pgtable_installed */
	long long marked;	/* spf_pgtable_marked */
};

/*
 * One phase of seconds. Alone, this thread remaps the VMA every round and
 * every value it writes (reads, in the memfd) must read back right; beside
 * the remapper a touch may meet the VMA unmapped, and the kernel
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
			uint64_t want, got;

			if (touch(table_word(c, t, r), t, r, &want, &got)) {
				if (!race)
					fail(c->fb, "round %ld: table %d: signal %d",
					     r, t, probe_signo);
				continue;
			}
			if (!race && got != want)
				fail(c->fb, "round %ld: table %d reads %#lx, want %#lx",
				     r, t, (unsigned long)got, (unsigned long)want);
		}
	}
	if (race)
		gigabyte_vma_race_end(c);
	ph->rounds = r - 1;
	ph->installed = vmstat("spf_pgtable_installed") - installed0;
	ph->marked = vmstat("spf_pgtable_marked") - marked0;
}

SPF_WINDOW_FIXTURE(PGTABLE, DELAY);

TEST_F_TIMEOUT(PGTABLE, race, SPF_TIMEOUT)
{
	struct phase alone, raced = { 0 };
	struct gigabyte_vma *c;
	int fd = -1;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	/* page tables, not huge pages, in the VMAs mapped here */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	if (PGTABLE_SHMEM) {
		fd = memfd_create("pgtable", MFD_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fill_file(fd));
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
	EXPECT_TRUE(gigabyte_vma_alone(_metadata, c));
	gigabyte_vma_free(c);
	if (fd >= 0)
		close(fd);
}

PGTABLE_SCALE_TIMEOUT(PGTABLE, race)

TEST_HARNESS_MAIN
