// SPDX-License-Identifier: GPL-2.0
/*
 * syslatency: wake-up latency of sleeping threads while the machine
 * reclaims around memory that cannot be freed.
 *
 * A version of IGT's gem_syslatency without a GPU. i915 keeps the shmem
 * pages of pinned objects; since 2018 it marks their mapping unevictable
 * (mapping_set_unevictable), so reclaim culls them off the LRU lists once
 * instead of scanning them again and again. Before that, and for any other
 * long-term pin (RDMA, VFIO, io_uring fixed buffers), the pages stay on the
 * evictable LRU lists and reclaim keeps scanning pages it cannot free.
 *
 * Three processes: a holder keeps --hold-mb of memory that reclaim cannot
 * free (SysV shm under SHM_LOCK, or anonymous memory pinned as io_uring
 * fixed buffers, FOLL_LONGTERM), a pressure child forces reclaim (rewrites
 * anonymous memory so it must swap, or rereads a file through the page
 * cache), and the parent's latency threads sleep to absolute deadlines
 * with clock_nanosleep() and record how late they woke, each in its own
 * histogram (1 us buckets up to 10 ms, then one overflow bucket and the
 * exact maximum), merged at the end.
 *
 * Output: on stderr, one line at the start saying what runs; on stdout, at
 * the end, one "CONFIG key=value ..." line with the configuration and one
 * "RESULT key=value ..." line with the configuration again, the latency
 * percentiles and the /proc/vmstat reclaim counters' deltas over the
 * measurement (report/extract reads both, as it reads multi-fault-all's).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <liburing.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG			"syslatency"

#define NSEC_PER_SEC		1000000000LL
#define NSEC_PER_USEC		1000LL
#define MIB			(1UL << 20)

#define DEFAULT_PERIOD_US	1000
#define MAX_PERIOD_US		1000000
#define DEFAULT_SECONDS		10.0
#define MAX_SECONDS		1e6
#define MAX_THREADS		1024
/* --hold-mb and --pressure-mb: 1 TiB, far beyond any guest of ours. */
#define MAX_MB			(1UL << 20)
/* Defaults, in percent of MemTotal. */
#define DEFAULT_HOLD_PCT	50
#define DEFAULT_PRESSURE_PCT	75

/* 1 us buckets up to 10 ms, then one bucket for everything later. */
#define HIST_BUCKETS		10000
#define HIST_OVERFLOW		HIST_BUCKETS

/*
 * The kernel refuses a fixed buffer over 1 GiB, and more than
 * IORING_MAX_REG_BUFFERS (1 << 14) buffers on one ring. At 1 GiB an iovec,
 * MAX_MB fits in one register call on one ring.
 */
#define IOURING_MAX_IOV_BYTES	(1UL << 30)
#define IOURING_MAX_BUFFERS	(1U << 14)
_Static_assert(MAX_MB / (IOURING_MAX_IOV_BYTES / MIB) <= IOURING_MAX_BUFFERS,
	       "--hold-mb pin must fit one io_uring_register_buffers() call");

/* The pressure child's I/O unit for --pressure file. */
#define FILE_CHUNK		(64UL << 10)

enum hold_mode { HOLD_NONE, HOLD_SHMLOCK, HOLD_PIN };
enum pressure_mode { PRESSURE_NONE, PRESSURE_ANON, PRESSURE_FILE, PRESSURE_BOTH };

static const char *const hold_names[] = { "none", "shmlock", "pin" };
static const char *const pressure_names[] = { "none", "anon", "file", "both" };

struct config {
	unsigned int nthreads;		/* latency threads; 0: online CPUs */
	unsigned int period_us;
	double seconds;
	enum hold_mode hold;
	unsigned long hold_mb;		/* 0: DEFAULT_HOLD_PCT of MemTotal */
	enum pressure_mode pressure;
	unsigned long pressure_mb;	/* 0: DEFAULT_PRESSURE_PCT of MemTotal */
	unsigned long file_mb;		/* the file's part of it; 0: all or half */
	const char *dir;		/* where --pressure file writes */
	const char *histogram;		/* --histogram FILE, or NULL */
};

/* A latency histogram: counts per 1 us bucket, and exact sum and max. */
struct hist {
	uint64_t count[HIST_BUCKETS + 1];
	uint64_t n;
	uint64_t sum_ns;
	uint64_t max_ns;
};

/* One latency thread. Aligned so no two threads' counters share a line. */
struct sleeper {
	pthread_t tid;
	long long period_ns;
	long long end_ns;		/* CLOCK_MONOTONIC: stop sleeping here */
	struct hist *hist;
} __attribute__((aligned(64)));

/* The /proc/vmstat counters reported, those this kernel has. */
static const char *const vmstat_keys[] = {
	"pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct",
	"pgactivate", "pswpin", "pswpout", "unevictable_pgs_culled",
	"unevictable_pgs_scanned", "unevictable_pgs_rescued",
	"unevictable_pgs_mlocked",
};
#define NR_VMSTAT	(sizeof(vmstat_keys) / sizeof(vmstat_keys[0]))

