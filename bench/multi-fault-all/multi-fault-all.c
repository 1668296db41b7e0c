// SPDX-License-Identifier: GPL-2.0
/*
 * multi-fault-all: page-fault scalability benchmark.
 *
 * A rewrite of KAMEZAWA Hiroyuki's 2010 multi-fault-all.c test. N threads,
 * each pinned to its own CPU (round-robin when there are more threads than
 * CPUs, with a warning), fault on their own slot of one anonymous
 * private mapping. Each round every thread writes one byte to every page of
 * its slot, then the pages are dropped with MADV_DONTNEED so the next round
 * faults them again. The fault path is exercised concurrently from many
 * CPUs on one mm, which is what serialises on mmap_lock. A first round,
 * not measured, warms up, as will-it-scale does: it also allocates the
 * page tables, which MADV_DONTNEED leaves to the later rounds.
 *
 * The mapping may instead be shared, or of a file (a memfd, or an unlinked
 * file in a given directory) whose slots are written before the run, and
 * the threads may read a byte of every page instead of writing it: read
 * faults on cached file pages, which fault-around maps up to 16 at a time.
 *
 * Optional modes: every thread zaps its own slot instead of one thread
 * zapping all (--madvise=each), one VMA per thread (--vma-per-thread), THP
 * allowed (--thp), slots unmapped and mapped again instead of zapped, so
 * that every round allocates page tables (--fresh), threads that map, touch
 * and unmap chunks where the kernel places them, as ebizzy -m does
 * (--churn), and an extra thread taking mmap_lock for write in a loop
 * (--writer), or, to tell what a second busy CPU costs by itself, an extra
 * thread that only spins in user space (--busy); --backing, --shared and
 * --access choose the mapping and the access.
 *
 * Output: one line in words, one "CONFIG key=value ..." line with the
 * configuration, then one "RESULT key=value ..." line (the configuration
 * again, for readers older than the CONFIG line, and the outcome); on
 * stderr, one line at the start saying what runs, and a warning when the
 * threads outnumber the CPUs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
#include <linux/kvm.h>
#include <linux/mempolicy.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PROG			"multi-fault-all"

/* A PMD maps 2 MiB on x86-64: one PTE page table covers that much. */
#define PMD_BYTES		(2UL << 20)
/* The seed's slot stride: keeps threads off each other's page tables. */
#define MIN_SLOT_STRIDE		(8UL << 20)
#define DEFAULT_FAULT_LENGTH	(2UL << 20)
#define MAX_FAULT_LENGTH	(1UL << 30)
#define DEFAULT_SECONDS		60.0
#define MAX_SECONDS		1e6
#define MAX_THREADS		1024
/* The writer's region, in pages, and its PROT_NONE guard on each side. */
#define WRITER_PAGES		4
#define WRITER_GUARD_PAGES	1
/* Loop turns between two looks at the stop flag of the busy thread. */
#define BUSY_SPINS		(1UL << 16)
/* The buffer that fills a file backing before the run, a page at a time. */
#define FILL_BYTES		(64UL << 10)

enum madvise_mode { MADVISE_SERIAL, MADVISE_EACH };
/* What the slots map: anonymous memory, a memfd, a file in a directory. */
enum backing { BACKING_ANON, BACKING_MEMFD, BACKING_DIR };
enum access_mode { ACCESS_WRITE, ACCESS_READ };

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#endif

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

struct config {
	unsigned int nthreads;		/* fault threads */
	size_t fault_length;		/* bytes each thread faults per round */
	double seconds;			/* how long to run */
	enum madvise_mode madvise;
	bool vma_per_thread;
	bool thp;
	bool writer;
	bool busy;
	bool strict_cpus;		/* refuse more threads than CPUs */
	enum backing backing;
	const char *dir;		/* BACKING_DIR: where the file is made */
	bool shared;			/* MAP_SHARED rather than MAP_PRIVATE */
	enum access_mode access;
	bool pageout;			/* MADV_PAGEOUT rather than MADV_DONTNEED */
	bool swapcache;			/* and MADV_WILLNEED after it */
	bool fresh;			/* munmap and mmap again, not zap */
	bool wrprotect;			/* mprotect read-only and back, not zap */
	bool churn;			/* a new chunk each round, kernel-placed */
	bool random_length;		/* --churn: chunks of 1 page to fault_length */
	bool touch_first;		/* --churn, --fresh: only the first page */
	bool mmu_notifier;		/* register one on the mm first */
	bool mbind;			/* a memory policy of the slots' own */
};

/* One fault thread. Aligned so results written at the end share no line. */
struct worker {
	pthread_t tid;
	struct bench *bench;
	unsigned int idx;
	int cpu;			/* CPU it is pinned to */
	char *slot;			/* start of its fault_length bytes */
	uint64_t faults;		/* minor + major faults while measuring */
	uint64_t major;			/* major ones: --pageout's swap-ins */
	uint64_t chunks;		/* --churn: chunks it mapped and touched */
	uint64_t chunk_pages;		/* --churn: their pages */
	size_t chunk_length;		/* --churn: the current chunk's bytes */
	uint64_t rng;			/* --random-length: xorshift64 state */
	double elapsed;			/* --churn: how long it measured */
	volatile unsigned long sink;	/* --access=read: the bytes' sum */
} __attribute__((aligned(64)));

/* The writer, or the busy thread: the one unpinned extra thread. */
struct writer {
	pthread_t tid;
	struct bench *bench;
	char *region;			/* hole inside its PROT_NONE reservation */
	size_t length;
	uint64_t ops;			/* mmap+mprotect+munmap cycles */
	uint64_t spins;			/* the busy thread's BUSY_SPINS loops */
	double seconds;			/* how long it ran */
};

struct bench {
	struct config cfg;
	unsigned int ncpus;		/* CPUs this process may run on */
	size_t page_size;
	size_t slot_stride;
	int fd;				/* the file backing, or -1 */
	const char *notifier;		/* none, hmm or kvm: who registered one */
	struct worker *workers;
	struct writer writer;
	pthread_barrier_t start;	/* fault threads and the writer */
	pthread_barrier_t round;	/* fault threads only */
	/* Written by thread 0 before a round barrier, read after it. */
	bool stop;
	/*
	 * The extra thread runs until told; a mutex rather than an atomic so that
	 * helgrind and drd can see the ordering.
	 */
	pthread_mutex_t writer_lock;
	bool writer_stop;
	/* Written by thread 0 (--churn: main), read by main after pthread_join(). */
	uint64_t rounds;
	double elapsed;
	uint64_t touched;		/* --churn: pages touched by all threads */
};

/* Argument errors: one line naming the problem, exit status 2. */
static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try '" PROG " --help')\n");
	exit(2);
}

