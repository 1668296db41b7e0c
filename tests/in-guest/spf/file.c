// SPDX-License-Identifier: GPL-2.0
/*
 * Read faults on a shared file mapping racing operations that change the
 * file or the mapping.
 *
 * The file is a memfd (tmpfs, whose ->map_pages is filemap_map_pages), or
 * with SPF_FILE_DIR set an unnamed file (O_TMPFILE) in that directory:
 * tests/in-guest/spf-races runs this binary again as file@ext4 on the ext4
 * of qemu/run --ext4, where eviction really drops pages and a fault that
 * misses the page cache reads the block device. It has NPAGES pages, mapped MAP_SHARED and PROT_READ: a read fault on a page
 * that is in the page cache and uptodate can be handled speculatively, by
 * fault-around (up to 16 pages around the fault) without mmap_lock. Every
 * word of page p holds mkval(epoch, 0, p, 0), epoch being the generation
 * of content the main thread wrote there with pwrite(). The threads read
 * their word of every page in passes, page k of each fault-around block
 * (16 pages, 64 KiB aligned) before page k + 1, so that a pass begins
 * with a fault in every block (fault-around maps the rest of the block),
 * and after each pass empty the whole mapping with MADV_DONTNEED (on a
 * shared file mapping it only zaps PTEs; the other threads' zaps make
 * their reads fault too). Zapping each page after its read would fault no
 * more often (the first read of a block maps it all), only spend the time
 * in madvise() and TLB flushes, and scatter the faults that should come
 * together when an operation begins.
 *
 * Each round the main thread runs a fixed sequence of operations, with
 * the threads reading throughout; a phase counter says where it is: 0
 * before the first operation, 2i + 1 while operation i runs, 2i + 2 once
 * it returned. A read loads the phase before and after it: what it
 * returned (a value, SIGBUS, SIGSEGV) must be legal in one of the phases
 * in between. A thread ends its round with a whole pass that began after
 * the last operation returned, so every page is checked in the end state
 * (munmap_close: one thread a round, the others stop at their first
 * SIGSEGV).
 * Values may be torn while pwrite() rewrites a page that is mapped (its
 * copy need not store a word at once): then each byte must be the old
 * word's or the new one's.
 *
 *  truncate: ftruncate() to a random smaller size (pages [lo, NPAGES) are
 *   cut), back to NPAGES pages, and pwrite() of the cut pages with a new
 *   epoch. A cut page reads the old epoch or SIGBUS while the shrink runs;
 *   after it returned, SIGBUS (BUS_ADRERR at the address) until the grow
 *   begins; 0 (a hole) after the grow returned; the new epoch after the
 *   rewrite. No read that began after the shrink returned ever sees the
 *   old epoch: that would be a page that truncation removed, mapped
 *   behind its back.
 *  punch_hole: fallocate(PUNCH_HOLE | KEEP_SIZE) of pages [lo, hi), then
 *   their rewrite with a new epoch: 0 between the punch's return and the
 *   rewrite, never the old epoch after the punch returned.
 *  truncate and punch_hole, one exception: MADV_DONTNEED clears a PTE and
 *   drops the page's mapcount under the page table lock, but flushes the
 *   TLBs only at its end (6.1 delays nothing for clean PTEs). A removal
 *   in between finds the page unmapped, skips the flush, and returns while
 *   another CPU still has the old translation. So a thread may read the
 *   old value when, as its read began, another thread's zap that began
 *   before the operation returned had not returned: such reads are
 *   counted, not failed. A PTE that outlives the removal still fails in
 *   the reads with no such zap running: nearly all of them (the log says
 *   how many were excused).
 *  evict: posix_fadvise(DONTNEED) of the file and "1" to
 *   /proc/sys/vm/drop_caches (when writable): tmpfs keeps its pages,
 *   ext4 drops those that are clean and not mapped (the next fault on
 *   them reads the disk), and the values do not change during the round. drop_caches deactivates
 *   the dirty tmpfs folios it cannot drop, which sets PG_reclaim, alias
 *   PG_readahead, and fault-around skips such folios from then on (every
 *   fault on them would take the classic path): so between rounds the
 *   whole file is punched and rewritten with a new epoch, new folios.
 *  munmap_close: each round maps a new file, with a new epoch, at the
 *   same address, and closes the fd: the mapping holds the last reference,
 *   and munmap() releases the file (its inode is evicted). Reads see this
 *   round's epoch, or SIGSEGV (SEGV_MAPERR) once munmap() has begun, only
 *   SIGSEGV after it returned: never an earlier file's epoch. Every other
 *   round the mapping is alone in its page table, which munmap() frees.
 *  mprotect: mprotect(PROT_NONE) of the whole mapping and back to
 *   PROT_READ: SIGSEGV (SEGV_ACCERR) between the two, values otherwise.
 *  mremap: the mapping moves from slot A to slot B (MREMAP_MAYMOVE |
 *   MREMAP_FIXED) and back; the threads read through A: SIGSEGV
 *   (SEGV_MAPERR) while it is at B, values otherwise.
 *  sigbus_eof: the file is EOF_SHORT pages shorter than the mapping, and
 *   the main thread zaps the whole mapping (MADV_DONTNEED) again and
 *   again: a read past EOF always gets SIGBUS (BUS_ADRERR at the
 *   address), one below it the value.
 */