struct vmstat {
	bool present[NR_VMSTAT];
	unsigned long long value[NR_VMSTAT];
};

/*
 * The children, for the exit handler: every error path of the parent ends
 * in exit(), which must not leave a child running (they would also die by
 * PR_SET_PDEATHSIG, but unreaped and with SIGKILL). The children run the
 * same exit() paths: owner tells them apart.
 */
enum { CHILD_HOLDER, CHILD_PRESSURE, NR_CHILDREN };
static const char *const child_names[] = { "holder", "pressure child" };
static struct {
	pid_t owner;
	pid_t pid[NR_CHILDREN];
} children;

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

/* Runtime failures: one line, exit status 1. */
static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The same with errno's text appended, perror-style. */
static void __attribute__((noreturn, format(printf, 1, 2))) die_errno(const char *fmt, ...)
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

/* pthread calls and liburing return their error instead of setting errno. */
static void check_err(int err, const char *what)
{
	if (err) {
		errno = err;
		die_errno("%s", what);
	}
}

static void usage(void)
{
	printf("Usage: " PROG " [options]\n"
	       "\n"
	       "Wake-up latency under memory pressure (gem_syslatency without a GPU).\n"
	       "Latency threads sleep with clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)\n"
	       "to deadlines one period apart, with 1 ns of timer slack, and record how late\n"
	       "they woke (actual - target), while a holder process keeps memory that\n"
	       "reclaim cannot free and a pressure process forces reclaim. The holder starts\n"
	       "first (and is waited for until its memory is resident), then the pressure\n"
	       "child; after 1 s the threads measure for --seconds, then both children are\n"
	       "stopped. Without --hold and --pressure nothing else runs: the baseline.\n"
	       "\n"
	       "Options:\n"
	       "  --threads N         latency threads, not pinned (default: online CPUs)\n"
	       "  --period-us P       sleep period in microseconds (default: %d); a thread\n"
	       "                      that wakes more than a period late skips the missed\n"
	       "                      deadlines instead of catching up\n"
	       "  --seconds S         measure for S seconds, fractions allowed (default: %g)\n"
	       "  --hold none         hold nothing (default)\n"
	       "  --hold shmlock      a SysV shm segment locked with SHM_LOCK and touched page\n"
	       "                      by page: unevictable pages, off the LRU lists once reclaim\n"
	       "                      culls them (what i915 does since 2018)\n"
	       "  --hold pin          anonymous memory registered as io_uring fixed buffers\n"
	       "                      (FOLL_LONGTERM pins, at most 1 GiB an iovec): pages\n"
	       "                      reclaim cannot free that stay on the evictable LRU lists\n"
	       "                      (what i915 did before). Needs io_uring, and RLIMIT_MEMLOCK\n"
	       "                      (raised to unlimited when allowed, as root)\n"
	       "  --hold-mb M         MiB held (default 0: %d%% of MemTotal)\n"
	       "  --pressure none     no pressure (default)\n"
	       "  --pressure anon     a child rewrites --pressure-mb of anonymous memory page by\n"
	       "                      page in a loop, so it must swap\n"
	       "  --pressure file     a child writes a file of --pressure-mb in --dir and reads\n"
	       "                      it back with pread() in a loop: page cache pressure. The\n"
	       "                      file is unlinked as soon as it is open, nothing is left\n"
	       "                      behind; on a tmpfs it is shmem and swaps like anon\n"
	       "  --pressure both     anon and file, each --pressure-mb / 2 unless --file-mb\n"
	       "  --pressure-mb M     MiB of pressure (default 0: %d%% of MemTotal)\n"
	       "  --file-mb M         with --pressure both: the file's MiB, the rest anon (a\n"
	       "                      file system smaller than half the pressure, say)\n"
	       "  --dir DIR           where --pressure file writes (default: /tmp)\n"
	       "  --histogram FILE    write the merged histogram to FILE, two columns\n"
	       "                      'latency_us count', non-empty buckets only; latency_us is\n"
	       "                      the upper edge of a 1 us bucket ('5 12': 12 wake-ups at\n"
	       "                      least 4 and less than 5 us late); the last line, the\n"
	       "                      overflow bucket (%d us late or more), is at the maximum\n"
	       "  -h, --help          show this help and exit\n"
	       "\n"
	       "Output: on stderr one line saying what runs; on stdout, at the end, one line\n"
	       "'CONFIG key=value ...' with hold, hold_mb, pressure, pressure_mb, threads,\n"
	       "period_us and seconds, and one line 'RESULT key=value ...' with the same,\n"
	       "then wakeups, mean_ns, p50_ns, p99_ns, p999_ns, max_ns,\n"
	       "over_10ms (wake-ups more than 10 ms late), then the deltas over the\n"
	       "measurement of the /proc/vmstat counters this kernel has of pgscan_kswapd,\n"
	       "pgscan_direct, pgsteal_kswapd, pgsteal_direct, pgactivate, pswpin, pswpout,\n"
	       "unevictable_pgs_culled, unevictable_pgs_scanned, unevictable_pgs_rescued and\n"
	       "unevictable_pgs_mlocked (absent ones are left out). A percentile is the upper\n"
	       "edge of the 1 us bucket it falls in, at most max_ns, or max_ns beyond 10 ms;\n"
	       "mean_ns and max_ns are exact.\n"
	       "Exit status: 0 on success; 1 when something fails at run time (shmget or\n"
	       "SHM_LOCK refused, io_uring not available, a child killed, by the OOM killer\n"
	       "say) or no wake-up was measured; 2 on bad arguments.\n",
	       DEFAULT_PERIOD_US, DEFAULT_SECONDS, DEFAULT_HOLD_PCT, DEFAULT_PRESSURE_PCT,
	       HIST_BUCKETS);
}

