// SPDX-License-Identifier: GPL-2.0
/*
 * Window: a speculative fault that found its PMD empty and allocated a
 * page table finds page_table_lock (or the PMD's lock) held by another
 * install, and waits for it with interrupts enabled before it tries again
 * (spf_pmd_install_lock()). While it waits, munmap() can mark the VMA,
 * skip the empty PMD and free the PMD table above it: the fault must see
 * the mark, and check the VMA again before it looks the PMD's lock up
 * anew. One that took the locks it looked up before waiting, unchecked,
 * installs its table into the freed PMD table, where nothing frees it
 * again ("BUG: non-zero pgtables_bytes on freeing mm" when the process
 * exits, which the runner's kernel log check sees).
 *
 * Two anonymous VMAs of TABLES page tables, each at the start of an
 * empty gigabyte between PROT_NONE reservations (so munmap() frees the
 * PMD table too): this thread's (CPU 0) and a neighbour's (CPU 1). Both
 * unmap their VMA, map it again and write a page in each table, so every
 * table is a speculative install; with spf_delay=pmd_locked each install
 * holds page_table_lock for the delay, so the other thread's installs
 * find it held and wait (spf_pmd_lock_waited moves only when an install
 * took the locks after waiting), and spf_delay=pmd_waited widens the
 * wait itself:
 *
 *  1. this thread and the neighbour: every value written reads back;
 *  2. the same, but this thread's VMA is unmapped and mapped again by a
 *     remapper on CPU 1 every few milliseconds, so that munmap() marks
 *     it, and frees its PMD table, while installs wait
 *     (spf_pgtable_marked counts those that then found the mark).
 */
#include "gigabyte_vma.h"

#include <sys/prctl.h>

#define DELAY "pmd_locked:1000,pmd_waited:6000"
#define TABLES 16		/* page tables in each VMA */
#define REMAP_US 2000		/* the remapper's pause between its munmap()s */

struct ctx {
	struct gigabyte_vma *own;	/* this thread's VMA */
	struct gigabyte_vma *nb;	/* the neighbour's */
	atomic_int stop;
	atomic_long nb_rounds;
	struct failbox *fb;
};

/* The word touched in table t of c in round r. */
static volatile uint64_t *table_word(struct gigabyte_vma *c, int t, long r)
{
	return (volatile uint64_t *)(c->b + t * PMD_SIZE_ + (r % 512) * PS);
}

/*
 * Write a word in each table of c but the first (the remap's write fills
 * it); the first failure in fb unless tolerant, where c may be unmapped
 * meanwhile.
 */
static void write_tables(struct gigabyte_vma *c, long r, int who,
			 bool tolerant, struct failbox *fb)
{
	for (int t = 1; t < TABLES; t++) {
		volatile uint64_t *w = table_word(c, t, r);
		uint64_t v = mkval(r, who, t, 1);

		if (probe_write(w, v)) {
			if (!tolerant)
				fail(fb, "round %ld: %s table %d: signal %d", r,
				     who ? "the neighbour's" : "own", t,
				     probe_signo);
			continue;
		}
		if (!tolerant && *w != v)
			fail(fb, "round %ld: %s table %d reads %#lx, wrote %#lx",
			     r, who ? "the neighbour's" : "own", t,
			     (unsigned long)*w, (unsigned long)v);
	}
}

/* Remap the neighbour's VMA and fill its tables, on CPU 1. */
static void *neighbour(void *arg)
{
	struct ctx *c = arg;
	long r;

	if (pin_to_cpu(1))
		fail(c->fb, "neighbour: cannot run on CPU 1: %s", strerror(errno));
	for (r = 1; !atomic_load(&c->stop) && !failed(c->fb); r++) {
		if (gigabyte_vma_remap(c->nb)) {
			fail(c->fb, "neighbour: round %ld: page 0 of its new VMA: signal %d",
			     r, probe_signo);
			break;
		}
		write_tables(c->nb, r, 1, false, c->fb);
		atomic_fetch_add(&c->nb_rounds, 1);
	}
	return NULL;
}

struct phase {
	long rounds;
	long long waited;	/* spf_pmd_lock_waited */
	long long installed;	/* spf_pgtable_installed */
	long long marked;	/* spf_pgtable_marked */
};