#include "spf_file.h"

#define NPAGES 64
#define FA_PAGES 16		/* fault-around: 64 KiB */
#define NBLOCKS (NPAGES / FA_PAGES)
#define EOF_SHORT 3		/* sigbus_eof: pages past EOF */
#define MAX_PHASES 7
#define DROP_CACHES "/proc/sys/vm/drop_caches"

enum op {
	OP_TRUNCATE, OP_PUNCH_HOLE, OP_EVICT, OP_MUNMAP_CLOSE, OP_MPROTECT,
	OP_MREMAP, OP_SIGBUS_EOF,
};

static const struct {
	int nops;			/* operations per round */
	const char *phase[MAX_PHASES];	/* 2 * nops + 1 */
} ops[] = {
	[OP_TRUNCATE] = { 3, { "before the shrink", "shrink running",
		"shrunk", "grow running", "grown", "rewrite running",
		"rewritten" } },
	[OP_PUNCH_HOLE] = { 2, { "before the punch", "punch running",
		"punched", "rewrite running", "rewritten" } },
	[OP_EVICT] = { 2, { "before", "fadvise running", "fadvised",
		"drop_caches running", "dropped" } },
	[OP_MUNMAP_CLOSE] = { 1, { "mapped", "munmap running",
		"unmapped" } },
	[OP_MPROTECT] = { 2, { "PROT_READ", "PROT_NONE running",
		"PROT_NONE", "PROT_READ running", "PROT_READ again" } },
	[OP_MREMAP] = { 2, { "at A", "move to B running", "at B",
		"move to A running", "at A again" } },
	[OP_SIGBUS_EOF] = { 2, { "before", "zap running", "zapped",
		"zap running", "zapped again" } },
};

struct ctx {
	enum op op;
	int nthreads;
	int fd;			/* -1 once closed (munmap_close) */
	char *base;		/* where the threads read (mremap: slot A) */
	char *other;		/* mremap: slot B */
	char *pmd;		/* munmap_close: the 2 MiB around base */
	size_t len;
	bool drop_caches;	/* evict: drop_caches is writable */
	uint64_t seed;
	struct rounds rs;	/* progress: reads since the last operation */
	/* set for each round while the threads wait at the barrier */
	long lo, hi;		/* the pages cut, punched, or past EOF */
	unsigned long ep[NPAGES];	/* each page's epoch at round start */
	unsigned long enew;	/* the epoch the round writes */
	atomic_int phase;
	atomic_long reads, checked, torn, sigbus, sigsegv, strict;
	atomic_long unflushed;	/* old values excused by a zap in flight */
	/* the phase when thread t's MADV_DONTNEED began; -1 outside it */
	atomic_int zap_from[MAX_THREADS];
	uint64_t *buf;		/* pwrite()'s source: NPAGES pages */
	struct failbox *fb;
};