/* System call failures: perror-style, exit status 1. */
static void __attribute__((noreturn)) die_errno(const char *what)
{
	fprintf(stderr, PROG ": error: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The same, with a formatted "what" (a path, say). */
static void __attribute__((noreturn, format(printf, 1, 2))) die_errnof(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	exit(1);
}

/* pthread calls return their error instead of setting errno. */
static void check_pthread(int err, const char *what)
{
	if (err) {
		errno = err;
		die_errno(what);
	}
}

static void usage(void)
{
	printf("Usage: " PROG " [options] [THREADS]\n"
	       "\n"
	       "Page-fault scalability benchmark. THREADS fault threads (default: one per CPU\n"
	       "this process may run on), the i-th pinned to the i-th allowed CPU, each own a\n"
	       "slot of one mapping, anonymous and private by default (slots 8 MiB apart,\n"
	       "2 MiB aligned, so no two share a page table). Each round every thread writes\n"
	       "(or reads) one byte of every page of its slot, then the pages are dropped\n"
	       "with MADV_DONTNEED so the next round faults them again. A first round, not\n"
	       "measured, allocates the page tables the later rounds keep. Faults are counted\n"
	       "with getrusage(RUSAGE_THREAD).\n"
	       "\n"
	       "Options:\n"
	       "  --seconds=S         run for S seconds, fractions allowed (default: 60)\n"
	       "  --fault-length=N    bytes each thread faults per round, a multiple of the page\n"
	       "                      size, K/M/G suffixes allowed (default: 2M); slots grow to fit\n"
	       "  --madvise=serial    thread 0 (on the first CPU) zaps every slot (default, as in\n"
	       "                      the 2010 test)\n"
	       "  --madvise=each      every thread zaps its own slot\n"
	       "  --same-vma          all slots in one VMA (default)\n"
	       "  --vma-per-thread    one mapping per thread, with unmapped gaps between them\n"
	       "  --fresh             unmap each slot and map it again in place instead of\n"
	       "                      zapping it: every round faults in fresh memory and\n"
	       "                      allocates its page tables (first touches), and each\n"
	       "                      remap takes mmap_lock for write; with --backing,\n"
	       "                      the file is mapped again at the slot's offset (as\n"
	       "                      will-it-scale page_fault3 maps its file each round)\n"
	       "  --churn             no slots and no rounds in step: every thread maps a chunk\n"
	       "                      of --fault-length bytes where the kernel places it (next\n"
	       "                      to the others', often merged with them into one VMA),\n"
	       "                      touches it and unmaps it, again and again on its own,\n"
	       "                      as ebizzy -m does with its records: every thread's mmap\n"
	       "                      and munmap change VMAs the others fault in (anonymous\n"
	       "                      private memory only; implies --madvise=each; rounds\n"
	       "                      are the mean chunks per thread). With --vma-per-thread\n"
	       "                      each thread maps its chunks in a hole of its own\n"
	       "                      between PROT_NONE guards: never next to another\n"
	       "                      mapping, never merged\n"
	       "  --random-length     with --churn, each chunk a random number of pages from\n"
	       "                      one to --fault-length's, as ebizzy -R sizes its copies\n"
	       "                      (each thread's own fixed seed: the same sizes every run)\n"
	       "  --touch=all         touch every page of each chunk or slot (default)\n"
	       "  --touch=first       with --churn or --fresh, touch only the first page of\n"
	       "                      each chunk or slot: with a large --fault-length,\n"
	       "                      will-it-scale's mmap1 (map and unmap, mmap_lock taken\n"
	       "                      for write twice) with one first-touch fault between;\n"
	       "                      faults/s is then chunks/s (--fresh: each thread's\n"
	       "                      mapping in place, never next to another's)\n"
	       "  --wrprotect         make each slot read-only and writable again with two\n"
	       "                      mprotect() calls instead of zapping it: with --thp the\n"
	       "                      next round's write to each huge page is a write-protect\n"
	       "                      fault that reuses the page, one a slot (without --thp,\n"
	       "                      Linux 6.1's mprotect() makes the pages writable itself:\n"
	       "                      no faults). Anonymous private memory written to; give\n"
	       "                      --vma-per-thread or mprotect() splits the shared VMA\n"
	       "  --thp               allow transparent huge pages (MADV_HUGEPAGE); by default\n"
	       "                      MADV_NOHUGEPAGE keeps every fault a 4 KiB one (with\n"
	       "                      --fresh and --churn, PR_SET_THP_DISABLE: no madvise\n"
	       "                      per new mapping; with --thp, MADV_HUGEPAGE on each)\n"
	       "  --mmu-notifier      give the process an MMU notifier before anything is\n"
	       "                      mapped, as a KVM guest's memory or an address space a\n"
	       "                      GPU or RDMA driver mirrors has: open test_hmm's mirror\n"
	       "                      /dev/hmm_dmirror0 (CONFIG_TEST_HMM), or where there is\n"
	       "                      none create a KVM VM (/dev/kvm). Zaps then call it\n"
	       "  --mbind             give the slots' mappings a memory policy of their own:\n"
	       "                      mbind(MPOL_BIND) to every node this process may use,\n"
	       "                      the default policy's placement, as NUMA-aware programs\n"
	       "                      bind their buffers (not with --fresh or --churn)\n"
	       "  --writer            add one unpinned thread looping mmap/mprotect/munmap of a\n"
	       "                      small region away from the slots, to take mmap_lock for\n"
	       "                      write; reports ops/s (one op = one mmap+mprotect+munmap)\n"
	       "  --busy              add one unpinned thread spinning in user space, without\n"
	       "                      system calls: what a second busy CPU costs the fault\n"
	       "                      threads by itself (shared caches, SMT, an emulator's\n"
	       "                      threads); the baseline for --writer's cost\n"
	       "  --backing=anon      anonymous memory (default)\n"
	       "  --backing=memfd     a memfd_create() file (tmpfs)\n"
	       "  --backing=DIR       an unlinked temporary file made in directory DIR (say an\n"
	       "                      ext4 mount). A file is sized to the whole mapping and\n"
	       "                      the slots are written with pwrite() before the run, so\n"
	       "                      read faults find their pages in the page cache\n"
	       "  --private           a private mapping (default): writes to a file's pages\n"
	       "                      copy them\n"
	       "  --shared            a shared mapping (with anon: MAP_SHARED|MAP_ANONYMOUS,\n"
	       "                      shmem); MADV_DONTNEED then drops only the PTEs, the\n"
	       "                      pages stay in the page cache\n"
	       "  --access=write      write one byte per page (default)\n"
	       "  --access=read       read one byte per page. A read fault on a file or a\n"
	       "                      shared mapping maps up to 16 cached pages around it\n"
	       "                      (fault-around, 64 KiB): fewer faults than pages touched\n"
	       "  --pageout           page the slots out to swap with MADV_PAGEOUT instead of\n"
	       "                      dropping them: the next round faults them back in from\n"
	       "                      swap (anonymous private memory written to; needs swap).\n"
	       "                      Swap-ins that read the device count as major faults,\n"
	       "                      swap-cache hits as minor ones\n"
	       "  --swapcache         --pageout, then MADV_WILLNEED reads the slots back into\n"
	       "                      the swap cache before the next round: its faults are\n"
	       "                      swap-cache hits, not swap-ins (zram, the guests' swap,\n"
	       "                      swaps a page of one owner in without the swap cache)\n"
	       "  --strict-cpus       refuse more THREADS than CPUs (for scripts whose numbers\n"
	       "                      assume a CPU per thread); without it more threads run,\n"
	       "                      pinned round-robin, with a warning on stderr\n"
	       "  --oversubscribe     accepted for old scripts; more threads than CPUs is the\n"
	       "                      default now\n"
	       "  -h, --help          show this help and exit\n"
	       "\n"
	       "With more THREADS than CPUs (say 'perf stat ./multi-fault-all 8', the 2010\n"
	       "command line, on a 2-CPU machine) the threads share CPUs: faults/s per thread\n"
	       "and the scaling with THREADS are not what a machine with that many CPUs shows.\n"
	       "\n"
	       "Output: one line in words; one line 'CONFIG key=value ...' with the\n"
	       "configuration: threads, madvise, vma, thp, writer, busy, fault_length,\n"
	       "oversubscribe, backing, mapping, access, drop, notifier, policy, length and\n"
	       "touch; then one line\n"
	       "'RESULT key=value ...' with those and the outcome, in this order: threads,\n"
	       "madvise, vma, thp, writer, busy, seconds, rounds, pages_touched, faults,\n"
	       "faults_per_sec, per_thread_faults_per_sec, writer_ops, writer_ops_per_sec,\n"
	       "fault_length, oversubscribe (1 when THREADS outnumbered the CPUs), backing\n"
	       "(anon, memfd or dir), mapping (private or shared), access (read or write),\n"
	       "drop (dontneed, pageout, swapcache, wrprotect, remap for --fresh or\n"
	       "munmap for --churn, whose vma is 'churn', or\n"
	       "'churn-apart' with --vma-per-thread), notifier (none, or hmm or kvm for\n"
	       "--mmu-notifier), policy (default, or bind for --mbind), length (fixed,\n"
	       "or random for --random-length: fault_length is then the longest\n"
	       "chunk's), touch (all, or first for --touch=first) and major_faults (of\n"
	       "faults, those that read swap).\n"
	       "Faults are page faults taken, not pages mapped: with fault-around they are\n"
	       "fewer than pages_touched, and the line in words says so.\n"
	       "On stderr: one line at the start saying what runs.\n"
	       "Exit status: 0 on success; 1 when a system call fails (DIR not a directory,\n"
	       "say) or no round completed in --seconds (no rate to give); 2 on bad\n"
	       "arguments.\n");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t round_up(size_t x, size_t align)
{
	return (x + align - 1) / align * align;
}

static unsigned int parse_threads(const char *s)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || n == 0)
		usage_error("invalid thread count '%s': must be a positive integer", s);
	if (n > MAX_THREADS)
		usage_error("thread count %s is too large (at most %d)", s, MAX_THREADS);
	return n;
}

static double parse_seconds(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v <= 0)
		usage_error("invalid --seconds '%s': must be a positive number", s);
	if (v > MAX_SECONDS)
		usage_error("--seconds '%s' is too large (at most %.0f)", s, MAX_SECONDS);
	return v;
}

