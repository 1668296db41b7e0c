// SPDX-License-Identifier: GPL-2.0
/*
 * Window: the page-cache lookup of a speculative shmem write fault before
 * it locks the folio (spf_cached_page()), against a hole punch. With
 * spf_delay=cached_page the fault waits there for milliseconds, and a
 * punch removes the folio from the file in between. Locked, the folio
 * must be found gone (spf_abort_file_stale) and the fault given up: a
 * fault that mapped the orphan would send every later write to a page
 * the file no longer has.
 *
 * One page of a shared memfd. The puncher loops: punch the page, then
 * pwrite() a word of it (the page is in the cache again for the next
 * fault), then sleep a millisecond; its count is odd while it works. The
 * writer loops: MADV_DONTNEED the page, write v1 to its word (a
 * speculative fault on a cached page, which waits in the window), write
 * v2 (no fault: the page is mapped), and pread() the word: it must be v2
 * whenever no punch ran from before the write of v2 to after the pread().
 * The window is reached when spf_abort_file_stale moves; spf_hole=mapcheck
 * and spf_hole=filelock must fail the data check.
 */
#include <linux/falloc.h>
#include "spf_window.h"

#define DELAY "cached_page:3000"
#define OTHER_WORD 256	/* the puncher's, in the page's second half */

struct ctx {
	char *page;
	int fd;
	atomic_int stop;
	atomic_ulong punches;	/* odd while a punch and its pwrite() run */
	struct failbox *fb;
};

static void *puncher(void *arg)
{
	struct ctx *c = arg;
	uint64_t one = 1;

	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		atomic_fetch_add(&c->punches, 1);
		if (fallocate(c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      0, PS))
			fail(c->fb, "punch: %s", strerror(errno));
		if (pwrite(c->fd, &one, sizeof(one), OTHER_WORD * 8) != sizeof(one))
			fail(c->fb, "pwrite: %s", strerror(errno));
		atomic_fetch_add(&c->punches, 1);
		usleep(1000);
	}
	return NULL;
}

SPF_WINDOW_FIXTURE(shmem_punch, DELAY);

TEST_F_TIMEOUT(shmem_punch, race, SPF_TIMEOUT)
{
	struct ctx c = { .fd = -1 };
	double end = now_s() + test_seconds();
	long rounds = 0, strict = 0;
	volatile uint64_t *w;
	pthread_t tid;
	uint64_t one = 1;

	c.fb = failbox_new();
	ASSERT_NE(NULL, c.fb);
	c.fd = memfd_create("spf-shmem-punch", MFD_CLOEXEC);
	ASSERT_LE(0, c.fd);
	ASSERT_EQ((ssize_t)sizeof(one),
		  pwrite(c.fd, &one, sizeof(one), OTHER_WORD * 8));
	c.page = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd, 0);
	ASSERT_NE(MAP_FAILED, c.page);
	self->map = c.page;
	self->map_len = PS;
	w = (volatile uint64_t *)c.page;

	SPF_BEGIN_FILE(spf0);
	ASSERT_EQ(0, pthread_create(&tid, NULL, puncher, &c));
	for (unsigned long seq = 1; !failed(c.fb); seq++) {
		uint64_t v1 = mkval(seq, 1, 0, 1), v2 = mkval(seq, 1, 0, 2), got;
		unsigned long before;

		if (madvise(c.page, PS, MADV_DONTNEED)) {
			fail(c.fb, "MADV_DONTNEED: %s", strerror(errno));
			break;
		}
		*w = v1;
		before = atomic_load(&c.punches);
		*w = v2;
		if (pread(c.fd, &got, sizeof(got), 0) != sizeof(got)) {
			fail(c.fb, "pread: %s", strerror(errno));
			break;
		}
		atomic_thread_fence(memory_order_seq_cst);
		rounds++;
		if (!(before & 1) && atomic_load(&c.punches) == before) {
			strict++;
			if (got != v2)
				fail(c.fb, "round %ld: the file has %#lx where the mapping wrote %#lx, with no punch since: the write went to a page the file no longer has",
				     rounds, (unsigned long)got, (unsigned long)v2);
		}
		if (now_s() > end)
			break;
	}
	atomic_store(&c.stop, 1);
	pthread_join(tid, NULL);
	SPF_END(spf0, "spf_abort_file_stale");

	TH_LOG("%ld rounds, %ld checked with no punch overlapping, %lu punches",
	       rounds, strict, atomic_load(&c.punches) / 2);
	failbox_report(c.fb);
	EXPECT_EQ(0, failed(c.fb));
	EXPECT_LT(0, strict);
	close(c.fd);
	failbox_free(c.fb);
}

SPF_SCALE_TIMEOUT(shmem_punch, race)

TEST_HARNESS_MAIN