static long long now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die_errno("clock_gettime");
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct timespec ns_to_timespec(long long ns)
{
	return (struct timespec) { .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };
}

/* A decimal number in [min, max]; OPT names the option in the message. */
static unsigned long parse_ulong(const char *opt, const char *s, unsigned long min,
				 unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	/* strtoul takes "-1" and " 1": only digits are numbers here. */
	if (*s < '0' || *s > '9' || *end || errno)
		usage_error("invalid %s '%s': must be %s integer", opt, s,
			    min ? "a positive" : "a non-negative");
	if (v < min)
		usage_error("invalid %s '%s': must be a positive integer", opt, s);
	if (v > max)
		usage_error("%s '%s' is too large (at most %lu)", opt, s, max);
	return v;
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

static enum hold_mode parse_hold(const char *s)
{
	for (unsigned int i = 0; i < sizeof(hold_names) / sizeof(hold_names[0]); i++)
		if (!strcmp(s, hold_names[i]))
			return i;
	usage_error("invalid --hold '%s': must be 'none', 'shmlock' or 'pin'", s);
}

static enum pressure_mode parse_pressure(const char *s)
{
	for (unsigned int i = 0; i < sizeof(pressure_names) / sizeof(pressure_names[0]); i++)
		if (!strcmp(s, pressure_names[i]))
			return i;
	usage_error("invalid --pressure '%s': must be 'none', 'anon', 'file' or 'both'", s);
}

static const char *parse_path(const char *opt, const char *s)
{
	if (!*s)
		usage_error("invalid %s '': must be a path", opt);
	/* "--dir --seconds=1" took the next option for its value. */
	if (*s == '-')
		usage_error("invalid %s '%s': must be a path (./%s for one whose name starts with '-')",
			    opt, s, s);
	return s;
}

enum {
	OPT_THREADS = 256, OPT_PERIOD_US, OPT_SECONDS, OPT_HOLD, OPT_HOLD_MB,
	OPT_PRESSURE, OPT_PRESSURE_MB, OPT_FILE_MB, OPT_DIR, OPT_HISTOGRAM,
};

static const struct option long_options[] = {
	{ "threads",		required_argument,	NULL, OPT_THREADS },
	{ "period-us",		required_argument,	NULL, OPT_PERIOD_US },
	{ "seconds",		required_argument,	NULL, OPT_SECONDS },
	{ "hold",		required_argument,	NULL, OPT_HOLD },
	{ "hold-mb",		required_argument,	NULL, OPT_HOLD_MB },
	{ "pressure",		required_argument,	NULL, OPT_PRESSURE },
	{ "pressure-mb",	required_argument,	NULL, OPT_PRESSURE_MB },
	{ "file-mb",		required_argument,	NULL, OPT_FILE_MB },
	{ "dir",		required_argument,	NULL, OPT_DIR },
	{ "histogram",		required_argument,	NULL, OPT_HISTOGRAM },
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
	usage_error("unknown option '-%c'", optopt);
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
	int c;

	*cfg = (struct config) {
		.period_us = DEFAULT_PERIOD_US,
		.seconds = DEFAULT_SECONDS,
		.dir = "/tmp",
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_THREADS:
			cfg->nthreads = parse_ulong("--threads", optarg, 1, MAX_THREADS);
			break;
		case OPT_PERIOD_US:
			cfg->period_us = parse_ulong("--period-us", optarg, 1, MAX_PERIOD_US);
			break;
		case OPT_SECONDS:
			cfg->seconds = parse_seconds(optarg);
			break;
		case OPT_HOLD:
			cfg->hold = parse_hold(optarg);
			break;
		case OPT_HOLD_MB:
			cfg->hold_mb = parse_ulong("--hold-mb", optarg, 0, MAX_MB);
			break;
		case OPT_PRESSURE:
			cfg->pressure = parse_pressure(optarg);
			break;
		case OPT_PRESSURE_MB:
			cfg->pressure_mb = parse_ulong("--pressure-mb", optarg, 0, MAX_MB);
			break;
		case OPT_FILE_MB:
			cfg->file_mb = parse_ulong("--file-mb", optarg, 1, MAX_MB);
			break;
		case OPT_DIR:
			cfg->dir = parse_path("--dir", optarg);
			break;
		case OPT_HISTOGRAM:
			cfg->histogram = parse_path("--histogram", optarg);
			break;
		case 'h':
			usage();
			exit(0);
		default:
			bad_option(c, argv);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s': " PROG " takes options only", argv[optind]);
	if (cfg->file_mb && cfg->pressure != PRESSURE_BOTH)
		usage_error("--file-mb splits --pressure both: not with --pressure %s",
			    pressure_names[cfg->pressure]);
	if (cfg->file_mb && cfg->pressure_mb && cfg->file_mb >= cfg->pressure_mb)
		usage_error("--file-mb %lu leaves no anonymous pressure of --pressure-mb %lu",
			    cfg->file_mb, cfg->pressure_mb);
}

/* MemTotal from /proc/meminfo, in MiB. */
static unsigned long memtotal_mb(void)
{
	unsigned long long kb;
	char line[256];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		die_errno("/proc/meminfo");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
			fclose(f);
			return kb >> 10;
		}
	}
	fclose(f);
	die("/proc/meminfo has no MemTotal line");
}