/* BYTES with an optional K, M or G suffix (powers of 1024). */
static size_t parse_fault_length(const char *s, size_t page_size)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || end == s || errno)
		usage_error("invalid --fault-length '%s': must be a positive number of bytes", s);
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	}
	if (*end)
		usage_error("invalid --fault-length '%s': must be bytes with an optional K, M or G suffix",
			    s);
	if (v > MAX_FAULT_LENGTH >> shift)
		usage_error("--fault-length '%s' is too large (at most %luM)", s,
			    MAX_FAULT_LENGTH >> 20);
	v <<= shift;
	if (v == 0 || v % page_size)
		usage_error("invalid --fault-length '%s': must be a positive multiple of the page size (%zu)",
			    s, page_size);
	return v;
}

static enum madvise_mode parse_madvise(const char *s)
{
	if (!strcmp(s, "serial"))
		return MADVISE_SERIAL;
	if (!strcmp(s, "each"))
		return MADVISE_EACH;
	usage_error("invalid --madvise '%s': must be 'serial' or 'each'", s);
}

/* anon, memfd, or any other word: the directory for the file. */
static enum backing parse_backing(const char *s, const char **dir)
{
	if (!strcmp(s, "anon"))
		return BACKING_ANON;
	if (!strcmp(s, "memfd"))
		return BACKING_MEMFD;
	if (!*s)
		usage_error("invalid --backing '': must be 'anon', 'memfd' or a directory");
	/* "--backing --seconds=1" took the next option for its value. */
	if (*s == '-')
		usage_error("invalid --backing '%s': must be 'anon', 'memfd' or a directory (./%s for one whose name starts with '-')",
			    s, s);
	*dir = s;
	return BACKING_DIR;
}

static enum access_mode parse_access(const char *s)
{
	if (!strcmp(s, "write"))
		return ACCESS_WRITE;
	if (!strcmp(s, "read"))
		return ACCESS_READ;
	usage_error("invalid --access '%s': must be 'read' or 'write'", s);
}

enum {
	OPT_SECONDS = 256, OPT_FAULT_LENGTH, OPT_MADVISE, OPT_SAME_VMA,
	OPT_VMA_PER_THREAD, OPT_THP, OPT_WRITER, OPT_BUSY, OPT_STRICT_CPUS,
	OPT_OVERSUBSCRIBE, OPT_BACKING, OPT_PRIVATE, OPT_SHARED, OPT_ACCESS,
	OPT_PAGEOUT, OPT_SWAPCACHE, OPT_FRESH, OPT_WRPROTECT, OPT_CHURN, OPT_RANDOM_LENGTH, OPT_TOUCH, OPT_MMU_NOTIFIER, OPT_MBIND,
};

