/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VMA alone at the start of an empty gigabyte, and a remapper thread
 * that unmaps it and maps it again every few milliseconds: the racer of
 * the window tests of what a speculative fault installs at an empty PMD
 * (a page table, a huge page). munmap() of a VMA alone in its gigabyte
 * frees the PMD table above it too, which is what those installs must not
 * write into.
 */
#ifndef GIGABYTE_VMA_H
#define GIGABYTE_VMA_H

#include "spf_window.h"

struct gigabyte_vma {
	char *b;		/* the VMA, at the start of its gigabyte */
	size_t len;
	int fd;			/* mapped shared from offset 0; -1: anonymous */
	int advice;		/* madvise() on each new mapping, 0 for none */
	bool touch_last;	/* write the last page too after each remap */
	unsigned int pause_us;	/* the remapper's pause between munmap()s */
	char *stack;		/* the remapper's, mapped before the gigabyte */
	pthread_t remapper;
	atomic_int stop;
	atomic_long remaps;
	struct failbox *fb;
};

/*
 * An empty, 1 GiB-aligned gigabyte between two PROT_NONE reservations:
 * munmap() of a VMA there frees the PMD table too. *resv and *resv_len
 * are for the final munmap().
 */
static inline char *reserve_gigabyte(char **resv, size_t *resv_len)
{
	size_t len = 3 * GIB;
	char *r = mmap(NULL, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *g;

	if (r == MAP_FAILED)
		return NULL;
	*resv = r;
	*resv_len = len;
	g = (char *)(((uintptr_t)r + GIB - 1) & ~(GIB - 1));
	return munmap(g, GIB) ? NULL : g;
}

/* Map the VMA at c->b, with c->advice; 0 or -1, the failure in c->fb. */
static inline int gigabyte_vma_map(struct gigabyte_vma *c)
{
	int flags = MAP_FIXED | (c->fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS :
					     MAP_SHARED);

	if (mmap(c->b, c->len, PROT_READ | PROT_WRITE, flags, c->fd, 0) != c->b) {
		fail(c->fb, "mmap() at %p: %s", c->b, strerror(errno));
		return -1;
	}
	if (c->advice && madvise(c->b, c->len, c->advice)) {
		fail(c->fb, "madvise(%d): %s", c->advice, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Touch the word at p: a write in anonymous memory (the VMA's anon_vma),
 * a read in a file, whose PTE stays clean: munmap() flushes the TLB in the
 * middle of its zap for a dirty PTE of a file page (zap_pte_range()'s
 * force_flush), which would wait for a fault that has interrupts off.
 */
static inline int gigabyte_vma_touch(struct gigabyte_vma *c, char *p)
{
	uint64_t v;

	return c->fd < 0 ? probe_write((volatile uint64_t *)p, 1) :
			   probe_read((volatile uint64_t *)p, &v);
}

/*
 * Unmap the VMA and map it again, page 0 touched, and the last page if
 * c->touch_last; 0, or -1 with the failure in c->fb or the signal the
 * touch took in probe_signo.
 */
static inline int gigabyte_vma_remap(struct gigabyte_vma *c)
{
	if (munmap(c->b, c->len)) {
		fail(c->fb, "munmap(): %s", strerror(errno));
		return -1;
	}
	if (gigabyte_vma_map(c) || gigabyte_vma_touch(c, c->b))
		return -1;
	if (!c->touch_last)
		return 0;
	return gigabyte_vma_touch(c, c->b + c->len - PS);
}

static inline void *gigabyte_vma_remapper(void *arg)
{
	struct gigabyte_vma *c = arg;

	if (pin_to_cpu(1))
		fail(c->fb, "remapper: cannot run on CPU 1: %s", strerror(errno));
	while (!atomic_load(&c->stop) && !failed(c->fb)) {
		usleep(c->pause_us);
		if (gigabyte_vma_remap(c)) {
			fail(c->fb, "remapper: page 0 of the new VMA: signal %d",
			     probe_signo);
			break;
		}
		atomic_fetch_add(&c->remaps, 1);
	}
	return NULL;
}

/*
 * The VMA, len bytes mapped with advice, in a gigabyte reserved with
 * *resv and *resv_len (for the final munmap()): anonymous memory for fd
 * -1, else the file fd (at least len bytes long) mapped shared; NULL on
 * failure.
 */
static inline struct gigabyte_vma *
gigabyte_vma_new(size_t len, int fd, int advice, unsigned int pause_us,
		 char **resv, size_t *resv_len)
{
	struct gigabyte_vma *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
				      -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	c->len = len;
	c->fd = fd;
	c->advice = advice;
	c->pause_us = pause_us;
	c->fb = failbox_new();
	c->stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->b = reserve_gigabyte(resv, resv_len);
	if (!c->fb || c->stack == MAP_FAILED || !c->b || gigabyte_vma_map(c))
		return NULL;
	return c;
}

/*
 * Start fn(arg) as *t on c's stack, mapped outside the gigabyte (a stack
 * mapped by pthread_create() could land in it); 0 or -1.
 */
static inline int gigabyte_vma_thread(struct gigabyte_vma *c, pthread_t *t,
				      void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	int err;

	if (pthread_attr_init(&a))
		return -1;
	err = pthread_attr_setstack(&a, c->stack, STACK_SIZE) ||
	      pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return err ? -1 : 0;
}

/* Start the remapper on its own stack, outside the gigabyte; 0 or -1. */
static inline int gigabyte_vma_race(struct gigabyte_vma *c)
{
	atomic_store(&c->stop, 0);
	return gigabyte_vma_thread(c, &c->remapper, gigabyte_vma_remapper, c);
}

static inline void gigabyte_vma_race_end(struct gigabyte_vma *c)
{
	atomic_store(&c->stop, 1);
	pthread_join(c->remapper, NULL);
}

/*
 * Whether c is alone in its gigabyte, as /proc/self/maps says; a mapping
 * beside it would keep munmap() from freeing the PMD table.
 */
static inline bool gigabyte_vma_alone(struct __test_metadata *_metadata,
				      struct gigabyte_vma *c)
{
	uintptr_t g = (uintptr_t)c->b, s, e;
	char line[512];
	bool alone = true;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < g + GIB &&
		    e > g && !(s == g && e == g + c->len)) {
			TH_LOG("another mapping in the VMA's gigabyte: %s", line);
			alone = false;
		}
	fclose(f);
	return alone;
}

static inline void gigabyte_vma_free(struct gigabyte_vma *c)
{
	failbox_free(c->fb);
	munmap(c->stack, STACK_SIZE);
	munmap(c, sizeof(*c));
}

#endif /* GIGABYTE_VMA_H */