/* The defaults that depend on the machine, and none for mode none. */
static void resolve_sizes(struct config *cfg)
{
	unsigned long total = 0;

	if ((cfg->hold != HOLD_NONE && !cfg->hold_mb) ||
	    (cfg->pressure != PRESSURE_NONE && !cfg->pressure_mb))
		total = memtotal_mb();
	if (cfg->hold == HOLD_NONE)
		cfg->hold_mb = 0;
	else if (!cfg->hold_mb)
		cfg->hold_mb = total * DEFAULT_HOLD_PCT / 100 ?: 1;
	if (cfg->pressure == PRESSURE_NONE)
		cfg->pressure_mb = 0;
	else if (!cfg->pressure_mb)
		cfg->pressure_mb = total * DEFAULT_PRESSURE_PCT / 100 ?: 1;
	if (cfg->file_mb >= cfg->pressure_mb && cfg->file_mb)
		die("--file-mb %lu leaves no anonymous pressure of %lu MiB (%d%% of MemTotal)",
		    cfg->file_mb, cfg->pressure_mb, DEFAULT_PRESSURE_PCT);
	if (!cfg->nthreads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		if (n < 1)
			die_errno("sysconf(_SC_NPROCESSORS_ONLN)");
		cfg->nthreads = n < MAX_THREADS ? n : MAX_THREADS;
	}
}

/* ---- children ---------------------------------------------------------- */

/* Stop and reap the children still running; at exit, so on error paths too. */
static void reap_children(void)
{
	if (getpid() != children.owner)
		return;
	for (int i = 0; i < NR_CHILDREN; i++) {
		if (children.pid[i] <= 0)
			continue;
		/* Best effort: the process is exiting whatever they return. */
		kill(children.pid[i], SIGKILL);
		while (waitpid(children.pid[i], NULL, 0) < 0 && errno == EINTR)
			;
		children.pid[i] = 0;
	}
}

/*
 * In a child: die with the parent, so that nothing outlives a parent killed
 * by a signal. PR_SET_PDEATHSIG follows the thread that forked: the main
 * thread, which lives as long as the process.
 */
static void child_init(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		die_errno("prctl(PR_SET_PDEATHSIG)");
	/* The parent died before prctl(): nobody would kill us. */
	if (getppid() != parent)
		_exit(1);
	/* SIGTERM from the parent ends us: its default action. */
	if (signal(SIGTERM, SIG_DFL) == SIG_ERR)
		die_errno("signal(SIGTERM)");
}

/* In a child: tell the parent its setup is done. */
static void child_ready(int fd)
{
	char c = 'R';

	if (write(fd, &c, 1) != 1)
		die_errno("write to the parent's pipe");
	if (close(fd))
		die_errno("close");
}

/* In the holder: RLIMIT_MEMLOCK to unlimited when allowed (root). */
static void raise_memlock(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (!setrlimit(RLIMIT_MEMLOCK, &rl))
		return;
	if (errno != EPERM)
		die_errno("setrlimit(RLIMIT_MEMLOCK)");
	/* Not root: the soft limit up to the hard one, the most we may. */
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		die_errno("getrlimit(RLIMIT_MEMLOCK)");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		die_errno("setrlimit(RLIMIT_MEMLOCK)");
}

