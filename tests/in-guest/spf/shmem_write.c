// SPDX-License-Identifier: GPL-2.0
/*
 * Writes to a MAP_SHARED memfd (tmpfs: no ->page_mkwrite, no writeback),
 * which the speculative handler takes when the page is in the page cache:
 * it writes into the cached page itself, so a fault that mapped a page
 * already removed from the file would send every later write to a page
 * nobody else sees.
 *
 * The file has NPAGES pages; page p belongs to thread p % n. The threads
 * never read through the mapping (a read fault would map the page writable
 * and the write would not fault): for each of its pages, a thread reads
 * its word (word_of()) with pread(), which must hold its last write, writes
 * a new value through the mapping, a write fault whenever the page was
 * zapped, and reads it back with pread(). Meanwhile the main thread zaps
 * random ranges with MADV_DONTNEED (the next writes fault on cached pages:
 * speculative) and punches holes with fallocate(PUNCH_HOLE) (the pages
 * leave the file while faults are in flight). A value may read as zero
 * only where a hole punch overlapped, which each page's hole count says:
 * odd while a punch of the page runs, raised before and after it.
 *
 * Two variants. memfd: after two thirds of the race the file is sealed
 * with F_SEAL_FUTURE_WRITE (F_SEAL_WRITE must fail with EBUSY while the
 * mapping is writable); the mapping stays writable, as memfd_create(2)
 * says, new writable mappings, write(2) and hole punching get EPERM.
 * named: a file in /dev/shm (tmpfs), renamed back and forth during the
 * race and unlinked after two thirds of it; the mapping and the data live
 * on.
 */
#include <linux/falloc.h>
#include "spf_common.h"

#define NPAGES 64
#define SHM_DIR "/dev/shm"

struct ctx {
	char *base;
	size_t len;
	int fd;
	int nthreads;
	atomic_int stop;
	atomic_long written;
	atomic_ulong holes[NPAGES];	/* punches of each page, two a punch */
	struct failbox *fb;
};

static int pread_word(struct ctx *c, long p, int t, uint64_t *v)
{
	off_t off = (char *)word_of(c->base, p, t) - c->base;

	return pread(c->fd, v, sizeof(*v), off) == sizeof(*v) ? 0 : -1;
}

/* Whether a punch of page p overlapped since holes read @h. */
static bool punched(struct ctx *c, long p, unsigned long h)
{
	atomic_thread_fence(memory_order_seq_cst);
	return (h & 1) || atomic_load(&c->holes[p]) != h;
}

static void *writer_thread(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	uint64_t last[NPAGES] = { 0 };
	unsigned long since[NPAGES];
	unsigned seq = 0;

	for (long p = t; p < NPAGES; p += c->nthreads)
		since[p] = atomic_load(&c->holes[p]);
	for (long round = 1; !atomic_load(&c->stop) && !failed(c->fb); round++) {
		for (long p = t; p < NPAGES; p += c->nthreads) {
			uint64_t v, nv = mkval(round, t, p, ++seq);
			unsigned long h;

			if (pread_word(c, p, t, &v)) {
				fail(c->fb, "pread: %s", strerror(errno));
				return NULL;
			}
			if (v != last[p] && !(v == 0 && punched(c, p, since[p]))) {
				fail(c->fb, "round %ld: thread %d page %ld: the file holds %#lx, the last write was %#lx",
				     round, t, p, (unsigned long)v,
				     (unsigned long)last[p]);
				return NULL;
			}
			h = atomic_load(&c->holes[p]);
			atomic_thread_fence(memory_order_seq_cst);
			*word_of(c->base, p, t) = nv;
			if (pread_word(c, p, t, &v)) {
				fail(c->fb, "pread: %s", strerror(errno));
				return NULL;
			}
			if (v != nv && !(v == 0 && punched(c, p, h))) {
				fail(c->fb, "round %ld: thread %d page %ld: wrote %#lx through the mapping, the file holds %#lx",
				     round, t, p, (unsigned long)nv,
				     (unsigned long)v);
				return NULL;
			}
			last[p] = v;
			since[p] = h;
			atomic_fetch_add(&c->written, 1);
		}
	}
	return NULL;
}

static int punch(struct ctx *c, long lo, long hi)
{
	int ret;

	for (long p = lo; p < hi; p++)
		atomic_fetch_add(&c->holes[p], 1);
	ret = fallocate(c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			lo * PS, (hi - lo) * PS);
	for (long p = lo; p < hi; p++)
		atomic_fetch_add(&c->holes[p], 1);
	return ret;
}

FIXTURE(shmem_write) {
	struct ctx *c;
	char path[2][64];	/* named: the file's two names */
	int name;		/* the one it has now, -1 once unlinked */
};

FIXTURE_VARIANT(shmem_write) {
	bool named;
};

FIXTURE_VARIANT_ADD(shmem_write, memfd) {
	.named = false,
};

FIXTURE_VARIANT_ADD(shmem_write, named) {
	.named = true,
};