static const struct option long_options[] = {
	{ "seconds",		required_argument,	NULL, OPT_SECONDS },
	{ "fault-length",	required_argument,	NULL, OPT_FAULT_LENGTH },
	{ "madvise",		required_argument,	NULL, OPT_MADVISE },
	{ "same-vma",		no_argument,		NULL, OPT_SAME_VMA },
	{ "vma-per-thread",	no_argument,		NULL, OPT_VMA_PER_THREAD },
	{ "thp",		no_argument,		NULL, OPT_THP },
	{ "writer",		no_argument,		NULL, OPT_WRITER },
	{ "busy",		no_argument,		NULL, OPT_BUSY },
	{ "strict-cpus",	no_argument,		NULL, OPT_STRICT_CPUS },
	{ "oversubscribe",	no_argument,		NULL, OPT_OVERSUBSCRIBE },
	{ "backing",		required_argument,	NULL, OPT_BACKING },
	{ "private",		no_argument,		NULL, OPT_PRIVATE },
	{ "shared",		no_argument,		NULL, OPT_SHARED },
	{ "access",		required_argument,	NULL, OPT_ACCESS },
	{ "pageout",		no_argument,		NULL, OPT_PAGEOUT },
	{ "swapcache",		no_argument,		NULL, OPT_SWAPCACHE },
	{ "fresh",		no_argument,		NULL, OPT_FRESH },
	{ "churn",		no_argument,		NULL, OPT_CHURN },
	{ "wrprotect",		no_argument,		NULL, OPT_WRPROTECT },
	{ "random-length",	no_argument,		NULL, OPT_RANDOM_LENGTH },
	{ "touch",		required_argument,	NULL, OPT_TOUCH },
	{ "mmu-notifier",	no_argument,		NULL, OPT_MMU_NOTIFIER },
	{ "mbind",		no_argument,		NULL, OPT_MBIND },
	{ "help",		no_argument,		NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* getopt's own messages are off: say which argument was wrong, once. */
static void __attribute__((noreturn)) bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		usage_error("option '%s' needs a value", arg);
	if (!strncmp(arg, "--", 2)) {
		/* getopt sets optopt when a known long option got a value. */
		if (optopt)
			usage_error("option '%s' takes no value", arg);
		usage_error("unknown option '%s'", arg);
	}
	if (optopt >= '0' && optopt <= '9')
		usage_error("invalid option '-%c': THREADS must be a positive integer", optopt);
	usage_error("unknown option '-%c'", optopt);
}

static void parse_args(int argc, char **argv, struct config *cfg, size_t page_size)
{
	bool same_vma = false, private = false, madvise_given = false;
	int c;

	*cfg = (struct config) {
		.fault_length = DEFAULT_FAULT_LENGTH,
		.seconds = DEFAULT_SECONDS,
		.madvise = MADVISE_SERIAL,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_SECONDS:
			cfg->seconds = parse_seconds(optarg);
			break;
		case OPT_FAULT_LENGTH:
			cfg->fault_length = parse_fault_length(optarg, page_size);
			break;
		case OPT_MADVISE:
			cfg->madvise = parse_madvise(optarg);
			madvise_given = true;
			break;
		case OPT_SAME_VMA:
			same_vma = true;
			break;
		case OPT_VMA_PER_THREAD:
			cfg->vma_per_thread = true;
			break;
		case OPT_THP:
			cfg->thp = true;
			break;
		case OPT_WRITER:
			cfg->writer = true;
			break;
		case OPT_BUSY:
			cfg->busy = true;
			break;
		case OPT_STRICT_CPUS:
			cfg->strict_cpus = true;
			break;
		case OPT_OVERSUBSCRIBE:
			/* What it asked for is the default now. */
			break;
		case OPT_BACKING:
			cfg->backing = parse_backing(optarg, &cfg->dir);
			break;
		case OPT_PRIVATE:
			private = true;
			break;
		case OPT_SHARED:
			cfg->shared = true;
			break;
		case OPT_ACCESS:
			cfg->access = parse_access(optarg);
			break;
		case OPT_PAGEOUT:
			cfg->pageout = true;
			break;
		case OPT_SWAPCACHE:
			cfg->pageout = cfg->swapcache = true;
			break;
		case OPT_FRESH:
			cfg->fresh = true;
			break;
		case OPT_CHURN:
			cfg->churn = true;
			break;
		case OPT_WRPROTECT:
			cfg->wrprotect = true;
			break;
		case OPT_RANDOM_LENGTH:
			cfg->random_length = true;
			break;
		case OPT_TOUCH:
			if (!strcmp(optarg, "first"))
				cfg->touch_first = true;
			else if (!strcmp(optarg, "all"))
				cfg->touch_first = false;
			else
				usage_error("--touch=%s: give all or first", optarg);
			break;
		case OPT_MMU_NOTIFIER:
			cfg->mmu_notifier = true;
			break;
		case OPT_MBIND:
			cfg->mbind = true;
			break;
		case 'h':
			usage();
			exit(0);
		default:
			bad_option(c, argv);
		}
	}
	if (same_vma && cfg->vma_per_thread)
		usage_error("--same-vma and --vma-per-thread conflict: give one");
	if (cfg->writer && cfg->busy)
		usage_error("--writer and --busy conflict: give one");
	if (private && cfg->shared)
		usage_error("--private and --shared conflict: give one");
	if (cfg->pageout && (cfg->backing != BACKING_ANON || cfg->shared ||
			     cfg->access != ACCESS_WRITE))
		usage_error("--%s swaps anonymous private memory written to: not with --backing, --shared or --access=read",
			    cfg->swapcache ? "swapcache" : "pageout");
	if (cfg->fresh && cfg->churn)
		usage_error("--fresh and --churn conflict: give one");
	if (cfg->mbind && (cfg->fresh || cfg->churn))
		usage_error("--mbind binds the slots once: not with --%s",
			    cfg->fresh ? "fresh" : "churn");
	if (cfg->fresh && cfg->pageout)
		usage_error("--fresh unmaps what --%s would page out: give one",
			    cfg->swapcache ? "swapcache" : "pageout");
	if (cfg->churn &&
	    (cfg->pageout || cfg->backing != BACKING_ANON || cfg->shared))
		usage_error("--churn maps anonymous private memory: not with --pageout, --swapcache, --backing or --shared");
	if (cfg->churn && same_vma)
		usage_error("--churn maps a chunk per thread: not with --same-vma");
	if (cfg->churn && madvise_given && cfg->madvise != MADVISE_EACH)
		usage_error("--churn unmaps each thread's own chunk: not with --madvise=serial");
	if (cfg->wrprotect &&
	    (cfg->fresh || cfg->churn || cfg->pageout || cfg->backing != BACKING_ANON ||
	     cfg->shared || cfg->access != ACCESS_WRITE))
		usage_error("--wrprotect write-protects anonymous private memory written to: not with --fresh, --churn, --pageout, --swapcache, --backing, --shared or --access=read");
	if (cfg->random_length && !cfg->churn)
		usage_error("--random-length sizes --churn's chunks: give --churn too");
	if (cfg->touch_first && !cfg->churn && !cfg->fresh)
		usage_error("--touch=first touches new mappings: give --churn or --fresh too");
	if (cfg->churn)
		cfg->madvise = MADVISE_EACH;
	if (argc - optind > 1)
		usage_error("unexpected extra argument '%s': only THREADS is positional",
			    argv[optind + 1]);
	if (argc - optind == 1)
		cfg->nthreads = parse_threads(argv[optind]);
}