static void touch_pages(char *p, size_t bytes, size_t page_size)
{
	for (size_t off = 0; off < bytes; off += page_size)
		p[off] = 1;
}

/*
 * --hold shmlock: a SysV segment, SHM_LOCK'd, every page touched. The
 * segment is marked IPC_RMID as soon as it is attached: it lives while we
 * do and goes with us however we end, SIGKILL included.
 */
static void hold_shmlock(size_t bytes, size_t page_size)
{
	char *p;
	int id;

	id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | IPC_EXCL | 0600);
	if (id < 0)
		die_errno("shmget of %zu MiB", bytes / MIB);
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		int err = errno;

		shmctl(id, IPC_RMID, NULL);
		errno = err;
		die_errno("shmat");
	}
	if (shmctl(id, IPC_RMID, NULL))
		die_errno("shmctl(IPC_RMID)");
	/* Linux keeps the id of a removed segment usable while it is attached. */
	if (shmctl(id, SHM_LOCK, NULL)) {
		if (errno == EPERM || errno == ENOMEM)
			die_errno("shmctl(SHM_LOCK) of %zu MiB refused (RLIMIT_MEMLOCK, or CAP_IPC_LOCK)",
				  bytes / MIB);
		die_errno("shmctl(SHM_LOCK)");
	}
	/* SHM_LOCK allocates nothing: the pages come with the first touch. */
	touch_pages(p, bytes, page_size);
}

/*
 * --hold pin: anonymous memory registered as io_uring fixed buffers,
 * which pins its pages with FOLL_LONGTERM. The ring's file keeps the pins
 * after we return; they go when we exit.
 */
static void hold_pin(size_t bytes, size_t page_size)
{
	/* Static: the ring the holder keeps open, not this call's. */
	static struct io_uring ring;
	unsigned int nr = (bytes + IOURING_MAX_IOV_BYTES - 1) / IOURING_MAX_IOV_BYTES;
	struct iovec *iov;
	char *p;
	int ret;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die_errno("mmap of %zu MiB", bytes / MIB);
	/* 4 KiB pages, as shm's: reclaim meets each of them, not a few THPs. */
	if (madvise(p, bytes, MADV_NOHUGEPAGE))
		die_errno("madvise(MADV_NOHUGEPAGE)");
	touch_pages(p, bytes, page_size);

	ret = io_uring_queue_init(1, &ring, 0);
	if (ret == -ENOSYS || ret == -EPERM)
		die("io_uring not available: io_uring_setup: %s", strerror(-ret));
	check_err(-ret, "io_uring_queue_init");

	iov = calloc(nr, sizeof(*iov));
	if (!iov)
		die_errno("calloc");
	for (unsigned int i = 0; i < nr; i++) {
		size_t off = (size_t)i * IOURING_MAX_IOV_BYTES;

		iov[i].iov_base = p + off;
		iov[i].iov_len = bytes - off < IOURING_MAX_IOV_BYTES ?
				 bytes - off : IOURING_MAX_IOV_BYTES;
	}
	ret = io_uring_register_buffers(&ring, iov, nr);
	if (ret == -ENOMEM || ret == -EPERM)
		die("io_uring_register_buffers of %zu MiB: %s (RLIMIT_MEMLOCK too small?)",
		    bytes / MIB, strerror(-ret));
	check_err(-ret, "io_uring_register_buffers");
	free(iov);
}

/*
 * Fork a child that runs FN(cfg, page_size, fd), which writes one byte to
 * fd once its setup is done; *ready gets the other end of that pipe.
 */
static pid_t start_child(void (*fn)(const struct config *, size_t, int),
			 const struct config *cfg, size_t page_size, int *ready)
{
	pid_t parent = getpid(), pid;
	int fd[2];

	if (pipe(fd))
		die_errno("pipe");
	/* Nothing buffered may be written twice, by the child's exit() too. */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die_errno("fork");
	if (pid == 0) {
		if (close(fd[0]))
			die_errno("close");
		child_init(parent);
		fn(cfg, page_size, fd[1]);
		_exit(1);
	}
	if (close(fd[1]))
		die_errno("close");
	*ready = fd[0];
	return pid;
}

static void holder_main(const struct config *cfg, size_t page_size, int ready)
{
	size_t bytes = cfg->hold_mb * MIB;

	raise_memlock();
	if (cfg->hold == HOLD_SHMLOCK)
		hold_shmlock(bytes, page_size);
	else
		hold_pin(bytes, page_size);
	child_ready(ready);
	/* Until the parent's SIGTERM, or its death (PR_SET_PDEATHSIG). */
	for (;;)
		pause();
}

/* --pressure anon's memory, mapped but not yet written. */
static unsigned char *anon_setup(size_t bytes)
{
	unsigned char *p;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die_errno("mmap of %zu MiB", bytes / MIB);
	/* Page-sized pages: swapped out one by one, not THPs split first. */
	if (madvise(p, bytes, MADV_NOHUGEPAGE))
		die_errno("madvise(MADV_NOHUGEPAGE)");
	return p;
}