/*
 * munmap_close, mprotect and mremap mark the VMA they change: a fault
 * they overlap gives up with one of these.
 */
static const char *const vma_race_counters[] = {
	"spf_abort_vma_changed", "spf_abort_vma_busy", "spf_abort_pmd_changed",
	NULL,
};

static bool vma_race(enum op op)
{
	return op == OP_MUNMAP_CLOSE || op == OP_MPROTECT || op == OP_MREMAP;
}

/* What a read did. */
enum { R_VAL, R_BUS, R_MAPERR, R_ACCERR, R_OTHER };
struct res {
	int kind;
	uint64_t x;		/* R_VAL */
	int signo, code;	/* the others */
	void *addr;
};

static bool is_val(const struct res *o, uint64_t v)
{
	return o->kind == R_VAL && o->x == v;
}

/* A word pwrite() rewrites from a to b: each byte one or the other. */
static bool is_mix(const struct res *o, uint64_t a, uint64_t b)
{
	if (o->kind != R_VAL)
		return false;
	for (int i = 0; i < 64; i += 8) {
		uint64_t m = 0xffULL << i;

		if ((o->x & m) != (a & m) && (o->x & m) != (b & m))
			return false;
	}
	return true;
}

/* Is o legal for a read of page p in phase ph of the round? */
static bool legal(const struct ctx *c, int ph, long p, const struct res *o)
{
	uint64_t old = pval(c->ep[p], p), nw = pval(c->enew, p);
	bool in = p >= c->lo && p < c->hi;
	int k = o->kind;

	switch (c->op) {
	case OP_TRUNCATE:
		if (!in)
			return is_val(o, old);
		switch (ph) {
		case 0:
			return is_val(o, old);
		case 1:
			return is_val(o, old) || k == R_BUS;
		case 2:
			return k == R_BUS;
		case 3:
			return k == R_BUS || is_val(o, 0);
		case 4:
			return is_val(o, 0);
		case 5:
			return is_mix(o, 0, nw);
		default:
			return is_val(o, nw);
		}
	case OP_PUNCH_HOLE:
		if (!in)
			return is_val(o, old);
		switch (ph) {
		case 0:
			return is_val(o, old);
		case 1:
			return is_val(o, old) || is_val(o, 0);
		case 2:
			return is_val(o, 0);
		case 3:
			return is_mix(o, 0, nw);
		default:
			return is_val(o, nw);
		}
	case OP_EVICT:
		return is_val(o, old);
	case OP_MUNMAP_CLOSE:
		return (ph < 2 && is_val(o, old)) || (ph >= 1 && k == R_MAPERR);
	case OP_MPROTECT:
		return (ph != 2 && is_val(o, old)) ||
		       (ph >= 1 && ph <= 3 && k == R_ACCERR);
	case OP_MREMAP:
		return (ph != 2 && is_val(o, old)) ||
		       (ph >= 1 && ph <= 3 && k == R_MAPERR);
	case OP_SIGBUS_EOF:
		return in ? k == R_BUS : is_val(o, old);
	}
	return false;
}

static void res_str(const struct res *o, char *buf, size_t len)
{
	if (o->kind == R_VAL)
		snprintf(buf, len, "%#lx (epoch %lu page %ld)",
			 (unsigned long)o->x, val_epoch(o->x), val_page(o->x));
	else
		snprintf(buf, len, "%s code %d at %p",
			 o->signo == SIGBUS ? "SIGBUS" :
			 o->signo == SIGSEGV ? "SIGSEGV" : "signal",
			 o->code, o->addr);
}

/* One 64-bit entry of a /proc file indexed by page or pfn; 0 if unreadable. */
static uint64_t proc_u64(const char *path, uint64_t index)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &v, sizeof(v), index * sizeof(v)) != sizeof(v))
			v = 0;
		close(fd);
	}
	return v;
}

/*
 * A read after the punch or the shrink saw the old value: say what maps
 * the word now (pagemap: present, pfn; kpageflags, kpagecount of that
 * pfn), what a second read and the file itself return. pagemap shows
 * the page table, not this CPU's TLB: a second read of the old value
 * with no PTE, or with a PTE another thread's refault made, is a stale
 * TLB entry; only a PTE to a page the file no longer holds is a stale
 * mapping.
 */