/* The CPUs we may run on, in order; returns how many. */
static unsigned int allowed_cpus(int *cpus)
{
	cpu_set_t set;
	unsigned int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		die_errno("sched_getaffinity");
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/*
 * Default THREADS to one per allowed CPU, then give the i-th thread the
 * i-th allowed CPU, round-robin when there are more threads than CPUs.
 * The 2010 test is typed as "multi-fault-all 8": on a smaller machine it
 * runs, with a warning, unless a script asked for --strict-cpus.
 */
static void assign_cpus(struct bench *b)
{
	static int cpus[CPU_SETSIZE];
	struct config *cfg = &b->cfg;
	unsigned int ncpus = allowed_cpus(cpus);

	b->ncpus = ncpus;
	if (!cfg->nthreads)
		cfg->nthreads = ncpus < MAX_THREADS ? ncpus : MAX_THREADS;
	if (cfg->nthreads > ncpus && cfg->strict_cpus)
		usage_error("%u threads but only %u CPUs available, and --strict-cpus asks for one CPU per thread",
			    cfg->nthreads, ncpus);
	b->workers = calloc(cfg->nthreads, sizeof(*b->workers));
	if (!b->workers)
		die_errno("calloc");
	for (unsigned int i = 0; i < cfg->nthreads; i++)
		b->workers[i].cpu = cpus[i % ncpus];
}

static void set_thp(char *addr, size_t len, bool thp)
{
	if (!madvise(addr, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		return;
	/* A kernel without THP has no huge pages to refuse. */
	if (!thp && errno == EINVAL)
		return;
	die_errno(thp ? "madvise(MADV_HUGEPAGE)" : "madvise(MADV_NOHUGEPAGE)");
}

/* The mapping of the slots: anonymous memory or the file at offset off. */
static void map_fixed_rw(const struct bench *b, char *addr, size_t len, off_t off)
{
	int flags = (b->cfg.shared ? MAP_SHARED : MAP_PRIVATE) | MAP_FIXED;

	if (b->fd < 0) {
		flags |= MAP_ANONYMOUS;
		off = 0;
	}
	if (mmap(addr, len, PROT_READ | PROT_WRITE, flags, b->fd, off) == MAP_FAILED)
		die_errno("mmap");
}

static void unmap(char *addr, size_t len)
{
	if (len && munmap(addr, len))
		die_errno("munmap");
}

/*
 * Reserve the address range first (PROT_NONE, nothing committed) so the
 * slots can be 2 MiB aligned, then map the slots over it with MAP_FIXED.
 * What is left of the reservation at either end stays as a PROT_NONE guard:
 * no later mapping can sit next to a slot and merge with it. Per-thread
 * mappings keep unmapped gaps between them so the kernel cannot merge them
 * into one VMA.
 */
/*
 * --mbind: bind [start, start + len) to every node this process may
 * allocate on: where the default policy puts pages anyway, but a policy
 * of the VMA's own.
 */
static void bind_slots(char *start, size_t len)
{
	unsigned long nodes[16] = { 0 };
	unsigned long maxnode = sizeof(nodes) * 8;

	if (syscall(SYS_get_mempolicy, NULL, nodes, maxnode, NULL,
		    MPOL_F_MEMS_ALLOWED))
		die_errno("--mbind: get_mempolicy(MPOL_F_MEMS_ALLOWED)");
	if (syscall(SYS_mbind, start, len, MPOL_BIND, nodes, maxnode, 0))
		die_errno("--mbind: mbind(MPOL_BIND)");
}

static void map_slots(struct bench *b)
{
	struct config *cfg = &b->cfg;
	size_t span = round_up(cfg->fault_length, PMD_BYTES);
	size_t total = b->slot_stride * cfg->nthreads;
	size_t mapped = cfg->vma_per_thread ? span : total;
	char *raw, *base;

	/* Churn's chunks are mapped by their threads, where the kernel likes. */
	if (cfg->churn && !cfg->vma_per_thread)
		return;

	raw = mmap(NULL, total + 2 * PMD_BYTES, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		die_errno("mmap");
	/* At least a page of guard below, and more than that above. */
	base = (char *)round_up((uintptr_t)raw + b->page_size, PMD_BYTES);

	for (unsigned int i = 0; i < cfg->nthreads; i++)
		b->workers[i].slot = base + i * b->slot_stride;
	/* --churn --vma-per-thread: holes between PROT_NONE guards, mapped later. */
	if (cfg->churn) {
		for (unsigned int i = 0; i < cfg->nthreads; i++)
			unmap(b->workers[i].slot, span);
		return;
	}
	for (unsigned int i = 0; i < (cfg->vma_per_thread ? cfg->nthreads : 1); i++) {
		char *start = base + i * b->slot_stride;

		/* A file maps at the slot's own offset: slot i, byte i * stride. */
		map_fixed_rw(b, start, mapped, (off_t)i * b->slot_stride);
		/* --fresh's remaps must merge back: same flags, no VM_NOHUGEPAGE. */
		if (cfg->thp || !cfg->fresh)
			set_thp(start, mapped, cfg->thp);
		if (cfg->mbind)
			bind_slots(start, mapped);
		if (cfg->vma_per_thread)
			unmap(start + span, b->slot_stride - span);
	}
	/* --fresh maps the file again every round; else the mappings hold it. */
	if (cfg->fresh)
		return;
	if (b->fd >= 0 && close(b->fd))
		die_errno("close");
	b->fd = -1;
}

/*
 * The writer's region sits in a hole of its own PROT_NONE reservation, so
 * what it maps is never adjacent to, or merged with, anything else. It is
 * reserved before the slots so it cannot land in a gap between them.
 */
static void reserve_writer(struct bench *b)
{
	struct writer *w = &b->writer;
	size_t guard = WRITER_GUARD_PAGES * b->page_size;
	char *raw;

	w->length = WRITER_PAGES * b->page_size;
	raw = mmap(NULL, w->length + 2 * guard, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		die_errno("mmap");
	w->region = raw + guard;
	unmap(w->region, w->length);
}

/*
 * An unlinked file in dir: O_TMPFILE where the file system has it, else
 * mkstemp() and unlink().
 */
static int tmpfile_in(const char *dir)
{
	struct stat st;
	char *path;
	int fd;

	if (stat(dir, &st))
		die_errnof("--backing=%s", dir);
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		die_errnof("--backing=%s", dir);
	}
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* A file system without O_TMPFILE says EOPNOTSUPP, old kernels EISDIR. */
	if (errno != EOPNOTSUPP && errno != EISDIR)
		die_errnof("--backing=%s: open(O_TMPFILE)", dir);
	if (asprintf(&path, "%s/" PROG ".XXXXXX", dir) < 0)
		die_errno("asprintf");
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		die_errnof("--backing=%s: mkstemp", dir);
	if (unlink(path))
		die_errnof("unlink %s", path);
	free(path);
	return fd;
}

/*
 * len bytes at off, so that the pages are in the page cache; a page per
 * pwrite(), for a page per folio: kernels with large folios in the page
 * cache (ext4 since 6.16) size a folio by the write and would then map a
 * whole folio per shared write fault, where 6.1 maps a page.
 */
static void fill(int fd, off_t off, size_t len, size_t page_size)
{
	static char buf[FILL_BYTES];
	size_t done = 0, n;
	ssize_t ret;

	memset(buf, 1, sizeof(buf));
	while (done < len) {
		n = len - done < page_size ? len - done : page_size;
		if (n > sizeof(buf))
			n = sizeof(buf);
		ret = pwrite(fd, buf, n, off + done);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			if (!ret)
				errno = ENOSPC;
			die_errno("pwrite to the backing file");
		}
		done += ret;
	}
}

/*
 * A file backing: sized to the whole mapping (every slot and the gaps
 * between them), the slots written, so that read faults hit the page
 * cache from the first round on. The gaps stay holes.
 */
static void open_backing(struct bench *b)
{
	struct config *cfg = &b->cfg;
	size_t total = b->slot_stride * cfg->nthreads;

	b->fd = -1;
	if (cfg->backing == BACKING_ANON)
		return;
	if (cfg->backing == BACKING_MEMFD) {
		b->fd = memfd_create(PROG, MFD_CLOEXEC);
		if (b->fd < 0)
			die_errno("memfd_create");
	} else {
		b->fd = tmpfile_in(cfg->dir);
	}
	if (ftruncate(b->fd, total))
		die_errnof("ftruncate of the backing file to %zu bytes", total);
	for (unsigned int i = 0; i < cfg->nthreads; i++)
		fill(b->fd, (off_t)i * b->slot_stride, cfg->fault_length, b->page_size);
}

/* --pageout: swap to page out to, or a clear error (no silent DONTNEED). */
static void require_swap(void)
{
	char line[256];
	int lines = 0;
	FILE *f = fopen("/proc/swaps", "r");

	if (!f)
		die_errno("/proc/swaps");
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	if (lines < 2) {
		fprintf(stderr, PROG ": error: --pageout needs swap, and /proc/swaps lists none (in a qemu/run guest: --swap SIZE)\n");
		exit(1);
	}
}

/*
 * --mmu-notifier: an MMU notifier on this mm, from whichever secondary MMU
 * the kernel offers; its file stays open until exit. Which one it was.
 */
static const char *register_mmu_notifier(void)
{
	int hmm_errno, fd = open("/dev/hmm_dmirror0", O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return "hmm";
	hmm_errno = errno;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, PROG ": error: --mmu-notifier: cannot open /dev/hmm_dmirror0 (%s) nor /dev/kvm (%s): it needs CONFIG_TEST_HMM or KVM\n",
			strerror(hmm_errno), strerror(errno));
		exit(1);
	}
	if (ioctl(fd, KVM_CREATE_VM, 0) < 0)
		die_errno("--mmu-notifier: ioctl(/dev/kvm, KVM_CREATE_VM)");
	return "kvm";
}

static void setup(struct bench *b)
{
	struct config *cfg = &b->cfg;
	size_t span = round_up(cfg->fault_length, PMD_BYTES);

	assign_cpus(b);
	b->notifier = cfg->mmu_notifier ? register_mmu_notifier() : "none";
	if (cfg->pageout)
		require_swap();
	/* The seed's 8 MiB, or the slot plus a 2 MiB gap when that is more. */
	b->slot_stride = span + PMD_BYTES > MIN_SLOT_STRIDE ? span + PMD_BYTES : MIN_SLOT_STRIDE;
	open_backing(b);
	if ((cfg->fresh || cfg->churn) && !cfg->thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		die_errno("prctl(PR_SET_THP_DISABLE)");
	if (cfg->writer)
		reserve_writer(b);
	/* Main joins the start barrier: it maps the slots while threads wait. */
	check_pthread(pthread_barrier_init(&b->start, NULL,
					   cfg->nthreads + cfg->writer + cfg->busy + 1),
		      "pthread_barrier_init");
	check_pthread(pthread_barrier_init(&b->round, NULL, cfg->nthreads),
		      "pthread_barrier_init");
	check_pthread(pthread_mutex_init(&b->writer_lock, NULL), "pthread_mutex_init");
}

/* The hot loop: exactly one store per page, which the compiler must keep. */
static void touch_pages(char *start, size_t len, size_t page_size)
{
	volatile char *p = start;

	for (size_t off = 0; off < len; off += page_size)
		p[off] = 1;
}

/* --access=read: one load per page, summed into the thread's sink. */
static void read_pages(struct worker *w, size_t len, size_t page_size)
{
	const volatile char *p = w->slot;
	unsigned long sum = 0;

	for (size_t off = 0; off < len; off += page_size)
		sum += p[off];
	w->sink = sum;
}

/*
 * A new anonymous mapping of len bytes, at addr (MAP_FIXED) or, for addr
 * NULL, where the kernel places it. THP was refused for the whole process
 * (PR_SET_THP_DISABLE) unless --thp: no madvise per mapping then.
 */
static char *map_new(const struct config *cfg, char *addr, size_t len)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (addr ? MAP_FIXED : 0);
	char *p = mmap(addr, len, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED)
		die_errno("mmap");
	if (cfg->thp)
		set_thp(p, len, true);
	return p;
}

/*
 * Drop what the slot at addr maps. --fresh maps the slot again: a file at
 * the slot's own offset, which is its distance from slot 0.
 */
static void zap(const struct bench *b, char *addr, size_t len)
{
	const struct config *cfg = &b->cfg;

	if (cfg->fresh && b->fd >= 0) {
		unmap(addr, len);
		map_fixed_rw(b, addr, len, addr - b->workers[0].slot);
		if (cfg->thp)
			set_thp(addr, len, true);
	} else if (cfg->fresh || cfg->churn) {
		unmap(addr, len);
		if (cfg->fresh)
			map_new(cfg, addr, len);
	} else if (cfg->wrprotect) {
		if (mprotect(addr, len, PROT_READ) ||
		    mprotect(addr, len, PROT_READ | PROT_WRITE))
			die_errno("mprotect");
	} else if (cfg->pageout) {
		if (madvise(addr, len, MADV_PAGEOUT))
			die_errno("madvise(MADV_PAGEOUT)");
		/* zram would swap in without the swap cache: read it in now */
		if (cfg->swapcache && madvise(addr, len, MADV_WILLNEED))
			die_errno("madvise(MADV_WILLNEED)");
	} else if (madvise(addr, len, MADV_DONTNEED)) {
		die_errno("madvise(MADV_DONTNEED)");
	}
}

/* Serial: thread 0 zaps all slots, as the seed did. Each: own slot only. */
static void zap_slots(struct worker *w)
{
	struct bench *b = w->bench;
	size_t len = b->cfg.fault_length;

	if (b->cfg.churn)
		len = w->chunk_length;
	if (b->cfg.madvise == MADVISE_EACH) {
		zap(b, w->slot, len);
		return;
	}
	if (w->idx != 0)
		return;
	for (unsigned int i = 0; i < b->cfg.nthreads; i++)
		zap(b, b->workers[i].slot, len);
}

/* The calling thread's faults, all of them or only the major ones. */
static uint64_t thread_faults(bool major)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die_errno("getrusage");
	return major ? ru.ru_majflt : ru.ru_minflt + ru.ru_majflt;
}

static void barrier(pthread_barrier_t *bar)
{
	int err = pthread_barrier_wait(bar);

	if (err && err != PTHREAD_BARRIER_SERIAL_THREAD)
		check_pthread(err, "pthread_barrier_wait");
}

/* --random-length: 1 to max pages, from the thread's own xorshift64. */
static uint64_t chunk_pages(struct worker *w, uint64_t max)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return 1 + w->rng % max;
}