/* Rewrite every page, for ever: reclaim must swap them out and in. */
static void __attribute__((noreturn)) anon_loop(unsigned char *p, size_t bytes, size_t page_size)
{
	for (unsigned char v = 1;; v++)
		for (size_t off = 0; off < bytes; off += page_size)
			p[off] = v;
}

struct file_pressure {
	const char *dir;
	size_t bytes;
	int fd;
};

/* The file, unlinked as soon as it is open: nothing is left however we end. */
static void file_setup(struct file_pressure *fp)
{
	char *path;

	if (asprintf(&path, "%s/" PROG ".XXXXXX", fp->dir) < 0)
		die("asprintf: out of memory");
	fp->fd = mkstemp(path);
	if (fp->fd < 0)
		die_errno("--dir %s: cannot create a file there", fp->dir);
	if (unlink(path))
		die_errno("unlink %s", path);
	free(path);
}

/* Write the file once, then read it back with pread() for ever. */
static void *file_loop(void *arg)
{
	static char buf[FILE_CHUNK];
	const struct file_pressure *fp = arg;

	memset(buf, 0x5a, sizeof(buf));
	for (size_t off = 0; off < fp->bytes; off += sizeof(buf)) {
		size_t n = fp->bytes - off < sizeof(buf) ? fp->bytes - off : sizeof(buf);

		ssize_t done = pwrite(fp->fd, buf, n, off);

		if (done < 0)
			die_errno("--dir %s: write of %zu MiB", fp->dir, fp->bytes / MIB);
		if (done != (ssize_t)n)
			die("--dir %s: full after %zu of %zu MiB (a smaller file: --file-mb)",
			    fp->dir, (off + done) / MIB, fp->bytes / MIB);
	}
	/* Clean pages: reclaim drops them without waiting for writeback. */
	if (fsync(fp->fd))
		die_errno("--dir %s: fsync", fp->dir);
	for (;;)
		for (size_t off = 0; off < fp->bytes; off += sizeof(buf))
			if (pread(fp->fd, buf, sizeof(buf), off) < 0)
				die_errno("--dir %s: pread", fp->dir);
	return NULL;
}

/*
 * The pressure child. With --pressure both, a second thread of the same
 * process does the file half: a failure in either, or the OOM killer,
 * ends the one process the parent watches.
 */
static void pressure_main(const struct config *cfg, size_t page_size, int ready)
{
	struct file_pressure fp = { .dir = cfg->dir, .fd = -1 };
	size_t bytes = cfg->pressure_mb * MIB, anon_bytes = 0;
	unsigned char *anon = NULL;
	pthread_t tid;
	int oom;

	/* Should memory run out, the OOM killer takes this process first. */
	oom = open("/proc/self/oom_score_adj", O_WRONLY);
	if (oom < 0 || write(oom, "1000", 4) != 4 || close(oom))
		die_errno("/proc/self/oom_score_adj");
	switch (cfg->pressure) {
	case PRESSURE_ANON:
		anon_bytes = bytes;
		break;
	case PRESSURE_FILE:
		fp.bytes = bytes;
		break;
	default:
		fp.bytes = cfg->file_mb ? cfg->file_mb * MIB : bytes / 2;
		anon_bytes = bytes - fp.bytes;
		break;
	}
	if (fp.bytes)
		file_setup(&fp);
	if (anon_bytes)
		anon = anon_setup(anon_bytes);
	child_ready(ready);
	if (!anon)
		file_loop(&fp);
	if (fp.bytes)
		check_err(pthread_create(&tid, NULL, file_loop, &fp), "pthread_create");
	anon_loop(anon, anon_bytes, page_size);
}

/* What a child's wait status says, in words, for one error line. */
static void describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		snprintf(buf, len, "was killed by SIGKILL (the OOM killer? see dmesg)");
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "stopped (status 0x%x)", status);
}

static int wait_child(int i, int flags)
{
	int status;
	pid_t ret;

	do
		ret = waitpid(children.pid[i], &status, flags);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		die_errno("waitpid for the %s", child_names[i]);
	if (ret == 0)
		return -1;
	children.pid[i] = 0;
	return status;
}

/*
 * A child that ended before it was told to: fail. One that exited with
 * status 1 printed its own line already.
 */
static void __attribute__((noreturn)) child_failed(int i, int status)
{
	char why[128];

	if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		exit(1);
	describe_status(status, why, sizeof(why));
	die("the %s %s", child_names[i], why);
}

/* Block until the child says it is ready; fail if it died instead. */
static void wait_ready(int i, int fd)
{
	ssize_t n;
	char c;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die_errno("read from the %s's pipe", child_names[i]);
	if (close(fd))
		die_errno("close");
	if (n == 0)
		child_failed(i, wait_child(i, 0));
}