static void stale_diag(struct ctx *c, int t, long p, volatile uint64_t *w)
{
	uint64_t pm = proc_u64("/proc/self/pagemap",
			       (uintptr_t)w / PS), pfn = pm & ((1ULL << 55) - 1);
	uint64_t again = 0, infile = 0;
	bool present = pm >> 63;
	int sig = probe_read(w, &again) ? probe_signo : 0;

	if (c->fd >= 0 &&
	    pread(c->fd, &infile, sizeof(infile),
		  (char *)w - c->base) != sizeof(infile))
		infile = ~0ULL;
	fail(c->fb, "thread %d page %ld then: pte %s pfn %#lx kpageflags %#lx kpagecount %lu; read again %#lx (signal %d); the file holds %#lx; phase %d",
	     t, p, present ? "present" : "none", (unsigned long)pfn,
	     present && pfn ? (unsigned long)proc_u64("/proc/kpageflags", pfn) : 0UL,
	     present && pfn ? (unsigned long)proc_u64("/proc/kpagecount", pfn) : 0UL,
	     (unsigned long)again, sig, (unsigned long)infile,
	     atomic_load(&c->phase));
}

/*
 * truncate, punch_hole: is a zap of another thread running that began
 * before the removal (operation 0) returned? Its unflushed TLB entries
 * may still translate to a page the removal took out (see the top).
 */
static bool zap_unflushed(struct ctx *c, int t)
{
	if (c->op != OP_TRUNCATE && c->op != OP_PUNCH_HOLE)
		return false;
	for (int u = 0; u < c->nthreads; u++) {
		int from = atomic_load(&c->zap_from[u]);

		if (u != t && from >= 0 && from < 2)
			return true;
	}
	return false;
}

/*
 * Read thread t's word of page p and check it. True when the read faulted
 * and no more reads are needed until the end state: it began there (the
 * pass that checks the end state may as well begin now), or the mapping
 * is gone (munmap_close: munmap() has begun, the VMA is out of the tree,
 * and the rest of munmap(), with the release of the file, is no race).
 */
static bool read_page(struct ctx *c, int t, long p)
{
	volatile uint64_t *w = word_of(c->base, p, t);
	struct res o = { .kind = R_VAL }, stale;
	bool ok = false, strict = true, unflushed = zap_unflushed(c, t);
	int a, b;

	a = atomic_load(&c->phase);
	if (probe_read(w, &o.x)) {
		o.x = 0;
		o.signo = probe_signo;
		o.code = probe_code;
		o.addr = probe_addr;
		if (o.addr != (void *)w)
			o.kind = R_OTHER;
		else if (o.signo == SIGBUS && o.code == BUS_ADRERR)
			o.kind = R_BUS;
		else if (o.signo == SIGSEGV && o.code == SEGV_MAPERR)
			o.kind = R_MAPERR;
		else if (o.signo == SIGSEGV && o.code == SEGV_ACCERR)
			o.kind = R_ACCERR;
		else
			o.kind = R_OTHER;
	}
	b = atomic_load(&c->phase);

	/* legal in some phase it overlapped; would the old value have been? */
	stale = (struct res){ .kind = R_VAL, .x = pval(c->ep[p], p) };
	for (int ph = a; ph <= b; ph++) {
		ok = ok || legal(c, ph, p, &o);
		strict = strict && !legal(c, ph, p, &stale);
	}
	if (!ok && unflushed && o.kind == R_VAL && o.x == stale.x) {
		ok = true;
		atomic_fetch_add(&c->unflushed, 1);
	}
	atomic_fetch_add(&c->reads, 1);
	if (strict && !unflushed)
		atomic_fetch_add(&c->strict, 1);
	if (o.kind == R_VAL) {
		atomic_fetch_add(&c->checked, 1);
		if (ok && o.x != stale.x && o.x != pval(c->enew, p) && o.x)
			atomic_fetch_add(&c->torn, 1);
	} else if (o.signo == SIGBUS) {
		atomic_fetch_add(&c->sigbus, 1);
	} else {
		atomic_fetch_add(&c->sigsegv, 1);
	}
	if (!ok) {
		char got[96];

		res_str(&o, got, sizeof(got));
		fail(c->fb, "round %d thread %d page %ld (%s %ld-%ld, epoch %lu, new %lu): read of %p from \"%s\" to \"%s\": %s",
		     atomic_load(&c->rs.round), t, p,
		     c->op == OP_TRUNCATE ? "cut" :
		     c->op == OP_PUNCH_HOLE ? "hole" :
		     c->op == OP_SIGBUS_EOF ? "past EOF" : "range",
		     c->lo, c->hi - 1, c->ep[p], c->enew,
		     (void *)w, ops[c->op].phase[a], ops[c->op].phase[b], got);
		if (o.kind == R_VAL && o.x == stale.x)
			stale_diag(c, t, p, w);
	}
	atomic_fetch_add(&c->rs.progress, 1);
	return o.kind != R_VAL &&
	       (a == 2 * ops[c->op].nops || c->op == OP_MUNMAP_CLOSE);
}