/*
 * One phase of seconds beside the neighbour. Without the remapper this
 * thread remaps its VMA every round and every value must read back; with
 * it a write may meet the VMA unmapped, and the kernel log is the check.
 */
static void run_phase(struct __test_metadata *_metadata, struct ctx *c,
		      double seconds, bool race, struct phase *ph)
{
	long long waited0 = vmstat("spf_pmd_lock_waited");
	long long installed0 = vmstat("spf_pgtable_installed");
	long long marked0 = vmstat("spf_pgtable_marked");
	pthread_t tn;
	double end;
	long r;

	/* on the stack of its VMA's (unused) remapper */
	atomic_store(&c->stop, 0);
	ASSERT_EQ(0, gigabyte_vma_thread(c->nb, &tn, neighbour, c));
	if (race)
		ASSERT_EQ(0, gigabyte_vma_race(c->own));
	end = now_s() + seconds;
	for (r = 1; now_s() < end && !failed(c->fb) && !failed(c->own->fb); r++) {
		if (!race && gigabyte_vma_remap(c->own)) {
			fail(c->fb, "round %ld: page 0 of the new VMA: signal %d",
			     r, probe_signo);
			break;
		}
		write_tables(c->own, r, 0, race, c->fb);
	}
	if (race)
		gigabyte_vma_race_end(c->own);
	atomic_store(&c->stop, 1);
	pthread_join(tn, NULL);
	ph->rounds = r - 1;
	ph->waited = vmstat("spf_pmd_lock_waited") - waited0;
	ph->installed = vmstat("spf_pgtable_installed") - installed0;
	ph->marked = vmstat("spf_pgtable_marked") - marked0;
}

SPF_WINDOW_FIXTURE(pmd_wait, DELAY);

TEST_F_TIMEOUT(pmd_wait, race, SPF_TIMEOUT)
{
	struct phase alone, raced = { 0 };
	char *nb_resv;
	size_t nb_resv_len;
	struct ctx *c;

	SPF_WINDOW_CTX(c);
	/* page tables, not huge pages, in the VMAs mapped here */
	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	/*
	 * The neighbour's gigabyte first: the stack mapped for this thread's
	 * remapper then lands in it, not in this thread's gigabyte.
	 */
	c->nb = gigabyte_vma_new(TABLES * PMD_SIZE_, -1, 0, 0, &nb_resv,
				 &nb_resv_len);
	ASSERT_NE(NULL, c->nb);
	c->own = gigabyte_vma_new(TABLES * PMD_SIZE_, -1, 0, REMAP_US,
				  &self->map, &self->map_len);
	ASSERT_NE(NULL, c->own);
	ASSERT_EQ(0, pin_to_cpu(0));

	SPF_BEGIN(spf0);
	run_phase(_metadata, c, test_seconds() / 2, false, &alone);
	if (!failed(c->fb) && !failed(c->own->fb))
		run_phase(_metadata, c, test_seconds() / 2, true, &raced);
	SPF_END(spf0, "spf_pmd_lock_waited");

	TH_LOG("beside the neighbour: %ld rounds, %lld page tables installed speculatively, %lld installs took the locks after waiting",
	       alone.rounds, alone.installed, alone.waited);
	TH_LOG("and the remapper's %ld munmap()s: %ld rounds, %lld waited, %lld found the VMA marked",
	       atomic_load(&c->own->remaps), raced.rounds, raced.waited,
	       raced.marked);
	TH_LOG("the neighbour: %ld rounds", atomic_load(&c->nb_rounds));
	failbox_report(c->fb);
	failbox_report(c->own->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_EQ(0, failed(c->own->fb));
	/* the window: installs waited for the locks and went on */
	EXPECT_LT(0, alone.waited);
	EXPECT_LT(0, alone.installed);
	EXPECT_LT(0, atomic_load(&c->own->remaps));
	EXPECT_TRUE(gigabyte_vma_alone(_metadata, c->own));
	gigabyte_vma_free(c->own);
	gigabyte_vma_free(c->nb);
	munmap(nb_resv, nb_resv_len);
	SPF_WINDOW_CTX_FREE(c);
}

SPF_SCALE_TIMEOUT(pmd_wait, race)

TEST_HARNESS_MAIN
