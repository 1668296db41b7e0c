// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing mmap(MAP_FIXED) of a new anonymous region over the old
 * one: the old VMA is unmapped and its pages zapped, and the new VMA takes
 * its place, page tables included. A page a speculative fault installed
 * into the old VMA behind the zap would show through in the new region,
 * with a value from before the mmap(). The threads never fault: the
 * address stays mapped all along.
 *
 * A page reads the value its thread last wrote or 0; after an mmap() that
 * began once the write was done, and before the next write, it reads 0;
 * with no mmap() since the write, it reads the write. See zap_race.h.
 */
#include "zap_race.h"

static int zap_mmap_fixed(struct zap_ctx *c)
{
	char *p = mmap(c->base, c->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED)
		return errno;
	if (p != c->base)
		return EFAULT;
	madvise(p, c->len, MADV_NOHUGEPAGE);
	return 0;
}

SPF_RACE_FIXTURE(mmap_fixed);

TEST_F_TIMEOUT(mmap_fixed, race, SPF_TIMEOUT)
{
	static const char *const overlap[] = {
		"spf_abort_vma_changed", "spf_abort_vma_busy",
		"spf_abort_pmd_changed", NULL
	};
	struct zap_ctx c = { .len = ZAP_NPAGES * PS, .zap = zap_mmap_fixed,
			     .overlap = overlap };

	c.base = map_anon(NULL, c.len, 0);
	ASSERT_NE(NULL, c.base);
	zap_race(_metadata, &c);
}

SPF_SCALE_TIMEOUT(mmap_fixed, race)

TEST_HARNESS_MAIN