/*
 * Empty the mapping, so that the next reads fault. An error where nothing
 * is mapped (munmap_close, mremap) is fine.
 */
static void zap_all(struct ctx *c, int t)
{
	atomic_store(&c->zap_from[t], atomic_load(&c->phase));
	madvise(c->base, c->len, MADV_DONTNEED);
	atomic_store(&c->zap_from[t], -1);
}

static void *reader(void *arg)
{
	struct team_arg *a = arg;
	struct ctx *c = a->c;
	int t = a->id;
	uint64_t seed = (c->seed ^ (0x9e3779b97f4a7c15ULL * (t + 1))) | 1;
	int r;

	while ((r = rounds_next(&c->rs)) >= 0) {
		bool last = false;

		while (!last && !failed(c->fb)) {
			long p0 = rnd(&seed) % NPAGES;

			/* a pass that begins after the last operation checks the end */
			last = atomic_load(&c->phase) == 2 * ops[c->op].nops;
			/*
			 * munmap_close: every read there faults, and a stale
			 * PTE would show in any thread's word of its page:
			 * one thread a round checks the end state.
			 */
			if (last && c->op == OP_MUNMAP_CLOSE &&
			    t != r % c->nthreads)
				break;
			for (long i = 0; i < NPAGES && !failed(c->fb); i++) {
				/* page i / NBLOCKS of block i % NBLOCKS */
				long p = (p0 + (i % NBLOCKS) * FA_PAGES +
					  i / NBLOCKS) % NPAGES;
				bool ended = read_page(c, t, p);

				if (i == NPAGES - 1 || ended)
					zap_all(c, t);
				/* no more SIGSEGVs than needed */
				if (ended && !last) {
					while (atomic_load(&c->phase) !=
					       2 * ops[c->op].nops &&
					       !failed(c->fb))
						sched_yield();
					break;
				}
			}
			sched_yield();
		}
		rounds_end(&c->rs);
	}
	return NULL;
}

static int drop_caches(void)
{
	int fd = open(DROP_CACHES, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, "1\n", 2) != 2)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

/* munmap_close: a new file with epoch e at c->base, its fd closed. */
static int map_new_file(struct ctx *c, unsigned long e)
{
	char *p;
	int err;

	c->fd = new_test_file("spf-file");
	if (c->fd < 0)
		return errno;
	err = write_file_pages(c->fd, c->buf, 0, NPAGES, e);
	if (!err) {
		p = mmap(c->base, c->len, PROT_READ,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, c->fd, 0);
		if (p == MAP_FAILED)
			err = errno;
		else if (p != c->base) {
			munmap(p, c->len);
			err = EEXIST;
		}
	}
	close(c->fd);
	c->fd = -1;
	for (long q = 0; q < NPAGES; q++)
		c->ep[q] = e;
	return err;
}

/*
 * munmap_close: make room for round r's mapping in the middle of the
 * reserved 2 MiB, alone in it on even rounds, so that munmap() frees the
 * page table under the faults, and between PROT_NONE reservations on odd
 * ones, so that the page table stays and even the first faults on the new
 * mapping are speculative (speculation never allocates a page table).
 */