FIXTURE_SETUP(shmem_write)
{
	struct ctx *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0, sizeof(*c));
	self->c = c;
	c->fd = -1;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	self->name = -1;
	snprintf(self->path[0], sizeof(self->path[0]),
		 SHM_DIR "/spf-shmem-write.%d.a", getpid());
	snprintf(self->path[1], sizeof(self->path[1]),
		 SHM_DIR "/spf-shmem-write.%d.b", getpid());
}

FIXTURE_TEARDOWN(shmem_write)
{
	struct ctx *c = self->c;

	if (!c)
		return;
	if (c->base)
		munmap(c->base, c->len);
	if (c->fd >= 0)
		close(c->fd);
	if (self->name >= 0)
		unlink(self->path[self->name]);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

/* memfd: seal against future writes; what must and must not work after. */
static void seal(struct __test_metadata *_metadata, struct ctx *c)
{
	uint64_t zero = 0;
	void *p;

	/* a writable shared mapping exists: no F_SEAL_WRITE */
	EXPECT_EQ(-1, fcntl(c->fd, F_ADD_SEALS, F_SEAL_WRITE));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, fcntl(c->fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE))
		TH_LOG("F_SEAL_FUTURE_WRITE: %s", strerror(errno));
	p = mmap(NULL, PS, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	EXPECT_EQ(MAP_FAILED, p) munmap(p, PS);
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, pwrite(c->fd, &zero, sizeof(zero), 0));
	EXPECT_EQ(EPERM, errno);
}

/* named: give the file its other name. */
static int rename_file(FIXTURE_DATA(shmem_write) *self)
{
	int to = !self->name;

	if (rename(self->path[self->name], self->path[to]))
		return -1;
	self->name = to;
	return 0;
}

TEST_F_TIMEOUT(shmem_write, race, SPF_TIMEOUT)
{
	struct ctx *c = self->c;
	struct team tm = { 0 };
	uint64_t seed0 = test_seed(), seed = seed0;
	double start = now_s(), end = start + test_seconds();
	double later = start + test_seconds() * 2 / 3;
	long zaps = 0, punches = 0, renames = 0, refused = 0;
	bool after = false;

	c->nthreads = test_threads();
	c->len = NPAGES * PS;
	if (variant->named) {
		c->fd = open(self->path[0], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			     0600);
		ASSERT_LE(0, c->fd) TH_LOG("%s: %s", self->path[0],
					   strerror(errno));
		self->name = 0;
	} else {
		c->fd = memfd_create("spf-shmem-write",
				     MFD_CLOEXEC | MFD_ALLOW_SEALING);
		ASSERT_LE(0, c->fd) TH_LOG("memfd_create: %s", strerror(errno));
	}
	ASSERT_EQ(0, ftruncate(c->fd, c->len));
	c->base = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       c->fd, 0);
	ASSERT_NE(MAP_FAILED, c->base) c->base = NULL;

	SPF_BEGIN_FILE(spf0);
	prefault_stack();
	ASSERT_EQ(0, team_run(&tm, c->nthreads, writer_thread, c));
	while (now_s() < end && !failed(c->fb)) {
		long lo, hi;
		unsigned op;

		rnd_range(&seed, NPAGES, &lo, &hi);
		op = rnd(&seed) % 8;
		if (!after && now_s() >= later) {
			after = true;
			if (!variant->named)
				seal(_metadata, c);
			else if (unlink(self->path[self->name]))
				fail(c->fb, "unlink: %s", strerror(errno));
			else
				self->name = -1;
		}
		if (op < 5) {
			if (madvise(c->base + lo * PS, (hi - lo) * PS,
				    MADV_DONTNEED)) {
				fail(c->fb, "MADV_DONTNEED: %s", strerror(errno));
				break;
			}
			zaps++;
		} else if (op < 7 || self->name < 0) {
			hi = lo + 1 + (hi - lo) % 4;
			if (!punch(c, lo, hi)) {
				punches++;
			} else if (after && !variant->named && errno == EPERM) {
				refused++;	/* sealed */
			} else {
				fail(c->fb, "fallocate(PUNCH_HOLE): %s",
				     strerror(errno));
				break;
			}
		} else {
			if (rename_file(self)) {
				fail(c->fb, "rename: %s", strerror(errno));
				break;
			}
			renames++;
		}
		usleep(rnd(&seed) % 500);
	}
	atomic_store(&c->stop, 1);
	team_join(&tm);
	TH_LOG("%ld zaps, %ld hole punches (%ld refused after the seal), %ld renames, %ld values written and read back; seed %#lx",
	       zaps, punches, refused, renames, atomic_load(&c->written),
	       (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_TRUE(after) TH_LOG("the race ended before the %s",
				  variant->named ? "unlink" : "seal");
	if (!variant->named)
		EXPECT_LT(0, refused);
	/* a fault that found its page punched out of the file */
	SPF_END(spf0, "spf_abort_file_miss");
}

SPF_SCALE_TIMEOUT(shmem_write, race)

TEST_HARNESS_MAIN