/*
 * Rounds run until thread 0 sees the time is up. It decides before the
 * round's first barrier and everyone reads the decision after it, so all
 * threads agree on the last round and none is left waiting at a barrier.
 * Thread 0 writes the flag again only after the round's second barrier,
 * which everyone reaches after reading it: no data race.
 * That barrier also keeps the previous round's MADV_DONTNEED from racing
 * with this round's stores.
 */
static void access_slot(struct worker *w)
{
	struct bench *b = w->bench;
	size_t len = b->cfg.fault_length;

	if (b->cfg.churn) {
		if (b->cfg.random_length)
			len = chunk_pages(w, len / b->page_size) * b->page_size;
		w->chunk_length = len;
		w->slot = map_new(&b->cfg, b->cfg.vma_per_thread ? w->slot : NULL, len);
	}
	if (b->cfg.touch_first)
		len = b->page_size;
	if (b->cfg.access == ACCESS_READ)
		read_pages(w, len, b->page_size);
	else
		touch_pages(w->slot, len, b->page_size);
}

/*
 * --churn: no rounds in step, as in ebizzy: each thread maps, touches and
 * unmaps its chunks on its own, so one thread's mmap() and munmap() land
 * while the others fault. A first chunk is not measured.
 */
static void churn(struct worker *w)
{
	struct bench *b = w->bench;
	uint64_t faults, major;
	double start, t;

	access_slot(w);
	zap_slots(w);
	faults = thread_faults(false);
	major = thread_faults(true);
	start = now();
	while ((t = now()) - start < b->cfg.seconds) {
		access_slot(w);
		zap_slots(w);
		w->chunks++;
		w->chunk_pages += b->cfg.touch_first ? 1 : w->chunk_length / b->page_size;
	}
	w->elapsed = t - start;
	w->faults = thread_faults(false) - faults;
	w->major = thread_faults(true) - major;
}