/* Both children still running, or fail naming the one that is not. */
static void check_children(void)
{
	for (int i = 0; i < NR_CHILDREN; i++) {
		int status;

		if (children.pid[i] <= 0)
			continue;
		status = wait_child(i, WNOHANG);
		if (status != -1)
			child_failed(i, status);
	}
}

/* SIGTERM, and reap; anything but death by that SIGTERM is a failure. */
static void stop_children(void)
{
	check_children();
	for (int i = 0; i < NR_CHILDREN; i++) {
		pid_t pid = children.pid[i];
		int status;

		if (pid <= 0)
			continue;
		if (kill(pid, SIGTERM))
			die_errno("kill the %s", child_names[i]);
		status = wait_child(i, 0);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM)
			child_failed(i, status);
	}
}

/* ---- measurement ------------------------------------------------------- */

static void read_vmstat(struct vmstat *vs)
{
	unsigned long long v;
	char key[64];
	FILE *f;

	memset(vs, 0, sizeof(*vs));
	f = fopen("/proc/vmstat", "r");
	if (!f)
		die_errno("/proc/vmstat");
	while (fscanf(f, "%63s %llu", key, &v) == 2) {
		for (size_t i = 0; i < NR_VMSTAT; i++) {
			if (!strcmp(key, vmstat_keys[i])) {
				vs->present[i] = true;
				vs->value[i] = v;
			}
		}
	}
	if (ferror(f))
		die_errno("read /proc/vmstat");
	fclose(f);
}

static void hist_add(struct hist *h, uint64_t ns)
{
	uint64_t us = ns / NSEC_PER_USEC;

	h->count[us < HIST_BUCKETS ? us : HIST_OVERFLOW]++;
	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/*
 * Sleep to deadlines one period apart until end_ns; record how late each
 * wake-up was. Only this thread writes its histogram: no locks, no shared
 * lines. A wake-up more than a period late skips the deadlines it missed:
 * catching up would count one stall many times.
 */
static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	long long target;

	/*
	 * The default 50 us of timer slack would let the kernel delay every
	 * wake-up by that much on purpose: measure the lateness it cannot help.
	 */
	if (prctl(PR_SET_TIMERSLACK, 1UL))
		die_errno("prctl(PR_SET_TIMERSLACK)");
	target = now_ns() + s->period_ns;
	while (target < s->end_ns) {
		struct timespec ts = ns_to_timespec(target);
		long long woke;
		int err;

		do
			err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		while (err == EINTR);
		check_err(err, "clock_nanosleep");
		woke = now_ns();
		hist_add(s->hist, woke > target ? woke - target : 0);
		target += s->period_ns;
		while (target <= woke)
			target += s->period_ns;
	}
	return NULL;
}

static void measure(const struct config *cfg, struct hist *total)
{
	struct sleeper *s;
	long long end;

	s = calloc(cfg->nthreads, sizeof(*s));
	if (!s)
		die_errno("calloc");
	end = now_ns() + (long long)(cfg->seconds * NSEC_PER_SEC);
	for (unsigned int i = 0; i < cfg->nthreads; i++) {
		s[i].period_ns = cfg->period_us * NSEC_PER_USEC;
		s[i].end_ns = end;
		s[i].hist = calloc(1, sizeof(*s[i].hist));
		if (!s[i].hist)
			die_errno("calloc");
		check_err(pthread_create(&s[i].tid, NULL, sleeper_main, &s[i]), "pthread_create");
	}
	memset(total, 0, sizeof(*total));
	for (unsigned int i = 0; i < cfg->nthreads; i++) {
		struct hist *h = s[i].hist;

		check_err(pthread_join(s[i].tid, NULL), "pthread_join");
		for (unsigned int b = 0; b <= HIST_OVERFLOW; b++)
			total->count[b] += h->count[b];
		total->n += h->n;
		total->sum_ns += h->sum_ns;
		if (h->max_ns > total->max_ns)
			total->max_ns = h->max_ns;
		free(h);
	}
	free(s);
}

/*
 * The quantile of PERMILLE/1000: the upper edge of the first bucket where
 * the count so far reaches that share of all, capped at the exact maximum
 * (the overflow bucket's only edge).
 */
static uint64_t percentile(const struct hist *h, unsigned int permille)
{
	uint64_t rank = (h->n * permille + 999) / 1000, cum = 0;

	if (rank < 1)
		rank = 1;
	for (unsigned int b = 0; b < HIST_BUCKETS; b++) {
		cum += h->count[b];
		if (cum >= rank) {
			uint64_t edge = (b + 1) * NSEC_PER_USEC;

			return edge < h->max_ns ? edge : h->max_ns;
		}
	}
	return h->max_ns;
}