static int open_hole(struct ctx *c, int r)
{
	if (r % 2 == 0)
		return munmap(c->pmd, PMD_SIZE_) ? errno : 0;
	if (re_reserve(c->pmd, PMD_SIZE_))
		return errno;
	return munmap(c->base, c->len) ? errno : 0;
}

/* Operation i of the round. 0 or an errno. */
static int do_op(struct ctx *c, int i)
{
	char *from, *to, *p;

	switch (c->op) {
	case OP_TRUNCATE:
		if (i == 0)
			return ftruncate(c->fd, c->lo * PS) ? errno : 0;
		if (i == 1)
			return ftruncate(c->fd, NPAGES * PS) ? errno : 0;
		return write_file_pages(c->fd, c->buf, c->lo, c->hi, c->enew);
	case OP_PUNCH_HOLE:
		if (i == 0)
			return fallocate(c->fd, FALLOC_FL_PUNCH_HOLE |
					 FALLOC_FL_KEEP_SIZE, c->lo * PS,
					 (c->hi - c->lo) * PS) ? errno : 0;
		return write_file_pages(c->fd, c->buf, c->lo, c->hi, c->enew);
	case OP_EVICT:
		if (i == 0)
			return posix_fadvise(c->fd, 0, 0, POSIX_FADV_DONTNEED);
		return c->drop_caches ? drop_caches() : 0;
	case OP_MUNMAP_CLOSE:
		return munmap(c->base, c->len) ? errno : 0;
	case OP_MPROTECT:
		return mprotect(c->base, c->len, i ? PROT_READ : PROT_NONE) ?
		       errno : 0;
	case OP_MREMAP:
		from = i ? c->other : c->base;
		to = i ? c->base : c->other;
		p = mremap(from, c->len, c->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   to);
		return p == MAP_FAILED ? errno : p != to ? EFAULT : 0;
	case OP_SIGBUS_EOF:
		return madvise(c->base, c->len, MADV_DONTNEED) ? errno : 0;
	}
	return EINVAL;
}

FIXTURE(file) {
	struct ctx *c;
	char *resv;
	size_t resv_len;
};

FIXTURE_VARIANT(file) {
	enum op op;
};

FIXTURE_VARIANT_ADD(file, truncate) {
	.op = OP_TRUNCATE,
};

FIXTURE_VARIANT_ADD(file, punch_hole) {
	.op = OP_PUNCH_HOLE,
};

FIXTURE_VARIANT_ADD(file, evict) {
	.op = OP_EVICT,
};

FIXTURE_VARIANT_ADD(file, munmap_close) {
	.op = OP_MUNMAP_CLOSE,
};

FIXTURE_VARIANT_ADD(file, mprotect) {
	.op = OP_MPROTECT,
};

FIXTURE_VARIANT_ADD(file, mremap) {
	.op = OP_MREMAP,
};

FIXTURE_VARIANT_ADD(file, sigbus_eof) {
	.op = OP_SIGBUS_EOF,
};

FIXTURE_SETUP(file)
{
	ASSERT_EQ(0, probe_install());
}

FIXTURE_TEARDOWN(file)
{
	struct ctx *c = self->c;

	if (self->resv)
		munmap(self->resv, self->resv_len);
	if (!c)
		return;
	if (!self->resv && c->base)
		munmap(c->base, c->len);
	if (c->fd >= 0)
		close(c->fd);
	if (c->buf)
		munmap(c->buf, NPAGES * PS);
	failbox_free(c->fb);
	munmap(c, sizeof(*c));
}

