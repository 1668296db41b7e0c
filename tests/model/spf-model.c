// SPDX-License-Identifier: GPL-2.0
/*
 * spf-model: the speculative page fault protocol of this series, in user
 * space, at native speed, under AddressSanitizer or ThreadSanitizer.
 *
 * The protocol functions (find_vma_speculative(), vma_speculation_valid(),
 * vma_put(), vma_start_write(), vma_mark_detached(), vma_end_write_all()
 * ...) are the kernel's own, copied out of the patched headers at build time
 * into spf-protocol.h; the VMA tree is the kernel's maple tree, built through
 * the radix-tree test shim on liburcu. Around them the model has:
 *
 *  - readers that fault like handle_speculative_fault(): look the VMA up,
 *    copy it, check the copy, then, like spf_pte_lock(), check again, try
 *    the page table's lock (when it is held: wait, giving up on a mark,
 *    and check again, a few times) and check once more under it before they
 *    install a PTE in the model page table, recording which VMA (id and
 *    generation) it came from and whether it is writable;
 *
 *  - writers that split, merge, unmap, map, change the flags of and zap
 *    ranges under a mutex standing for mmap_lock, marking VMAs where
 *    mm/mmap.c and mm/mprotect.c do, and rewriting or zapping the PTEs of
 *    what they changed under the page table locks afterwards, as
 *    change_protection() and unmap_region() do; and that grow a VMA down
 *    into the hole below it without a mark, as mmap()'s vma_expand()
 *    does, moving vm_start and vm_pgoff between vma_grow_begin() and
 *    vma_grow_end();
 *
 *  - a checker: every PTE a writer rewrites or zaps must carry the label of
 *    the VMA as it was before the change, and at the end of each write
 *    episode every PTE must carry the label of the VMA that covers it now,
 *    be writable only if that VMA is, and hold the page offset that VMA
 *    gives its address (every VMA maps page n at offset n, as anonymous
 *    VMAs do). A PTE installed from a stale or half-grown copy of a VMA
 *    fails one or the other.
 *
 * Usage: see usage() below. Exit status 0: no violation; 1: violations; 2:
 * bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The shim's order (test.h): its maple_tree.h redefines atomic_t. */
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/maple_tree.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <asm/barrier.h>

static const char *prog = "spf-model";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * The kernel's structures, with the fields the protocol uses and the
 * model's own.
 */
#define VM_READ		0x00000001UL
#define VM_WRITE	0x00000002UL

struct rw_semaphore {		/* mmap_lock: only ever taken for write */
	pthread_mutex_t mutex;
	pthread_t owner;
	int state;		/* LOCK_FREE, LOCK_WRITE or LOCK_READ */
};

enum { LOCK_FREE, LOCK_WRITE, LOCK_READ };

struct mm_struct {
	struct maple_tree mm_mt;
	struct rw_semaphore mmap_lock;
	int mm_lock_seq;
	/* vma_start_write() takes it after marking an anonymous VMA */
	spinlock_t page_table_lock;
};

struct vm_area_struct {
	union {
		struct {
			unsigned long vm_start;
			unsigned long vm_end;
		};
		/* As in the kernel (mm/0004): freeing reuses the bounds. */
		struct rcu_head vm_rcu;
	};
	struct mm_struct *vm_mm;
	unsigned long vm_flags;
	const void *vm_ops;	/* NULL: every VMA of the model is anonymous */
	unsigned long vm_pgoff;	/* vm_start's page: see vma_alloc() */
	int vm_lock_seq;
	bool detached;
	u16 vm_bounds_seq;
	/* The model's: what a PTE installed from this VMA records. */
	unsigned int id;
	unsigned int gen;	/* bumped at every change of the VMA */
	unsigned int magic;
};

#define VMA_MAGIC	0x5fa11edU
#define POISON_BYTE	0x6b

_Static_assert(sizeof(struct rcu_head) <= 2 * sizeof(unsigned long),
	       "the rcu_head must fit where vm_start and vm_end are");
_Static_assert(sizeof(struct vm_area_struct) % sizeof(unsigned long) == 0,
	       "copy_vma() copies whole words");

/* The kernel helpers the protocol code uses. */
static bool rwsem_held_write(struct rw_semaphore *sem)
{
	return __atomic_load_n(&sem->state, __ATOMIC_RELAXED) == LOCK_WRITE &&
	       pthread_equal(sem->owner, pthread_self());
}

#undef lockdep_assert_held_write
#define lockdep_assert_held_write(sem)					\
	do {								\
		if (!rwsem_held_write(sem))				\
			die("%s:%d: %s: lock not held for write",	\
			    __FILE__, __LINE__, __func__);		\
	} while (0)
#define mmap_assert_write_locked(mm) lockdep_assert_held_write(&(mm)->mmap_lock)

/* What later versions of the protocol code may use. */
#ifndef data_race
#define data_race(expr) (expr)
#endif
#ifndef smp_mb
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* The debug kernels' abort attribution (DEBUG_SPF_ABORT_WRITERS): off. */
#ifndef IS_ENABLED
#define IS_ENABLED(option) 0
#endif
static inline void vma_init_mark_ip(struct vm_area_struct *vma) { (void)vma; }
static inline void spf_writer_mark(struct vm_area_struct *vma) { (void)vma; }
static inline void spf_writer_abort(struct vm_area_struct *vma, bool busy)
{
	(void)vma;
	(void)busy;
}

