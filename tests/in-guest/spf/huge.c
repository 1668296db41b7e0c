// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative anonymous fault that found its PMD empty in a VMA
 * that wants huge pages maps a new huge page there on a write, the huge
 * zero page on a read (spf_huge_fault()), checking the VMA's mark under
 * page_table_lock. munmap() marks the VMA, zaps it (an empty PMD without
 * a lock) and, when nothing else maps in the same gigabyte, frees the PMD
 * table above it: a fault that did not check the mark maps its huge page
 * after the zap passed its PMD, and munmap() frees a PMD table with a huge
 * PMD and a deposited page table in it ("bad pmd", then
 * VM_BUG_ON_PAGE(page->pmd_huge_pte), which the runner sees), or into the
 * table already freed.
 *
 * One anonymous VMA of PMDS huge pages (MADV_HUGEPAGE) and one small page
 * at the start of an empty, 1 GiB-aligned gigabyte whose neighbours are
 * PROT_NONE reservations (so munmap() frees the PMD table too). Page 0
 * and the small page, the VMA's last, are written after each remap: page
 * 0 gives the VMA its anon_vma, and the small page a page table after the
 * huge pages, whose zap munmap() reaches last, so that spf_delay=zap holds
 * munmap() there, after it passed the empty PMDs and before it frees the
 * PMD table: a fault held by spf_delay=huge before its locks then finds
 * the VMA marked, or, with the hole, maps its page where munmap() frees
 * it. Each fault waits, huge page cleared, before it takes the locks:
 *
 *  1. this thread alone unmaps and maps the VMA again, then writes to the
 *     even huge pages and reads the odd ones: every value reads back, the
 *     reads find zeroes, and speculation maps huge pages
 *     (spf_success_huge);
 *  2. this thread does the same on CPU 0 while a remapper on CPU 1 unmaps
 *     and maps the VMA again every few milliseconds, so that faults find
 *     the VMA marked (spf_huge_marked moves only then).
 */
#include "gigabyte_vma.h"

#define DELAY "huge:1000,zap:3000"
#define PMDS 8			/* huge pages in the VMA */
#define REMAP_US 2000		/* the remapper's pause between its munmap()s */

/* The word this thread reaches in huge page h in round r. */
static volatile uint64_t *huge_word(struct gigabyte_vma *c, int h, long r)
{
	return (volatile uint64_t *)(c->b + h * PMD_SIZE_ + (r % 512) * PS);
}

struct phase {
	long rounds;
	long long mapped;	/* spf_success_huge */
	long long marked;	/* spf_huge_marked */
};

/* Touch huge page h in round r: write the even ones, read the odd ones. */
static void touch(struct gigabyte_vma *c, int h, long r, bool race)
{
	volatile uint64_t *w = huge_word(c, h, r);
	uint64_t v = mkval(r, 0, h, 1), got;

	if (h % 2 == 0) {
		if (probe_write(w, v)) {
			if (!race)
				fail(c->fb, "round %ld: write to huge page %d: signal %d",
				     r, h, probe_signo);
			return;
		}
		if (!race && *w != v)
			fail(c->fb, "round %ld: huge page %d reads %#lx, wrote %#lx",
			     r, h, (unsigned long)*w, (unsigned long)v);
		return;
	}
	if (probe_read(w, &got)) {
		if (!race)
			fail(c->fb, "round %ld: read of huge page %d: signal %d",
			     r, h, probe_signo);
		return;
	}
	if (got)
		fail(c->fb, "round %ld: new huge page %d reads %#lx, not 0",
		     r, h, (unsigned long)got);
}

/*
 * One phase of seconds. Alone, this thread remaps the VMA every round and
 * every value must read back; beside the remapper an access may meet the
 * VMA unmapped or be unmapped before it is read, a read must still find
 * zeroes, and the kernel log is the check.
 */
static void run_phase(struct __test_metadata *_metadata, struct gigabyte_vma *c,
		      double seconds, bool race, struct phase *ph)
{
	long long mapped0 = vmstat("spf_success_huge");
	long long marked0 = vmstat("spf_huge_marked");
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
		for (int h = 1; h < PMDS; h++)
			touch(c, h, r, race);
	}
	if (race)
		gigabyte_vma_race_end(c);
	ph->rounds = r - 1;
	ph->mapped = vmstat("spf_success_huge") - mapped0;
	ph->marked = vmstat("spf_huge_marked") - marked0;
}

SPF_WINDOW_FIXTURE(huge, DELAY);

TEST_F_TIMEOUT(huge, race, SPF_TIMEOUT)
{
	struct phase alone, raced;
	struct gigabyte_vma *c;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	if (!thp_madvise_allowed())
		SKIP(return, "transparent huge pages are off (%s)", THP_ENABLED);
	/* the huge pages, then a small page: a page table munmap() zaps last */
	c = gigabyte_vma_new(PMDS * PMD_SIZE_ + PS, -1, MADV_HUGEPAGE, REMAP_US,
			     &self->map, &self->map_len);
	ASSERT_NE(NULL, c);
	c->touch_last = true;
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	spf0.also_success = "spf_success_huge";
	run_phase(_metadata, c, test_seconds() / 2, false, &alone);
	if (!failed(c->fb))
		run_phase(_metadata, c, test_seconds() / 2, true, &raced);
	SPF_END(spf0, "spf_huge_marked");

	TH_LOG("alone: %ld rounds, %lld huge pages mapped speculatively",
	       alone.rounds, alone.mapped);
	TH_LOG("beside the remapper's %ld munmap()s: %ld rounds, %lld mapped, %lld found the VMA marked",
	       atomic_load(&c->remaps), raced.rounds, raced.mapped,
	       raced.marked);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	/* speculation mapped the huge pages of the rounds alone */
	EXPECT_LT(0, alone.mapped);
	EXPECT_LT(0, atomic_load(&c->remaps));
	gigabyte_vma_free(c);
}

SPF_SCALE_TIMEOUT(huge, race)

TEST_HARNESS_MAIN