static void *fault_thread(void *arg)
{
	struct worker *w = arg;
	struct bench *b = w->bench;
	uint64_t faults, major, rounds = 0;
	double start;

	barrier(&b->start);
	if (b->cfg.churn) {
		churn(w);
		return NULL;
	}
	/* The warm-up round; the loop's first barrier ends its zap. */
	access_slot(w);
	barrier(&b->round);
	zap_slots(w);
	faults = thread_faults(false);
	major = thread_faults(true);
	start = now();
	for (;;) {
		if (w->idx == 0)
			b->stop = now() - start >= b->cfg.seconds;
		barrier(&b->round);
		if (b->stop)
			break;
		access_slot(w);
		barrier(&b->round);
		zap_slots(w);
		rounds++;
	}
	w->faults = thread_faults(false) - faults;
	w->major = thread_faults(true) - major;
	if (w->idx == 0) {
		b->elapsed = now() - start;
		b->rounds = rounds;
	}
	return NULL;
}

static bool writer_should_stop(struct bench *b)
{
	bool stop;

	pthread_mutex_lock(&b->writer_lock);
	stop = b->writer_stop;
	pthread_mutex_unlock(&b->writer_lock);
	return stop;
}

/*
 * mmap, mprotect and munmap each take mmap_lock for write. MAP_FIXED_NOREPLACE
 * refuses, rather than clobbers, should anything else have taken the hole.
 */