TEST_F_TIMEOUT(file, race, SPF_TIMEOUT)
{
	struct ctx *c;
	uint64_t seed0 = test_seed(), seed = seed0;
	double end = now_s() + test_seconds();
	double race_grace = 4 * test_seconds() > 16 ? 4 * test_seconds() : 16;
	unsigned long epoch = 1;
	long rounds = 0, size;
	char *hole = NULL;

	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	self->c = c;
	c->fd = -1;
	c->op = variant->op;
	c->nthreads = test_threads();
	c->len = NPAGES * PS;
	c->seed = seed0;
	c->fb = failbox_new();
	ASSERT_NE(NULL, c->fb);
	c->buf = mmap(NULL, NPAGES * PS, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c->buf);
	atomic_init(&c->phase, 0);
	for (int t = 0; t < MAX_THREADS; t++)
		atomic_init(&c->zap_from[t], -1);
	for (long p = 0; p < NPAGES; p++)
		c->ep[p] = epoch;

	if (c->op == OP_MUNMAP_CLOSE || c->op == OP_MREMAP) {
		/* munmap_close: one 2 MiB; mremap: slots A and B, 2 MiB apart */
		hole = reserve_pmds(c->op == OP_MREMAP ? 2 : 1, &self->resv,
				    &self->resv_len);
		ASSERT_NE(NULL, hole);
		c->base = hole;
		c->other = hole + PMD_SIZE_;
		if (c->op == OP_MUNMAP_CLOSE) {
			c->pmd = hole;
			c->base = hole + PMD_SIZE_ / 2;
		}
	}
	if (c->op != OP_MUNMAP_CLOSE) {
		c->fd = new_test_file("spf-file");
		ASSERT_LE(0, c->fd) TH_LOG("a new file (SPF_FILE_DIR=%s): %s",
					   getenv("SPF_FILE_DIR") ?: "", strerror(errno));
		size = c->op == OP_SIGBUS_EOF ? NPAGES - EOF_SHORT : NPAGES;
		ASSERT_EQ(0, write_file_pages(c->fd, c->buf, 0, size, epoch));
		c->base = mmap(c->base, c->len, PROT_READ, MAP_SHARED |
			       (c->base ? MAP_FIXED : 0), c->fd, 0);
		ASSERT_NE(MAP_FAILED, c->base) {
			c->base = NULL;
			TH_LOG("mmap: %s", strerror(errno));
		}
	}
	if (c->op == OP_SIGBUS_EOF) {
		c->lo = NPAGES - EOF_SHORT;
		c->hi = NPAGES;
	}
	if (c->op == OP_EVICT) {
		int err = drop_caches();

		c->drop_caches = !err;
		if (err)
			TH_LOG("cannot write %s: %s; posix_fadvise() only",
			       DROP_CACHES, strerror(err));
	}

	SPF_BEGIN_FILE(spf0);
	prefault_stack();
	ASSERT_EQ(0, rounds_start(&c->rs, c->nthreads, reader, c));
	if (c->op == OP_MUNMAP_CLOSE) {
		/*
		 * Open the hole once the threads' stacks are mapped (outside
		 * the reservation). Only the main thread maps anything from
		 * now on, while the threads wait for the next round.
		 */
		ASSERT_EQ(0, open_hole(c, 0));
		ASSERT_EQ(0, map_new_file(c, epoch));
	}

	for (int r = 0; ; r++) {
		int err;

		switch (c->op) {
		case OP_TRUNCATE:
			c->lo = rnd(&seed) % NPAGES;
			c->hi = NPAGES;
			c->enew = ++epoch;
			break;
		case OP_PUNCH_HOLE:
			rnd_range(&seed, NPAGES, &c->lo, &c->hi);
			c->enew = ++epoch;
			break;
		default:
			c->enew = epoch;
			break;
		}
		atomic_store(&c->phase, 0);
		rounds_release(&c->rs, r);
		for (int i = 0; i < ops[c->op].nops; i++) {
			/*
			 * Somewhere in the threads' passes, or, half of the
			 * time, within the first reads: the first read of a
			 * block faults, and after the barrier (munmap_close:
			 * a new mapping) or an operation they all fault.
			 */
			wait_progress(&c->rs.progress, rnd(&seed) % 2 ?
				      rnd(&seed) % (NPAGES * c->nthreads / 2) :
				      rnd(&seed) % c->nthreads, end + 1);
			atomic_fetch_add(&c->phase, 1);
			err = do_op(c, i);
			atomic_fetch_add(&c->phase, 1);
			atomic_store(&c->rs.progress, 0);
			if (err)
				fail(c->fb, "round %d: operation %d (\"%s\"): %s",
				     r, i, ops[c->op].phase[2 * i + 1],
				     strerror(err));
		}
		rounds_wait(&c->rs);
		rounds++;
		if (c->op == OP_TRUNCATE || c->op == OP_PUNCH_HOLE)
			for (long p = c->lo; p < c->hi; p++)
				c->ep[p] = c->enew;
		if (failed(c->fb))
			break;
		/*
		 * The VMA changers go on until a fault they overlapped is
		 * counted, for at most 16 s or four times their time more:
		 * munmap_close counts none in its first two seconds in about
		 * one run of three on a busy host (within the harness's
		 * timeout, 90 s + 4 x SPF_TEST_SECONDS).
		 */
		if (now_s() > end &&
		    (!vma_race(c->op) || now_s() > end + race_grace ||
		     !spf_run_race_pending(&spf0, vma_race_counters)))
			break;
		if (c->op == OP_EVICT) {
			err = fallocate(c->fd, FALLOC_FL_PUNCH_HOLE |
					FALLOC_FL_KEEP_SIZE, 0, c->len) ?
			      errno : write_file_pages(c->fd, c->buf, 0, NPAGES, ++epoch);
			if (err) {
				fail(c->fb, "round %d: new folios: %s", r + 1,
				     strerror(err));
				break;
			}
			for (long p = 0; p < NPAGES; p++)
				c->ep[p] = epoch;
		}
		if (c->op == OP_MUNMAP_CLOSE) {
			err = open_hole(c, r + 1);
			if (!err)
				err = map_new_file(c, ++epoch);
			if (err) {
				fail(c->fb, "round %d: a new file at %p: %s",
				     r + 1, (void *)c->base, strerror(err));
				break;
			}
		}
		/* keep B from other mappings: the next move's target */
		if (c->op == OP_MREMAP && re_reserve(c->other, c->len)) {
			fail(c->fb, "round %d: mmap(PROT_NONE) at %p: %s", r,
			     (void *)c->other, strerror(errno));
			break;
		}
	}
	rounds_stop(&c->rs);
	/*
	 * The data checks first: on a kernel without spf counters the test
	 * ends as a skip, unless it failed already.
	 */
	TH_LOG("%ld rounds, %ld reads: %ld values checked (%ld torn by pwrite(), %ld old through an unflushed zap), %ld SIGBUS, %ld SIGSEGV; %ld reads an old value would have failed; seed %#lx",
	       rounds, atomic_load(&c->reads), atomic_load(&c->checked),
	       atomic_load(&c->torn), atomic_load(&c->unflushed),
	       atomic_load(&c->sigbus), atomic_load(&c->sigsegv),
	       atomic_load(&c->strict), (unsigned long)seed0);
	failbox_report(c->fb);
	EXPECT_EQ(0, failed(c->fb));
	EXPECT_LT(0, rounds);
	/* every test but evict has reads that only the new state allows */
	if (c->op != OP_EVICT)
		EXPECT_LT(0, atomic_load(&c->strict));
	if (c->op == OP_SIGBUS_EOF)
		EXPECT_LT(0, atomic_load(&c->sigbus));
	/*
	 * truncate, punch_hole, evict and sigbus_eof mark no VMA (see
	 * dontneed.c): truncation and hole punching zap the file's mappings
	 * through its i_mmap tree under the page table locks and take the
	 * pages out of the page cache, eviction leaves tmpfs pages alone,
	 * MADV_DONTNEED zaps under the page table locks. A fault they
	 * overtake finds the page gone or locked (spf_abort_file_miss, which
	 * any miss moves) or its PTE changed under the lock (a success): no
	 * counter is the race's own. The reads that had to be SIGBUS, 0 or
	 * the new epoch show the race. munmap_close, mprotect and mremap
	 * mark the VMA they change.
	 */
	spf_run_end(_metadata, &spf0, vma_race(c->op) ? vma_race_counters : NULL);
}

SPF_SCALE_TIMEOUT(file, race)

TEST_HARNESS_MAIN