#include "spf-protocol.h"

/*
 * ThreadSanitizer: the callbacks of call_rcu() acquire what every reader
 * released in rcu_read_unlock() (include/linux/rcupdate.h) and what the
 * caller of call_rcu() did before.
 */
#ifdef __SANITIZE_THREAD__
char model_rcu_token;

struct tsan_rcu {
	struct rcu_head rh;
	struct rcu_head *head;
	void (*func)(struct rcu_head *head);
};

static void tsan_rcu_callback(struct rcu_head *rh)
{
	struct tsan_rcu *w = caa_container_of(rh, struct tsan_rcu, rh);

	__tsan_acquire(w);
	__tsan_acquire(&model_rcu_token);
	w->func(w->head);
	free(w);
}

/* The suppressions file next to this source (the Makefile says where). */
const char *__tsan_default_options(void)
{
	return "suppressions=" TSAN_SUPPRESSIONS;
}

void model_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *))
{
	struct tsan_rcu *w = malloc(sizeof(*w));

	if (!w)
		die("out of memory");
	w->head = head;
	w->func = func;
	__tsan_release(w);
	urcu_memb_call_rcu(&w->rh, tsan_rcu_callback);
}
#endif

/* The model's address space: pages and page tables. */
#define PAGE_SHIFT_M	12
#define PAGE_SIZE_M	(1UL << PAGE_SHIFT_M)
#define NR_PAGES	512
#define PT_PAGES	32			/* pages per page table */
#define NR_PTS		(NR_PAGES / PT_PAGES)
#define BASE		0x10000000UL
#define MAX_LEN		16			/* pages in a new range */

static inline unsigned long page_addr(unsigned long page)
{
	return BASE + (page << PAGE_SHIFT_M);
}

static inline unsigned long addr_page(unsigned long addr)
{
	return (addr - BASE) >> PAGE_SHIFT_M;
}

struct pte {
	unsigned int id, gen;	/* the VMA the fault used */
	unsigned long pgoff;	/* the page offset its copy gave the address */
	bool present, write;
};

struct page_table {
	pthread_mutex_t ptl;
	struct pte pte[PT_PAGES];
};

static struct mm_struct mm;
static struct page_table pts[NR_PTS];

/* What a PTE from a VMA may carry: the VMA's label and flags. */
struct label {
	unsigned int id, gen;
	unsigned long flags;
};

static struct label label_of(const struct vm_area_struct *vma)
{
	return (struct label){ vma->id, vma->gen, vma->vm_flags };
}

/* Options, counters, violations. */
enum mutation {
	MUTATE_NONE, MUTATE_NO_MARK, MUTATE_NO_RECHECK, MUTATE_PTE_WAIT,
	MUTATE_NO_BOUNDS,
};
static const char *const mutation_names[] = {
	"none", "no-mark", "no-recheck", "pte-wait", "no-bounds",
};

static double opt_seconds = 2;
static unsigned int opt_readers = 4, opt_writers = 2;
static unsigned long opt_seed;
static enum mutation opt_mutate;

enum abort_reason {
	ABORT_NO_VMA,		/* find_vma_speculative(): -ENOENT */
	ABORT_BUSY,		/* find_vma_speculative(): -EBUSY */
	ABORT_CHANGED,		/* the copy's recheck */
	ABORT_GROWING,		/* copied while a growth wrote the bounds */
	ABORT_BOUNDS,		/* the address is outside the copy */
	ABORT_ACCESS,		/* the copy's flags forbid the access */
	ABORT_CHANGED_PTE,	/* spf_pte_lock()'s check before the lock */
	ABORT_PTE_LOCK,		/* spf_pte_lock()'s trylock, after its waits */
	ABORT_CHANGED_WAIT,	/* marked while waiting for the lock */
	ABORT_CHANGED_LOCKED,	/* spf_pte_lock()'s check under the lock */
	NR_ABORTS
};
static const char *const abort_names[] = {
	"no_vma", "busy", "changed", "growing", "bounds", "access", "changed_pte",
	"pte_lock", "changed_wait", "changed_locked",
};

struct counters {
	unsigned long lookups, validations, installs, present, waited;
	unsigned long aborts[NR_ABORTS];
	unsigned long episodes, ops;
};

struct thread {
	pthread_t tid;
	uint64_t rng;
	struct counters c;
};

static int stop;
static unsigned long vmas_freed;
static unsigned long violations;
static struct timespec t_start;
static long first_violation_ns = -1;

static long elapsed_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t_start.tv_sec) * 1000000000L +
	       (t.tv_nsec - t_start.tv_nsec);
}

