// SPDX-License-Identifier: GPL-2.0
/*
 * Writes to a MAP_SHARED file on ext4, whose ->page_mkwrite
 * (ext4_page_mkwrite(): block allocation, the journal) may sleep: the
 * speculative handler gives every write fault on a file mapping up
 * (spf_abort_file_write) to the classic path, which calls ->page_mkwrite.
 * Read faults on the cached pages stay speculative.
 *
 * Needs SPF_EXT4_DIR, the mount point of an ext4 (tests/in-guest/spf-races
 * passes the one qemu/run --ext4 makes on /dev/ram0). The file has NPAGES
 * pages; page p belongs to thread p % n, which in each pass checks that
 * its word (word_of()) of each of its pages holds its last write (epoch
 * 0, the file's first content, before that) and writes a new value. Meanwhile
 * the main thread alternates msync(MS_SYNC) of the whole file, which
 * writes the dirty pages back and write-protects them (the next write
 * faults, through ->page_mkwrite), and MADV_DONTNEED of a random range
 * (the next read faults: fault-around on cached pages, speculative).
 * Then the file is unmapped and closed, the file system unmounted and
 * mounted again, and the file read with pread(): each thread's last value
 * of each of its pages must have been written back.
 */
#include <sys/mount.h>
#include "spf_common.h"

#define NPAGES 64
#define FILE_NAME "spf-shared-write"

struct ctx {
	char *base;
	size_t len;
	int nthreads;
	atomic_int stop;
	atomic_long checked;
	uint64_t last[NPAGES];	/* each page's last value, at the end */
	struct failbox *fb;
};

static void *writer_thread(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	unsigned seq = 0;

	for (long p = t; p < NPAGES; p += c->nthreads)
		c->last[p] = mkval(0, t, p, 0);
	for (long round = 1; !atomic_load(&c->stop) && !failed(c->fb); round++) {
		for (long p = t; p < NPAGES; p += c->nthreads) {
			volatile uint64_t *w = word_of(c->base, p, t);
			uint64_t v = *w, nv = mkval(round, t, p, ++seq);

			if (v != c->last[p]) {
				fail(c->fb, "round %ld: thread %d page %ld: read %#lx, expected %#lx",
				     round, t, p, (unsigned long)v,
				     (unsigned long)c->last[p]);
				return NULL;
			}
			*w = nv;
			c->last[p] = nv;
			atomic_fetch_add(&c->checked, 1);
		}
	}
	return NULL;
}

/* The block device mounted at dir, from /proc/mounts, into dev. */
static int mount_source(const char *dir, char *dev, size_t len)
{
	char line[512], src[256], at[256];
	int found = -1;
	FILE *f = fopen("/proc/mounts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %255s", src, at) == 2 &&
		    !strcmp(at, dir) && strlen(src) < len) {
			strcpy(dev, src);
			found = 0;
		}
	fclose(f);
	return found;
}

FIXTURE(shared_write) {
	struct ctx *c;
	int fd;
	char path[512];
};

FIXTURE_SETUP(shared_write)
{
	const char *dir = getenv("SPF_EXT4_DIR");

	self->fd = -1;
	self->path[0] = 0;
	ASSERT_TRUE(dir && *dir)
		TH_LOG("SPF_EXT4_DIR is not set: run it in a guest booted with qemu/run --ext4 (tests/in-guest/spf-races passes it on)");
	snprintf(self->path, sizeof(self->path), "%s/" FILE_NAME, dir);
}

FIXTURE_TEARDOWN(shared_write)
{
	struct ctx *c = self->c;

	if (self->fd >= 0)
		close(self->fd);
	if (self->path[0])
		unlink(self->path);
	if (!c)
		return;
	if (c->base)
		munmap(c->base, c->len);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

TEST_F_TIMEOUT(shared_write, race, SPF_TIMEOUT)
{
	const char *dir = getenv("SPF_EXT4_DIR");
	struct team tm = { 0 };
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	long syncs = 0, zaps = 0, bad = 0;
	char dev[256];
	uint64_t *page;
	struct ctx *c;

	ASSERT_EQ(0, mount_source(dir, dev, sizeof(dev)))
		TH_LOG("%s is not a mount point in /proc/mounts", dir);
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	memset(c, 0, sizeof(*c));
	self->c = c;
	c->nthreads = test_threads();
	c->len = NPAGES * PS;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	page = mmap(NULL, PS, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);

	/* epoch 0: every word of page p is mkval(0, t, p, 0), on disk */
	self->fd = open(self->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->fd) TH_LOG("%s: %s", self->path, strerror(errno));
	for (long p = 0; p < NPAGES; p++) {
		memset(page, 0, PS);
		for (int t = 0; t < MAX_THREADS; t++)
			*word_of((char *)page, 0, t) = mkval(0, t, p, 0);
		ASSERT_EQ((ssize_t)PS, pwrite(self->fd, page, PS, p * PS));
	}
	ASSERT_EQ(0, fsync(self->fd));
	c->base = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       self->fd, 0);
	ASSERT_NE(MAP_FAILED, c->base) c->base = NULL;

	SPF_BEGIN_FILE(spf0);
	prefault_stack();
	ASSERT_EQ(0, team_run(&tm, c->nthreads, writer_thread, c));
	while (now_s() < end && !failed(c->fb)) {
		long lo, hi;

		rnd_range(&seed, NPAGES, &lo, &hi);
		if (msync(c->base, c->len, MS_SYNC)) {
			fail(c->fb, "round %ld: msync: %s", syncs, strerror(errno));
			break;
		}
		syncs++;
		if (madvise(c->base + lo * PS, (hi - lo) * PS, MADV_DONTNEED)) {
			fail(c->fb, "round %ld: MADV_DONTNEED: %s", zaps,
			     strerror(errno));
			break;
		}
		zaps++;
		usleep(rnd(&seed) % 1000);
	}
	atomic_store(&c->stop, 1);
	team_join(&tm);
	TH_LOG("%ld msyncs, %ld zaps, %ld values checked; seed %#lx", syncs,
	       zaps, atomic_load(&c->checked), (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	SPF_END(spf0, "spf_abort_file_write");

	/* what reached the disk: unmount, mount again, read */
	ASSERT_EQ(0, munmap(c->base, c->len));
	c->base = NULL;
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	ASSERT_EQ(0, umount(dir)) TH_LOG("umount %s: %s", dir, strerror(errno));
	ASSERT_EQ(0, mount(dev, dir, "ext4", 0, NULL))
		TH_LOG("mount %s on %s: %s", dev, dir, strerror(errno));
	self->fd = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("%s after the remount: %s", self->path,
				      strerror(errno));
	for (long p = 0; p < NPAGES; p++) {
		int t = p % c->nthreads;

		ASSERT_EQ((ssize_t)PS, pread(self->fd, page, PS, p * PS));
		uint64_t v = *word_of((char *)page, 0, t);

		if (v != c->last[p] && bad++ < 8)
			TH_LOG("after the remount, page %ld holds %#lx, thread %d wrote %#lx last",
			       p, (unsigned long)v, t,
			       (unsigned long)c->last[p]);
	}
	EXPECT_EQ(0, bad);
	munmap(page, PS);
}

SPF_SCALE_TIMEOUT(shared_write, race)

TEST_HARNESS_MAIN
