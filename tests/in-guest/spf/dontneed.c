// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing madvise(MADV_DONTNEED), which zaps PTEs under mmap_lock
 * held for read: nothing marks the VMA, so only the PTE-level checks of a
 * speculative fault (the PMD, the PTE under its lock) keep a page from
 * being installed over a zap or a value from being lost to one.
 *
 * A page reads the value its thread last wrote, or 0 after a zap, never
 * anything else; after a zap that began once the write was done, and
 * before the next write, it reads 0; with no zap since the write, it
 * reads the write. See zap_race.h.
 */
#include "zap_race.h"

static int zap_dontneed(struct zap_ctx *c)
{
	return madvise(c->base, c->len, MADV_DONTNEED) ? errno : 0;
}

SPF_RACE_FIXTURE(dontneed);

TEST_F_TIMEOUT(dontneed, race, SPF_TIMEOUT)
{
	/*
	 * No counter shows this race: the zap marks nothing, and a fault it
	 * overtakes finds a changed PTE under the lock and returns, counted
	 * as a success. The reads that had to be zero show it.
	 */
	struct zap_ctx c = { .len = ZAP_NPAGES * PS, .zap = zap_dontneed };

	c.base = map_anon(NULL, c.len, 0);
	ASSERT_NE(NULL, c.base);
	zap_race(_metadata, &c);
}

SPF_SCALE_TIMEOUT(dontneed, race)

TEST_HARNESS_MAIN