static void violation(const char *fmt, ...)
{
	unsigned long n = __atomic_add_fetch(&violations, 1, __ATOMIC_RELAXED);
	long none = -1;
	va_list ap;

	__atomic_compare_exchange_n(&first_violation_ns, &none, elapsed_ns(),
				    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	if (n > 5)
		return;
	flockfile(stderr);
	fprintf(stderr, "%s: violation: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

static uint64_t rnd(struct thread *t)
{
	/* xorshift64* */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545f4914f6cdd1dULL;
}

/*
 * Where a fault or a writer could be preempted or interrupted, sometimes
 * give the others time to act: it widens the windows the protocol closes.
 */
static void widen(struct thread *t)
{
	unsigned int r = rnd(t) & 63;

	if (r == 0)
		sched_yield();
	else if (r < 8)
		for (volatile unsigned int i = 0; i < r * 64; i++)
			;
}

static bool stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/* mmap_lock, with the patched mmap_lock.h's calls of vma_end_write_all(). */
static void mmap_write_lock(struct mm_struct *m)
{
	pthread_mutex_lock(&m->mmap_lock.mutex);
	m->mmap_lock.owner = pthread_self();
	__atomic_store_n(&m->mmap_lock.state, LOCK_WRITE, __ATOMIC_RELAXED);
}

static void mmap_write_unlock(struct mm_struct *m)
{
	vma_end_write_all(m);
	__atomic_store_n(&m->mmap_lock.state, LOCK_FREE, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&m->mmap_lock.mutex);
}

static void mmap_write_downgrade(struct mm_struct *m)
{
	vma_end_write_all(m);
	__atomic_store_n(&m->mmap_lock.state, LOCK_READ, __ATOMIC_RELAXED);
}

static void mmap_read_unlock(struct mm_struct *m)
{
	__atomic_store_n(&m->mmap_lock.state, LOCK_FREE, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&m->mmap_lock.mutex);
}

/*
 * The reader: handle_speculative_fault() on the model.
 */

/*
 * spf_fault_on_copy()'s data_race(memcpy()): the writer may be changing
 * the VMA; the recheck of its number says whether the copy is good.
 * Volatile word loads, so that the compiler does not call memcpy(), which
 * ThreadSanitizer would check.
 */
static noinline __attribute__((no_sanitize_thread))
void copy_vma(struct vm_area_struct *dst, const struct vm_area_struct *src)
{
	const volatile unsigned long *s = (const volatile unsigned long *)src;
	unsigned long *d = (unsigned long *)dst;

	for (size_t i = 0; i < sizeof(*src) / sizeof(*s); i++)
		d[i] = s[i];
}

/* spf_pte_map_lock()'s tries of the PTE lock before it gives up. */
#define PTE_LOCK_TRIES 4

static void count_abort(struct thread *t, enum abort_reason why)
{
	t->c.aborts[why]++;
}

/* spf_pte_lock() and the PTE update of do_anonymous_page()/do_wp_page(). */
static void fault_pte(struct thread *t, struct vm_area_struct *vma, int seq,
		      const struct vm_area_struct *copy, unsigned long addr,
		      bool write)
{
	unsigned long page = addr_page(addr);
	struct page_table *pt = &pts[page / PT_PAGES];
	struct pte *pte = &pt->pte[page % PT_PAGES];
	int tries = PTE_LOCK_TRIES;
	bool waited = false;

again:
	if (!vma_speculation_valid(vma, seq)) {
		count_abort(t, ABORT_CHANGED_PTE);
		return;
	}
	widen(t);
	if (pthread_mutex_trylock(&pt->ptl)) {
		/*
		 * spf_pte_lock_wait(): wait for the holder, giving up on a
		 * mark, and start again from the check; the mutation waits
		 * blind and keeps what it checked before.
		 */
		if (!--tries) {
			count_abort(t, ABORT_PTE_LOCK);
			return;
		}
		waited = true;
		if (opt_mutate == MUTATE_PTE_WAIT) {
			pthread_mutex_lock(&pt->ptl);
			goto locked;
		}
		while (pthread_mutex_trylock(&pt->ptl)) {
			if (!vma_speculation_valid(vma, seq)) {
				count_abort(t, ABORT_CHANGED_WAIT);
				return;
			}
			sched_yield();
		}
		/* seen free: let go, as the kernel only looks */
		pthread_mutex_unlock(&pt->ptl);
		goto again;
	}
	if (opt_mutate != MUTATE_NO_RECHECK &&
	    !vma_speculation_valid(vma, seq)) {
		pthread_mutex_unlock(&pt->ptl);
		count_abort(t, ABORT_CHANGED_LOCKED);
		return;
	}
locked:
	t->c.waited += waited;
	if (!pte->present || (write && !pte->write)) {
		/*
		 * A new page, the zero page, or a write-protected page made
		 * writable: what the copy says, as in the kernel.
		 */
		pte->id = copy->id;
		pte->gen = copy->gen;
		pte->pgoff = copy->vm_pgoff +
			     ((addr - copy->vm_start) >> PAGE_SHIFT_M);
		pte->present = true;
		pte->write = write;
		t->c.installs++;
	} else {
		t->c.present++;
	}
	pthread_mutex_unlock(&pt->ptl);
}

static void fault(struct thread *t, unsigned long addr, bool write)
{
	struct vm_area_struct *vma, copy;
	unsigned int bounds;
	int seq;

	t->c.lookups++;
	vma = find_vma_speculative(&mm, addr, &seq);
	if (IS_ERR(vma)) {
		count_abort(t, PTR_ERR(vma) == -EBUSY ? ABORT_BUSY :
							ABORT_NO_VMA);
		return;
	}
	bounds = vma_bounds_read_begin(vma);
	copy_vma(&copy, vma);
	if (!vma_speculation_valid(vma, seq)) {
		count_abort(t, ABORT_CHANGED);
		goto out;
	}
	if (opt_mutate != MUTATE_NO_BOUNDS &&
	    !vma_bounds_read_valid(vma, bounds)) {
		count_abort(t, ABORT_GROWING);
		goto out;
	}
	t->c.validations++;
	if (copy.magic != VMA_MAGIC) {
		violation("a validated copy of VMA %p has magic %#x: the VMA was freed",
			  (void *)vma, copy.magic);
		goto out;
	}
	if (addr < copy.vm_start || addr >= copy.vm_end) {
		count_abort(t, ABORT_BOUNDS);
		goto out;
	}
	if (write ? !(copy.vm_flags & VM_WRITE) :
		    !(copy.vm_flags & (VM_READ | VM_WRITE))) {
		count_abort(t, ABORT_ACCESS);
		goto out;
	}
	/* Allocating and clearing the page. */
	widen(t);
	fault_pte(t, vma, seq, &copy, addr, write);
out:
	vma_put(vma);
}

static void *reader(void *arg)
{
	struct thread *t = arg;

	rcu_register_thread();
	while (!stopped()) {
		uint64_t r = rnd(t);
		unsigned long page = r % NR_PAGES;

		fault(t, page_addr(page) + ((r >> 32) & (PAGE_SIZE_M - 1)),
		      r & (1ULL << 31));
	}
	rcu_unregister_thread();
	return NULL;
}

/*
 * The writers, under mmap_lock. They look VMAs up in the maple tree, which
 * only they change.
 */
static unsigned int last_id;

static struct vm_area_struct *vma_at(unsigned long addr)
{
	MA_STATE(mas, &mm.mm_mt, addr, addr);

	return mas_walk(&mas);
}

static void tree_store(unsigned long start, unsigned long end, void *entry)
{
	MA_STATE(mas, &mm.mm_mt, start, end - 1);

	if (mas_store_gfp(&mas, entry, GFP_KERNEL))
		die("mas_store_gfp() failed");
}

/* vm_area_alloc() or vm_area_dup(): vma_init_lock_seq(), as vma_init(). */
static struct vm_area_struct *vma_alloc(unsigned long start,
					unsigned long end, unsigned long flags)
{
	struct vm_area_struct *vma = calloc(1, sizeof(*vma));

	if (!vma)
		die("out of memory");
	vma->vm_start = start;
	vma->vm_end = end;
	/* As anonymous VMAs: the linear page offset of every address. */
	vma->vm_pgoff = start >> PAGE_SHIFT_M;
	vma->vm_mm = &mm;
	vma->vm_flags = flags;
	vma->id = ++last_id;
	vma->magic = VMA_MAGIC;
	vma_init_lock_seq(vma);
	return vma;
}

static void vma_free_rcu(struct rcu_head *head)
{
	struct vm_area_struct *vma =
		caa_container_of(head, struct vm_area_struct, vm_rcu);

	memset(vma, POISON_BYTE, sizeof(*vma));
	free(vma);
	__atomic_add_fetch(&vmas_freed, 1, __ATOMIC_RELAXED);
}

/*
 * vm_area_free() after mm/0004: through call_rcu(). Poison what a reader
 * that still holds the VMA may copy (not the number and the detached flag
 * it checks), so that acting on a stale copy is loud.
 */
static void vma_free(struct vm_area_struct *vma)
{
	vma->vm_mm = (void *)0x6b6b6b6b6b6b6b6bUL;
	vma->vm_flags = 0x6b6b6b6b6b6b6b6bUL;
	vma->id = vma->gen = vma->magic = 0x6b6b6b6bU;
	call_rcu(&vma->vm_rcu, vma_free_rcu);
}

static const char *flags_name(unsigned long flags)
{
	if (flags & VM_WRITE)
		return (flags & VM_READ) ? "rw" : "w";
	return (flags & VM_READ) ? "r" : "none";
}

/*
 * Whether a present PTE of @page may carry @pte's label and page offset in
 * a VMA labelled @l.
 */
static bool pte_ok(const struct pte *pte, const struct label *l,
		   unsigned long page)
{
	return l && pte->id == l->id && pte->gen == l->gen &&
	       pte->pgoff == page_addr(page) >> PAGE_SHIFT_M &&
	       (l->flags & (VM_READ | VM_WRITE)) &&
	       (!pte->write || (l->flags & VM_WRITE));
}

static void pte_violation(unsigned long page, const struct pte *pte,
			  const struct label *l, const char *when)
{
	const char *kind = pte->write ? "writable" : "read-only";

	if (!l)
		violation("%s: page %lu has a %s PTE from VMA %u gen %u, but no VMA is there",
			  when, page, kind, pte->id, pte->gen);
	else if (pte->pgoff != page_addr(page) >> PAGE_SHIFT_M)
		violation("%s: page %lu has a %s PTE from VMA %u gen %u at page offset %#lx, not %#lx: from a half-grown copy",
			  when, page, kind, pte->id, pte->gen, pte->pgoff,
			  page_addr(page) >> PAGE_SHIFT_M);
	else
		violation("%s: page %lu has a %s PTE from VMA %u gen %u, but the VMA there is %u gen %u (%s)",
			  when, page, kind, pte->id, pte->gen, l->id, l->gen,
			  flags_name(l->flags));
}

/*
 * change_protection() or zap_page_range() on [start, end), after the VMAs
 * were marked: every present PTE must still be what @old allowed; then
 * it takes @vma's label and loses write permission @vma does not give, or
 * is zapped if @vma is NULL or gives no access. @old NULL: a hole, where
 * no PTE may be.
 */
static void rewrite_ptes(struct thread *t, unsigned long start,
			 unsigned long end, const struct label *old,
			 const struct vm_area_struct *vma, const char *what)
{
	unsigned long page = addr_page(start), last = addr_page(end);

	while (page < last) {
		struct page_table *pt = &pts[page / PT_PAGES];
		unsigned long stop_at = (page / PT_PAGES + 1) * PT_PAGES;

		if (stop_at > last)
			stop_at = last;
		pthread_mutex_lock(&pt->ptl);
		for (; page < stop_at; page++) {
			struct pte *pte = &pt->pte[page % PT_PAGES];

			if (!pte->present)
				continue;
			if (!pte_ok(pte, old, page)) {
				char when[64];

				snprintf(when, sizeof(when),
					 "%s, before its PTE update", what);
				pte_violation(page, pte, old, when);
			}
			if (!vma || !(vma->vm_flags & (VM_READ | VM_WRITE))) {
				memset(pte, 0, sizeof(*pte));
				continue;
			}
			pte->id = vma->id;
			pte->gen = vma->gen;
			if (!(vma->vm_flags & VM_WRITE))
				pte->write = false;
		}
		pthread_mutex_unlock(&pt->ptl);
		widen(t);
	}
}

/*
 * The end of a write episode, mmap_lock still held: the tree agrees with
 * the VMAs, and every present PTE with the VMA that covers it now.
 */
static void check_all(const char *when)
{
	static __thread struct label labels[NR_PAGES];
	static __thread bool mapped[NR_PAGES];
	MA_STATE(mas, &mm.mm_mt, 0, 0);
	struct vm_area_struct *vma;

	memset(mapped, 0, sizeof(mapped));
	mas_for_each(&mas, vma, ULONG_MAX) {
		if (vma->magic != VMA_MAGIC || vma->detached ||
		    mas.index != vma->vm_start || mas.last != vma->vm_end - 1)
			die("model bug: tree entry [%#lx, %#lx] holds VMA %p [%#lx, %#lx) magic %#x%s",
			    mas.index, mas.last, (void *)vma, vma->vm_start,
			    vma->vm_end, vma->magic,
			    vma->detached ? ", detached" : "");
		for (unsigned long p = addr_page(vma->vm_start);
		     p < addr_page(vma->vm_end); p++) {
			labels[p] = label_of(vma);
			mapped[p] = true;
		}
	}
	for (unsigned int i = 0; i < NR_PTS; i++) {
		struct page_table *pt = &pts[i];

		pthread_mutex_lock(&pt->ptl);
		for (unsigned int j = 0; j < PT_PAGES; j++) {
			unsigned long page = i * PT_PAGES + j;
			const struct label *l = mapped[page] ? &labels[page] :
							       NULL;

			if (pt->pte[j].present && !pte_ok(&pt->pte[j], l, page))
				pte_violation(page, &pt->pte[j], l, when);
		}
		pthread_mutex_unlock(&pt->ptl);
	}
}

static unsigned long rnd_flags(struct thread *t)
{
	switch (rnd(t) % 8) {
	case 0:
		return 0;
	case 1:
	case 2:
		return VM_READ;
	default:
		return VM_READ | VM_WRITE;
	}
}

/*
 * split_vma() through __vma_adjust(): @vma keeps [vm_start, addr), a new
 * VMA takes [addr, vm_end). Returns the new one.
 */
static struct vm_area_struct *split(struct thread *t,
				    struct vm_area_struct *vma,
				    unsigned long addr)
{
	struct vm_area_struct *new = vma_alloc(addr, vma->vm_end,
					       vma->vm_flags);
	struct label old = label_of(vma);

	vma_start_write(vma);
	vma_start_write(new);
	vma->vm_end = addr;
	vma->gen++;
	tree_store(new->vm_start, new->vm_end, new);
	widen(t);
	rewrite_ptes(t, vma->vm_start, vma->vm_end, &old, vma, "split");
	rewrite_ptes(t, new->vm_start, new->vm_end, &old, new, "split");
	return new;
}

/* mprotect_fixup(): the VMA, or a range split off it, changes flags. */
static bool op_mprotect(struct thread *t)
{
	struct vm_area_struct *vma = vma_at(page_addr(rnd(t) % NR_PAGES));
	unsigned long flags, start, end;
	struct label old;

	if (!vma)
		return false;
	do
		flags = rnd_flags(t);
	while (flags == vma->vm_flags);
	start = vma->vm_start;
	end = vma->vm_end;
	if (rnd(t) & 1) {
		/* A part of it: one or two splits. */
		unsigned long pages = addr_page(end) - addr_page(start);
		unsigned long a = rnd(t) % pages, b = rnd(t) % pages;

		if (a > b) {
			unsigned long x = a;

			a = b;
			b = x;
		}
		start += a * PAGE_SIZE_M;
		end = start + (b - a + 1) * PAGE_SIZE_M;
		if (start > vma->vm_start)
			vma = split(t, vma, start);
		if (end < vma->vm_end)
			split(t, vma, end);
	}
	old = label_of(vma);
	if (opt_mutate != MUTATE_NO_MARK)
		vma_start_write(vma);
	vma->vm_flags = flags;
	vma->gen++;
	widen(t);
	rewrite_ptes(t, vma->vm_start, vma->vm_end, &old, vma, "mprotect");
	return false;
}

/* vma_expand()/__vma_adjust() merging a VMA with the next one. */
static bool op_merge(struct thread *t)
{
	struct vm_area_struct *vma = vma_at(page_addr(rnd(t) % NR_PAGES));
	struct vm_area_struct *next;
	struct label old, old_next;
	unsigned long mid;

	if (!vma || vma->vm_end >= page_addr(NR_PAGES))
		return false;
	next = vma_at(vma->vm_end);
	if (!next || next->vm_flags != vma->vm_flags)
		return false;
	old = label_of(vma);
	old_next = label_of(next);
	mid = vma->vm_end;
	vma_start_write(vma);
	vma_start_write(next);
	vma->vm_end = next->vm_end;
	vma->gen++;
	vma_mark_detached(next);
	tree_store(vma->vm_start, vma->vm_end, vma);
	widen(t);
	rewrite_ptes(t, vma->vm_start, mid, &old, vma, "merge");
	rewrite_ptes(t, mid, vma->vm_end, &old_next, vma, "merge");
	vma_free(next);
	return false;
}

/*
 * vma_merge()/__vma_adjust() growing a VMA into the hole above it (mremap()
 * in place, a mapping merged into it): the VMA is marked; the next one,
 * left as it is, is not, and its faults go on.
 */
static bool op_expand(struct thread *t)
{
	struct vm_area_struct *vma = vma_at(page_addr(rnd(t) % NR_PAGES));
	unsigned long old_end;
	struct label old;

	if (!vma || vma->vm_end >= page_addr(NR_PAGES) || vma_at(vma->vm_end))
		return false;
	old_end = vma->vm_end;
	rewrite_ptes(t, old_end, old_end + PAGE_SIZE_M, NULL, NULL,
		     "expand into a hole");
	old = label_of(vma);
	vma_start_write(vma);
	vma->vm_end = old_end + PAGE_SIZE_M;
	vma->gen++;
	tree_store(vma->vm_start, vma->vm_end, vma);
	widen(t);
	rewrite_ptes(t, vma->vm_start, old_end, &old, vma, "expand");
	return false;
}

/*
 * mmap_region()'s vma_expand() merging a new mapping into the VMA above
 * it, or brk() growing the heap: the VMA grows down into the hole below
 * by a page, unmarked. Its faults go on; a copy taken between the two
 * stores would give every address the next page's offset.
 */
static bool op_grow_down(struct thread *t)
{
	struct vm_area_struct *vma = vma_at(page_addr(rnd(t) % NR_PAGES));
	unsigned long start;
	struct label l;

	if (!vma || vma->vm_start == page_addr(0) ||
	    vma_at(vma->vm_start - PAGE_SIZE_M))
		return false;
	start = vma->vm_start - PAGE_SIZE_M;
	rewrite_ptes(t, start, vma->vm_start, NULL, NULL, "grow into a hole");
	/*
	 * MADV_DONTNEED first (no mark): readers faulting in the VMA during
	 * the growth install PTEs, rather than find them present.
	 */
	l = label_of(vma);
	rewrite_ptes(t, vma->vm_start, vma->vm_end, &l, NULL, "dontneed");
	vma_grow_begin(vma);
	WRITE_ONCE(vma->vm_start, start);
	/*
	 * A window of two stores: held open 100 us every time, or readers
	 * under ThreadSanitizer rarely fault in it within a second.
	 */
	usleep(100);
	WRITE_ONCE(vma->vm_pgoff, vma->vm_pgoff - 1);
	vma_grow_end(vma);
	tree_store(vma->vm_start, vma->vm_end, vma);
	return false;
}

/*
 * do_mas_align_munmap(): split the VMAs at the edges, mark the ones inside
 * detached, unlink them, maybe downgrade mmap_lock, zap, free. Returns
 * whether mmap_lock was downgraded.
 */
static bool op_munmap(struct thread *t)
{
	struct vm_area_struct *vmas[NR_PAGES], *vma;
	struct label old[NR_PAGES];
	unsigned long first = rnd(t) % NR_PAGES;
	unsigned long last = first + 1 + rnd(t) % MAX_LEN;
	unsigned long start, end;
	unsigned int n = 0;
	bool downgrade;

	if (last > NR_PAGES)
		last = NR_PAGES;
	start = page_addr(first);
	end = page_addr(last);
	vma = vma_at(start);
	if (vma && vma->vm_start < start)
		split(t, vma, start);
	vma = vma_at(end - 1);
	if (vma && vma->vm_end > end)
		split(t, vma, end);

	MA_STATE(mas, &mm.mm_mt, start, start);
	mas_for_each(&mas, vma, end - 1) {
		old[n] = label_of(vma);
		vmas[n++] = vma;
	}
	if (!n)
		return false;
	/* Point of no return */
	for (unsigned int i = 0; i < n; i++)
		vma_mark_detached(vmas[i]);
	tree_store(start, end, NULL);
	downgrade = rnd(t) & 1;
	if (downgrade)
		mmap_write_downgrade(&mm);
	widen(t);
	for (unsigned int i = 0; i < n; i++)
		rewrite_ptes(t, vmas[i]->vm_start, vmas[i]->vm_end, &old[i],
			     NULL, "munmap");
	for (unsigned int i = 0; i < n; i++)
		vma_free(vmas[i]);
	return downgrade;
}

/* mmap_region() into a hole: the new VMA is marked before it is linked. */
static bool op_mmap(struct thread *t)
{
	unsigned long page = rnd(t) % NR_PAGES, first, last;
	unsigned long len = 1 + rnd(t) % MAX_LEN;
	struct vm_area_struct *vma;

	/* The first hole from a random page on, if any. */
	for (unsigned int i = 0; vma_at(page_addr(page)); i++) {
		if (i == NR_PAGES)
			return false;
		page = (page + 1) % NR_PAGES;
	}
	first = page;
	last = page + 1;
	while (first > 0 && page - first + 1 < len &&
	       !vma_at(page_addr(first - 1)))
		first--;
	while (last < NR_PAGES && last - first < len &&
	       !vma_at(page_addr(last)))
		last++;
	rewrite_ptes(t, page_addr(first), page_addr(last), NULL, NULL,
		     "mmap into a hole");
	vma = vma_alloc(page_addr(first), page_addr(last), rnd_flags(t));
	vma_start_write(vma);
	tree_store(vma->vm_start, vma->vm_end, vma);
	return false;
}

/* MADV_DONTNEED: zaps under the page table locks and marks nothing. */
static bool op_dontneed(struct thread *t)
{
	unsigned long first = rnd(t) % NR_PAGES;
	unsigned long last = first + 1 + rnd(t) % MAX_LEN;
	struct vm_area_struct *vma;

	if (last > NR_PAGES)
		last = NR_PAGES;
	MA_STATE(mas, &mm.mm_mt, page_addr(first), page_addr(first));
	mas_for_each(&mas, vma, page_addr(last) - 1) {
		struct label l = label_of(vma);
		unsigned long start = vma->vm_start, end = vma->vm_end;

		if (start < page_addr(first))
			start = page_addr(first);
		if (end > page_addr(last))
			end = page_addr(last);
		rewrite_ptes(t, start, end, &l, NULL, "dontneed");
	}
	return false;
}

static void *writer(void *arg)
{
	static bool (*const ops[])(struct thread *) = {
		op_mprotect, op_mprotect, op_mprotect, op_mprotect,
		op_merge, op_merge, op_merge, op_merge,
		op_munmap, op_munmap, op_mmap, op_mmap, op_mmap,
		op_dontneed, op_dontneed, op_expand, op_grow_down,
		op_grow_down,
	};
	struct thread *t = arg;

	rcu_register_thread();
	while (!stopped()) {
		unsigned int n = 1 + rnd(t) % 2;
		bool downgraded = false;

		mmap_write_lock(&mm);
		for (unsigned int i = 0; i < n && !downgraded; i++) {
			downgraded = ops[rnd(t) % ARRAY_SIZE(ops)](t);
			t->c.ops++;
		}
		check_all("end of a write episode");
		if (downgraded)
			mmap_read_unlock(&mm);
		else
			mmap_write_unlock(&mm);
		t->c.episodes++;
		widen(t);
	}
	rcu_unregister_thread();
	return NULL;
}

/* The address space at the start: VMAs of 1 to MAX_LEN pages, holes. */
static void populate(struct thread *t)
{
	unsigned long page = 0;

	mmap_write_lock(&mm);
	while (page < NR_PAGES) {
		unsigned long len = 1 + rnd(t) % MAX_LEN;
		struct vm_area_struct *vma;

		if (page + len > NR_PAGES)
			len = NR_PAGES - page;
		if (rnd(t) % 8) {
			vma = vma_alloc(page_addr(page), page_addr(page + len),
					rnd_flags(t));
			vma_start_write(vma);
			tree_store(vma->vm_start, vma->vm_end, vma);
		}
		page += len;
	}
	mmap_write_unlock(&mm);
}

/* exit_mmap(): no reader is left. */
static void teardown(void)
{
	MA_STATE(mas, &mm.mm_mt, 0, 0);
	struct vm_area_struct *vma;

	mmap_write_lock(&mm);
	mas_for_each(&mas, vma, ULONG_MAX) {
		vma_mark_detached(vma);
		vma_free(vma);
	}
	mmap_write_unlock(&mm);
	mtree_destroy(&mm.mm_mt);
	rcu_barrier();
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [OPTION]...\n"
"Run the speculative page fault protocol (the kernel's own functions from\n"
"the patched headers) with reader threads faulting in a model address space\n"
"and writer threads changing its VMAs, and check that no fault installs a\n"
"PTE from a stale or freed VMA.\n"
"\n"
"  --seconds S      run for S seconds (default 2; fractions allowed)\n"
"  --readers N      reader (fault) threads (default 4)\n"
"  --writers N      writer (mmap_lock holder) threads (default 2)\n"
"  --seed N         seed of the random numbers (default: from the clock)\n"
"  --mutate=M       open a hole the checker must find: no-mark (mprotect does\n"
"                   not vma_start_write() the VMA it changes), no-recheck (no\n"
"                   check under the page table lock), pte-wait (a fault that\n"
"                   waited for the page table lock takes it and checks\n"
"                   nothing again), no-bounds (a fault uses a copy taken\n"
"                   while a growth wrote the bounds), none (default)\n"
"  --help           this text\n"
"\n"
"Prints one line of counts. Exit status: 0 no violation, 1 violations,\n"
"2 bad usage.\n", prog);
}

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static unsigned long parse_ulong(const char *opt, const char *s,
				 unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < min || v > max)
		usage_error("%s: '%s' is not a number from %lu to %lu",
			    opt, s, min, max);
	return v;
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL, *eq;
		char name[32];

		if (!strcmp(arg, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (strncmp(arg, "--", 2) || strlen(arg) >= sizeof(name) + 16)
			usage_error("unknown argument '%s' (see --help)", arg);
		eq = strchr(arg, '=');
		if (eq) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - arg),
				 arg);
			val = eq + 1;
		} else {
			snprintf(name, sizeof(name), "%s", arg);
		}
		if (strcmp(name, "--seconds") && strcmp(name, "--readers") &&
		    strcmp(name, "--writers") && strcmp(name, "--seed") &&
		    strcmp(name, "--mutate"))
			usage_error("unknown option '%s' (see --help)", name);
		if (!val) {
			if (i + 1 >= argc)
				usage_error("%s needs a value", name);
			val = argv[++i];
		}
		if (!strcmp(name, "--seconds")) {
			char *end;

			errno = 0;
			opt_seconds = strtod(val, &end);
			if (!*val || *end || errno || !(opt_seconds > 0) ||
			    opt_seconds > 86400)
				usage_error("--seconds: '%s' is not a number of seconds above 0",
					    val);
		} else if (!strcmp(name, "--readers")) {
			opt_readers = parse_ulong(name, val, 1, 256);
		} else if (!strcmp(name, "--writers")) {
			opt_writers = parse_ulong(name, val, 1, 64);
		} else if (!strcmp(name, "--seed")) {
			opt_seed = parse_ulong(name, val, 0, ULONG_MAX);
		} else {
			unsigned int m;

			for (m = 0; m < ARRAY_SIZE(mutation_names); m++)
				if (!strcmp(val, mutation_names[m]))
					break;
			if (m == ARRAY_SIZE(mutation_names))
				usage_error("--mutate: unknown mutation '%s' (known: none no-mark no-recheck pte-wait no-bounds)",
					    val);
			opt_mutate = m;
		}
	}
}