static void write_histogram(FILE *f, const char *path, const struct hist *h)
{
	for (unsigned int b = 0; b < HIST_BUCKETS; b++)
		if (h->count[b])
			fprintf(f, "%u %" PRIu64 "\n", b + 1, h->count[b]);
	if (h->count[HIST_OVERFLOW])
		fprintf(f, "%" PRIu64 " %" PRIu64 "\n",
			(uint64_t)((h->max_ns + NSEC_PER_USEC - 1) / NSEC_PER_USEC),
			h->count[HIST_OVERFLOW]);
	if (fclose(f))
		die_errno("--histogram %s", path);
}

static void print_result(const struct config *cfg, const struct hist *h,
			 const struct vmstat *before, const struct vmstat *after)
{
	printf("CONFIG hold=%s hold_mb=%lu pressure=%s pressure_mb=%lu threads=%u period_us=%u "
	       "seconds=%g\n", hold_names[cfg->hold], cfg->hold_mb, pressure_names[cfg->pressure],
	       cfg->pressure_mb, cfg->nthreads, cfg->period_us, cfg->seconds);
	printf("RESULT hold=%s hold_mb=%lu pressure=%s pressure_mb=%lu threads=%u period_us=%u "
	       "seconds=%g wakeups=%" PRIu64 " mean_ns=%" PRIu64 " p50_ns=%" PRIu64
	       " p99_ns=%" PRIu64 " p999_ns=%" PRIu64 " max_ns=%" PRIu64 " over_10ms=%" PRIu64,
	       hold_names[cfg->hold], cfg->hold_mb, pressure_names[cfg->pressure],
	       cfg->pressure_mb, cfg->nthreads, cfg->period_us, cfg->seconds, h->n,
	       h->sum_ns / h->n, percentile(h, 500), percentile(h, 990),
	       percentile(h, 999), h->max_ns, h->count[HIST_OVERFLOW]);
	for (size_t i = 0; i < NR_VMSTAT; i++)
		if (before->present[i] && after->present[i])
			printf(" %s=%llu", vmstat_keys[i], after->value[i] - before->value[i]);
	printf("\n");
	if (fflush(stdout) || ferror(stdout))
		die_errno("write to stdout");
}

static void say_what_runs(const struct config *cfg)
{
	fprintf(stderr, PROG ": %u thread%s waking every %u us for %g s; hold %s",
		cfg->nthreads, cfg->nthreads == 1 ? "" : "s", cfg->period_us, cfg->seconds,
		hold_names[cfg->hold]);
	if (cfg->hold != HOLD_NONE)
		fprintf(stderr, " %lu MiB", cfg->hold_mb);
	fprintf(stderr, ", pressure %s", pressure_names[cfg->pressure]);
	if (cfg->pressure != PRESSURE_NONE)
		fprintf(stderr, " %lu MiB", cfg->pressure_mb);
	if (cfg->pressure == PRESSURE_FILE || cfg->pressure == PRESSURE_BOTH)
		fprintf(stderr, " in %s", cfg->dir);
	fprintf(stderr, " (--help for the options)\n");
}

int main(int argc, char **argv)
{
	struct vmstat before, after;
	FILE *histogram = NULL;
	struct config cfg;
	struct hist *total;
	long page_size;
	int ready;

	parse_args(argc, argv, &cfg);
	resolve_sizes(&cfg);
	page_size = sysconf(_SC_PAGESIZE);
	if (page_size < 1)
		die_errno("sysconf(_SC_PAGESIZE)");
	/* Before anything starts: a bad path fails at once. */
	if (cfg.histogram) {
		histogram = fopen(cfg.histogram, "w");
		if (!histogram)
			die_errno("--histogram %s", cfg.histogram);
	}
	total = malloc(sizeof(*total));
	if (!total)
		die_errno("malloc");
	say_what_runs(&cfg);

	children.owner = getpid();
	if (atexit(reap_children))
		die("atexit failed");
	if (cfg.hold != HOLD_NONE) {
		children.pid[CHILD_HOLDER] = start_child(holder_main, &cfg, page_size, &ready);
		wait_ready(CHILD_HOLDER, ready);
	}
	if (cfg.pressure != PRESSURE_NONE) {
		children.pid[CHILD_PRESSURE] = start_child(pressure_main, &cfg, page_size, &ready);
		wait_ready(CHILD_PRESSURE, ready);
		/* Time for the pressure to fill memory and reclaim to start. */
		if (sleep(1))
			die_errno("sleep");
		check_children();
	}

	read_vmstat(&before);
	measure(&cfg, total);
	read_vmstat(&after);
	stop_children();

	if (!total->n)
		die("no wake-up measured in --seconds=%g (--period-us=%u): nothing to report",
		    cfg.seconds, cfg.period_us);
	if (histogram)
		write_histogram(histogram, cfg.histogram, total);
	print_result(&cfg, total, &before, &after);
	free(total);
	return 0;
}