static void writer_cycle(struct writer *w)
{
	char *p = mmap(w->region, w->length, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		die_errno("writer: mmap");
	if (p != w->region) {
		errno = EEXIST;
		die_errno("writer: mmap");
	}
	if (mprotect(p, w->length, PROT_READ))
		die_errno("writer: mprotect");
	unmap(p, w->length);
}

/* The empty asm keeps the compiler from folding the loop away. */
static void busy_cycle(void)
{
	for (unsigned long i = 0; i < BUSY_SPINS; i++)
		__asm__ __volatile__("" ::: "memory");
}

static void *writer_thread(void *arg)
{
	struct writer *w = arg;
	struct bench *b = w->bench;
	double start;

	barrier(&b->start);
	start = now();
	while (!writer_should_stop(b)) {
		if (b->cfg.busy) {
			busy_cycle();
			w->spins++;
		} else {
			writer_cycle(w);
			w->ops++;
		}
	}
	w->seconds = now() - start;
	return NULL;
}

static void start_fault_thread(struct worker *w)
{
	pthread_attr_t attr;
	cpu_set_t cpu;

	CPU_ZERO(&cpu);
	CPU_SET(w->cpu, &cpu);
	check_pthread(pthread_attr_init(&attr), "pthread_attr_init");
	/* Pinned from the start: no first fault on the wrong CPU. */
	check_pthread(pthread_attr_setaffinity_np(&attr, sizeof(cpu), &cpu),
		      "pthread_attr_setaffinity_np");
	check_pthread(pthread_create(&w->tid, &attr, fault_thread, w), "pthread_create");
	pthread_attr_destroy(&attr);
}

static void start_threads(struct bench *b)
{
	struct config *cfg = &b->cfg;

	for (unsigned int i = 0; i < cfg->nthreads; i++) {
		b->workers[i].bench = b;
		b->workers[i].idx = i;
		/* any nonzero xorshift64 seed, one per thread */
		b->workers[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		start_fault_thread(&b->workers[i]);
	}
	if (cfg->writer || cfg->busy) {
		b->writer.bench = b;
		check_pthread(pthread_create(&b->writer.tid, NULL, writer_thread, &b->writer),
			      "pthread_create");
	}
}

/* The fault threads stop by themselves; the extra thread when they are done. */
static void join_threads(struct bench *b)
{
	struct config *cfg = &b->cfg;

	for (unsigned int i = 0; i < cfg->nthreads; i++)
		check_pthread(pthread_join(b->workers[i].tid, NULL), "pthread_join");
	/* --churn: rounds are each thread's own; the rate is over the longest. */
	if (cfg->churn) {
		uint64_t chunks = 0;

		for (unsigned int i = 0; i < cfg->nthreads; i++) {
			chunks += b->workers[i].chunks;
			b->touched += b->workers[i].chunk_pages;
			if (b->workers[i].elapsed > b->elapsed)
				b->elapsed = b->workers[i].elapsed;
		}
		b->rounds = chunks / cfg->nthreads;
	}
	if (cfg->writer || cfg->busy) {
		pthread_mutex_lock(&b->writer_lock);
		b->writer_stop = true;
		pthread_mutex_unlock(&b->writer_lock);
		check_pthread(pthread_join(b->writer.tid, NULL), "pthread_join");
	}
}

static const char *backing_key(const struct config *cfg)
{
	switch (cfg->backing) {
	case BACKING_MEMFD:
		return "memfd";
	case BACKING_DIR:
		return "dir";
	default:
		return "anon";
	}
}

/* A read fault here maps up to fault_around_bytes of cached pages. */
static bool fault_around(const struct config *cfg)
{
	return cfg->access == ACCESS_READ && (cfg->backing != BACKING_ANON || cfg->shared);
}

/*
 * "madvise=serial, one VMA, THP off, no writer": the mode in words, then,
 * unless the mapping is the default anonymous private one written to,
 * ", memfd shared mapping, reads" and the like.
 */
static void print_mode(FILE *f, const struct config *cfg)
{
	fprintf(f, "madvise=%s, %s, THP %s, %s",
		cfg->madvise == MADVISE_EACH ? "each" : "serial",
		cfg->churn && cfg->vma_per_thread ?
		"a chunk per thread and round, mapped and unmapped apart from the others" :
		cfg->churn ? "a chunk per thread and round, mapped and unmapped" :
		cfg->vma_per_thread ? "one VMA per thread" : "one VMA",
		cfg->thp ? "allowed" : "off",
		cfg->writer ? "with writer" : cfg->busy ? "with busy thread" : "no writer");
	if (cfg->fresh)
		fprintf(f, ", unmapped and mapped again each round");
	if (cfg->wrprotect)
		fprintf(f, ", write-protected each round");
	if (cfg->swapcache)
		fprintf(f, ", paged out to swap and read back into the swap cache");
	else if (cfg->pageout)
		fprintf(f, ", paged out to swap");
	if (cfg->mmu_notifier)
		fprintf(f, ", an MMU notifier on the mm");
	if (cfg->mbind)
		fprintf(f, ", bound by mbind()");
	if (cfg->backing == BACKING_ANON && !cfg->shared && cfg->access == ACCESS_WRITE)
		return;
	if (cfg->backing == BACKING_DIR)
		fprintf(f, ", file in %s", cfg->dir);
	else
		fprintf(f, ", %s", cfg->backing == BACKING_MEMFD ? "memfd" : "anonymous");
	fprintf(f, " %s mapping, %s", cfg->shared ? "shared" : "private",
		cfg->access == ACCESS_READ ? "reads" : "writes");
}

/*
 * One line on stderr before the run (without arguments it runs for a
 * minute and says nothing until the end), and what sharing CPUs does to
 * the numbers when the threads outnumber them.
 */
static void announce(const struct bench *b)
{
	const struct config *cfg = &b->cfg;

	fprintf(stderr, PROG ": %u fault thread%s on %u CPU%s for %g s, ", cfg->nthreads,
		cfg->nthreads == 1 ? "" : "s", b->ncpus, b->ncpus == 1 ? "" : "s", cfg->seconds);
	print_mode(stderr, cfg);
	fprintf(stderr, " (--help for the options)\n");
	if (cfg->nthreads > b->ncpus)
		fprintf(stderr, PROG ": warning: %u threads share %u CPUs: faults/s per thread and the scaling with threads are not comparable to a machine with %u CPUs\n",
			cfg->nthreads, b->ncpus, cfg->nthreads);
}

static void run(struct bench *b)
{
	start_threads(b);
	/* Mapped after the thread stacks exist, so that none lands in a gap. */
	map_slots(b);
	/* After the mappings: a failed mmap is the only line on stderr. */
	announce(b);
	barrier(&b->start);
	join_threads(b);
}

/* One key=value of the configuration, as CONFIG and RESULT print it. */
struct config_pair {
	const char *key;
	char value[32];
};

enum { CONFIG_PAIRS = 16, CONFIG_FIRST = 6 };

/*
 * The configuration, in RESULT's order: its first CONFIG_FIRST pairs come
 * before the outcome there, the others after it.
 */
static void config_pairs(const struct bench *b, struct config_pair *p)
{
	const struct config *cfg = &b->cfg;
	int n = 0;

#define PAIR(k, fmt, ...) \
	(p[n].key = (k), snprintf(p[n].value, sizeof(p[n].value), fmt, __VA_ARGS__), n++)
	PAIR("threads", "%u", cfg->nthreads);
	PAIR("madvise", "%s", cfg->madvise == MADVISE_EACH ? "each" : "serial");
	PAIR("vma", "%s", cfg->churn ? (cfg->vma_per_thread ? "churn-apart" : "churn") :
	     cfg->vma_per_thread ? "per-thread" : "same");
	PAIR("thp", "%s", cfg->thp ? "on" : "off");
	PAIR("writer", "%d", cfg->writer);
	PAIR("busy", "%d", cfg->busy);
	PAIR("fault_length", "%zu", cfg->fault_length);
	PAIR("oversubscribe", "%d", cfg->nthreads > b->ncpus);
	PAIR("backing", "%s", backing_key(cfg));
	PAIR("mapping", "%s", cfg->shared ? "shared" : "private");
	PAIR("access", "%s", cfg->access == ACCESS_READ ? "read" : "write");
	PAIR("drop", "%s", cfg->churn ? "munmap" : cfg->fresh ? "remap" :
	     cfg->wrprotect ? "wrprotect" :
	     cfg->swapcache ? "swapcache" : cfg->pageout ? "pageout" : "dontneed");
	PAIR("notifier", "%s", b->notifier);
	PAIR("policy", "%s", cfg->mbind ? "bind" : "default");
	PAIR("length", "%s", cfg->random_length ? "random" : "fixed");
	PAIR("touch", "%s", cfg->touch_first ? "first" : "all");
#undef PAIR
}

static void print_pairs(const struct config_pair *p, int from, int to)
{
	for (int i = from; i < to; i++)
		printf(" %s=%s", p[i].key, p[i].value);
}

static void report(const struct bench *b)
{
	const struct config *cfg = &b->cfg;
	uint64_t pages = cfg->touch_first ? 1 : cfg->fault_length / b->page_size;
	uint64_t touched = cfg->churn ? b->touched : b->rounds * pages * cfg->nthreads;
	uint64_t faults = 0, major = 0;
	struct config_pair pairs[CONFIG_PAIRS];
	double fps, wps;

	for (unsigned int i = 0; i < cfg->nthreads; i++) {
		faults += b->workers[i].faults;
		major += b->workers[i].major;
	}
	fps = b->elapsed > 0 ? faults / b->elapsed : 0;
	wps = b->writer.seconds > 0 ? b->writer.ops / b->writer.seconds : 0;

	printf("%u thread%s, ", cfg->nthreads, cfg->nthreads == 1 ? "" : "s");
	print_mode(stdout, cfg);
	printf(": %llu rounds in %.3f s, %llu pages touched, %llu faults",
	       (unsigned long long)b->rounds, b->elapsed, (unsigned long long)touched,
	       (unsigned long long)faults);
	if (fault_around(cfg))
		printf(" (fault-around maps up to 16 cached pages per read fault: fewer faults than pages)");
	if (cfg->pageout)
		printf(" (paged out each round: %llu swap-ins read from swap, %llu swap-cache hits or first touches)",
		       (unsigned long long)major, (unsigned long long)(faults - major));
	printf(", %.1f faults/s (%.1f per thread)", fps, fps / cfg->nthreads);
	if (cfg->writer)
		printf(", writer %llu ops, %.1f ops/s", (unsigned long long)b->writer.ops, wps);
	if (cfg->busy)
		printf(", busy thread %llu x %lu spins in %.3f s",
		       (unsigned long long)b->writer.spins, BUSY_SPINS, b->writer.seconds);
	printf("\n");

	config_pairs(b, pairs);
	printf("CONFIG");
	print_pairs(pairs, 0, CONFIG_PAIRS);
	printf("\nRESULT");
	print_pairs(pairs, 0, CONFIG_FIRST);
	printf(" seconds=%.3f rounds=%llu pages_touched=%llu faults=%llu faults_per_sec=%.1f "
	       "per_thread_faults_per_sec=%.1f writer_ops=%llu writer_ops_per_sec=%.1f",
	       b->elapsed, (unsigned long long)b->rounds, (unsigned long long)touched,
	       (unsigned long long)faults, fps, fps / cfg->nthreads,
	       (unsigned long long)b->writer.ops, wps);
	print_pairs(pairs, CONFIG_FIRST, CONFIG_PAIRS);
	printf(" major_faults=%llu\n", (unsigned long long)major);
}

int main(int argc, char **argv)
{
	static struct bench b;
	long page_size = sysconf(_SC_PAGESIZE);

	if (page_size <= 0)
		die_errno("sysconf(_SC_PAGESIZE)");
	b.page_size = page_size;
	parse_args(argc, argv, &b.cfg, b.page_size);
	setup(&b);
	run(&b);
	/* A rate over no round would be the time it took to start and stop. */
	if (!b.rounds) {
		fprintf(stderr, PROG ": error: no round completed in --seconds=%g (a round faults %zu pages per thread): no rate to report; run longer\n",
			b.cfg.seconds, b.cfg.fault_length / b.page_size);
		return 1;
	}
	report(&b);
	if (fflush(stdout) == EOF)
		die_errno("stdout");
	return 0;
}