int main(int argc, char **argv)
{
	unsigned int nthreads;
	struct thread *threads, main_thread;
	struct counters sum = { 0 };
	struct timespec ts;
	bool seeded = false;

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--seed", 6))
			seeded = true;
	parse_args(argc, argv);
	if (!seeded) {
		clock_gettime(CLOCK_REALTIME, &ts);
		opt_seed = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 32);
	}

	maple_tree_init();
	mt_init_flags(&mm.mm_mt, MM_MT_FLAGS);
	pthread_mutex_init(&mm.mmap_lock.mutex, NULL);
	mm_init_lock_seq(&mm);
	for (unsigned int i = 0; i < NR_PTS; i++)
		pthread_mutex_init(&pts[i].ptl, NULL);
	rcu_register_thread();

	main_thread.rng = opt_seed * 2 + 1;
	populate(&main_thread);

	nthreads = opt_readers + opt_writers;
	threads = calloc(nthreads, sizeof(*threads));
	if (!threads)
		die("out of memory");
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	for (unsigned int i = 0; i < nthreads; i++) {
		threads[i].rng = (opt_seed + i + 1) * 0x9e3779b97f4a7c15ULL | 1;
		if (pthread_create(&threads[i].tid, NULL,
				   i < opt_readers ? reader : writer,
				   &threads[i]))
			die("pthread_create failed");
	}
	ts.tv_sec = (time_t)opt_seconds;
	ts.tv_nsec = (long)((opt_seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < nthreads; i++) {
		pthread_join(threads[i].tid, NULL);
		sum.lookups += threads[i].c.lookups;
		sum.validations += threads[i].c.validations;
		sum.installs += threads[i].c.installs;
		sum.present += threads[i].c.present;
		sum.waited += threads[i].c.waited;
		for (unsigned int a = 0; a < NR_ABORTS; a++)
			sum.aborts[a] += threads[i].c.aborts[a];
		sum.episodes += threads[i].c.episodes;
		sum.ops += threads[i].c.ops;
	}

	mmap_write_lock(&mm);
	check_all("after the run");
	mmap_write_unlock(&mm);
	teardown();
	rcu_unregister_thread();

	printf("seconds=%g readers=%u writers=%u seed=%lu mutate=%s lookups=%lu validations=%lu installs=%lu present=%lu waited=%lu",
	       opt_seconds, opt_readers, opt_writers, opt_seed,
	       mutation_names[opt_mutate], sum.lookups, sum.validations,
	       sum.installs, sum.present, sum.waited);
	for (unsigned int a = 0; a < NR_ABORTS; a++)
		printf(" abort_%s=%lu", abort_names[a], sum.aborts[a]);
	printf(" episodes=%lu ops=%lu vmas_freed=%lu violations=%lu\n",
	       sum.episodes, sum.ops,
	       __atomic_load_n(&vmas_freed, __ATOMIC_RELAXED), violations);
	fflush(stdout);
	free(threads);
	if (violations) {
		fprintf(stderr, "%s: %lu violations, the first after %.3f s (seed %lu, mutate=%s)\n",
			prog, violations, first_violation_ns / 1e9, opt_seed,
			mutation_names[opt_mutate]);
		return 1;
	}
	return 0;
}
