// SPDX-License-Identifier: GPL-2.0
/*
 * extract: the one reader of the benchmark's and perf's output. The harness
 * runs it on each boot's directory right after the boot; the report reads
 * only what it writes:
 *
 *   BOOTDIR/samples  "metric run value" lines: every number of every
 *                    RESULT line of bench.out (run 1, 2, ...) but the
 *                    configuration its CONFIG line names, each
 *                    counter of vmstat.delta as vmstat/NAME and, with
 *                    --lock, perf lock contention's rows as
 *                    lock/TYPE/CALLER/{contended,wait_us,max_us,avg_us}
 *                    (avg_us as perf printed it, or the mean of merged rows) and
 *                    their number as lock/rows (run "-": once a boot);
 *                    perf stat's counters (perf-stat.txt, optional) as
 *                    perf/EVENT, perf/cpu-clock_msec and perf/elapsed_s;
 *                    and the coherence plugin's count per phase
 *                    (coherence.txt and coherence.marks, optional) as
 *                    coherence/PHASE/... (extract-coherence.c)
 *   BOOTDIR/bench-config the benchmark's configuration, key=value lines: the
 *                    CONFIG line before the first RESULT line (in files
 *                    from before the benchmark printed one, the RESULT
 *                    line's keys that config_keys[] names)
 *
 * In a boot of an in-boot A/B comparison (guest/ab) a line
 * "# setting A|B SYSCTL=VALUE" precedes each run: its numbers become
 * METRIC/A or METRIC/B, run N being the N-th run of that setting, so that
 * the N-th of each make pair N.
 *
 * Input it does not understand is an error naming the file and line,
 * never a number silently dropped or read short.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extract.h"
#include "util.h"

static const char usage[] =
	"usage: report/extract [--lock LOCK.TXT] BOOTDIR\n"
	"Read BOOTDIR/bench.out (multi-fault-all's or syslatency's CONFIG and RESULT\n"
	"lines), BOOTDIR/vmstat.delta, BOOTDIR/perf-stat.txt and the coherence\n"
	"plugin's BOOTDIR/coherence.txt with BOOTDIR/coherence.marks (if there) and, with\n"
	"--lock, the output of perf lock contention; write BOOTDIR/samples (\"metric\n"
	"run value\" lines) and BOOTDIR/bench-config (key=value), which is all\n"
	"report/report, paired and syslatency-report read. In bench.out of an in-boot A/B\n"
	"boot, a line \"# setting A|B ...\" before a run makes its metrics METRIC/A\n"
	"or METRIC/B.\n"
	"Exit status: 0; 2 on bad usage and on input it cannot parse (file and line\n"
	"named), as the report's tools.\n";

/*
 * The RESULT keys that describe the configuration rather than the outcome,
 * for bench.out files without CONFIG lines (before 2026-12-02); the
 * benchmark's CONFIG line says it in newer ones.
 */
static const char *const config_keys[] = {
	"threads", "madvise", "vma", "thp", "writer", "busy", "fault_length",
	"oversubscribe", "backing", "mapping", "access", "drop",
};

static FILE *samples;
static char *config;		/* of the first RESULT line */
/* The CONFIG line before the next RESULT line: "key=value\n" lines. */
static char *pending;
static int pending_line;
/* Written under these names and renamed when complete: never half a file. */
static char *tmp_samples, *tmp_config;

static void remove_tmp(void)
{
	if (tmp_samples)
		unlink(tmp_samples);
	if (tmp_config)
		unlink(tmp_config);
}

void bad_input(const char *path, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, line ? "%s: error: %s:%d: " : "%s: error: %s: ", prog,
		path, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

static int is_config_key(const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(config_keys); i++)
		if (!strcmp(key, config_keys[i]))
			return 1;
	return 0;
}

/* The value of key in "key=value\n" lines, or NULL; its length in *len. */
static const char *pending_value(const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = pending; p && *p; p = strchr(p, '\n') + 1)
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			p += klen + 1;
			*len = strcspn(p, "\n");
			return p;
		}
	return NULL;
}

/* The whole of s as a finite number; -1 if it is not one. */
static int number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end == s || *end || errno || !isfinite(*v) ? -1 : 0;
}

/* Lines of a file, each ending in a newline: a last line without one was cut. */
char *next_line(char **text, const char *path, int *lineno)
{
	char *line = *text, *nl;

	if (!*line)
		return NULL;
	nl = strchr(line, '\n');
	++*lineno;
	if (!nl)
		bad_input(path, *lineno, "the line is cut short (no newline at the end)");
	*nl = '\0';
	*text = nl + 1;
	return line;
}

static char *slurp(const char *path)
{
	char *text = read_file(path);

	if (!text)
		bad_input(path, 0, "%s", strerror(errno));
	return text;
}

/*
 * A RESULT or CONFIG line may follow other text on the same line (a
 * console timestamp, say): the word ("RESULT ") counts where it starts a
 * word. What follows it, or NULL.
 */
static char *find_word(char *line, const char *word)
{
	char *p = line;

	while ((p = strstr(p, word))) {
		if (p == line || strchr(" \t]\r", p[-1]))
			return p + strlen(word);
		p++;
	}
	return NULL;
}

/* A CONFIG line: its pairs wait for the RESULT line that follows. */
static void config_line(char *line, const char *path, int lineno)
{
	char *tok, *save, *eq;

	if (pending)
		bad_input(path, pending_line, "a CONFIG line without its RESULT line");
	pending = xstrdup("");
	pending_line = lineno;
	for (tok = strtok_r(line, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		char *next;

		eq = strchr(tok, '=');
		if (!eq || eq == tok || !eq[1])
			bad_input(path, lineno, "'%s' in a CONFIG line is not key=value", tok);
		next = xasprintf("%s%s\n", pending, tok);
		free(pending);
		pending = next;
	}
	if (!*pending)
		bad_input(path, lineno, "an empty CONFIG line");
}

static void result_line(char *res, int run, const char *setting,
			const char *path, int lineno)
{
	char *tok, *save, *eq, *cfg = xstrdup("");
	const char *said;
	size_t len;
	int rate = 0;
	double v;

	for (tok = strtok_r(res, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		eq = strchr(tok, '=');
		if (!eq || eq == tok || !eq[1])
			bad_input(path, lineno, "'%s' in a RESULT line is not key=value", tok);
		*eq = '\0';
		said = pending ? pending_value(tok, &len) : NULL;
		if (said && (strlen(eq + 1) != len || strncmp(said, eq + 1, len)))
			bad_input(path, lineno, "%s=%s, where the CONFIG line (line %d) says %s=%.*s",
				  tok, eq + 1, pending_line, tok, (int)len, said);
		if (said)
			continue;	/* configuration: the CONFIG line has it */
		if (!pending && is_config_key(tok)) {
			char *next = xasprintf("%s%s=%s\n", cfg, tok, eq + 1);

			free(cfg);
			cfg = next;
			continue;
		}
		if (number(eq + 1, &v))
			bad_input(path, lineno, "%s=%s is not a finite number", tok, eq + 1);
		if (strstr(tok, "_per_sec") && v < 0)
			bad_input(path, lineno, "%s=%s: a rate cannot be negative", tok, eq + 1);
		/* The outcome: multi-fault-all's rate, syslatency's wake-ups. */
		rate |= !strcmp(tok, "faults_per_sec") || !strcmp(tok, "wakeups");
		fprintf(samples, "%s%s %d %s\n", tok, setting, run, eq + 1);
	}
	if (!rate)
		bad_input(path, lineno, "a RESULT line without faults_per_sec (or wakeups)");
	/* The CONFIG line's order and pairs, also those RESULT left out. */
	if (pending) {
		/* cfg is empty: every configuration key of RESULT was said */
		free(cfg);
		cfg = pending;
		pending = NULL;
	}
	if (!config)
		config = cfg;
	else if (strcmp(config, cfg))
		bad_input(path, lineno, "a RESULT line of another configuration than the first");
	else
		free(cfg);
}

static void read_bench(const char *dir)
{
	char *path = path_join(dir, "bench.out"), *text = slurp(path), *p = text;
	char *line, *res, *cfg_at, setting[3] = "";
	/* Runs are numbered per setting (A, B), or all together without one. */
	int lineno = 0, runs = 0, per_setting[2] = { 0, 0 }, *run = &runs;

	while ((line = next_line(&p, path, &lineno))) {
		if (!strncmp(line, "# setting ", 10)) {
			if ((line[10] != 'A' && line[10] != 'B') || line[11] != ' ')
				bad_input(path, lineno, "a setting other than A or B: '%s'", line);
			snprintf(setting, sizeof(setting), "/%c", line[10]);
			run = &per_setting[line[10] - 'A'];
		} else {
			cfg_at = find_word(line, "CONFIG ");
			res = cfg_at ? NULL : find_word(line, "RESULT ");
			if (cfg_at)
				config_line(cfg_at, path, lineno);
			else if (res)
				result_line(res, ++*run, setting, path, lineno);
		}
	}
	if (pending)
		bad_input(path, pending_line, "a CONFIG line without its RESULT line");
	runs += per_setting[0] + per_setting[1];
	if (!runs)
		bad_input(path, lineno, "no RESULT lines");
	free(text);
	free(path);
}

/* "name delta" lines; the file is optional (older results lack it). */
static void read_vmstat(const char *dir)
{
	char *path = path_join(dir, "vmstat.delta"), *text = read_file(path);
	char *p = text, *line, name[128], value[32], extra;
	int lineno = 0;
	double v;

	while (text && (line = next_line(&p, path, &lineno))) {
		if (sscanf(line, "%127s %31s %c", name, value, &extra) != 2 ||
		    number(value, &v) || v != floor(v))
			bad_input(path, lineno, "not a line \"counter delta\": '%s'", line);
		fprintf(samples, "vmstat/%s - %s\n", name, value);
	}
	free(text);
	free(path);
}

/*
 * perf stat's output (guest/collect-stat), optional: the mean over
 * the runs of each counter it counted, and of the time elapsed, as
 * perf/EVENT and perf/elapsed_s, once a boot:
 *
 *             96329      page-faults        #  362.675 K/sec    ( +-  3.19% )
 *   <not supported>      cache-misses
 *            262.37 msec cpu-clock          #    0.845 CPUs utilized ...
 *           0.31052 +- 0.00205 seconds time elapsed  ( +-  0.66% )
 *
 * A line that starts with a number must read as one of these (or be a
 * single run's seconds user or sys); the others (the header, events the
 * machine lacks) carry no number.
 */
static void read_perf_stat(const char *dir)
{
	char *path = path_join(dir, "perf-stat.txt"), *text = read_file(path);
	char *p = text, *line, value[32], event[64];
	int lineno = 0;
	double v;

	while (text && (line = next_line(&p, path, &lineno))) {
		line += strspn(line, " \t");
		if (*line < '0' || *line > '9')
			continue;
		if (strstr(line, " seconds user") || strstr(line, " seconds sys"))
			continue;	/* a single run's: no mean over runs */
		if (strstr(line, " seconds time elapsed")) {
			if (sscanf(line, "%31s", value) != 1 || number(value, &v) || v < 0)
				bad_input(path, lineno, "not a time elapsed: '%s'", line);
			fprintf(samples, "perf/elapsed_s - %s\n", value);
		} else if (sscanf(line, "%31s msec %63s", value, event) == 2 &&
			   !strcmp(event, "cpu-clock")) {
			if (number(value, &v) || v < 0)
				bad_input(path, lineno, "not a cpu-clock in msec: '%s'", line);
			fprintf(samples, "perf/cpu-clock_msec - %s\n", value);
		} else if (sscanf(line, "%31s %63s", value, event) == 2 &&
			   !number(value, &v) && v >= 0 && v == floor(v) &&
			   strspn(event, "abcdefghijklmnopqrstuvwxyz-") == strlen(event)) {
			fprintf(samples, "perf/%s - %s\n", event, value);
		} else {
			bad_input(path, lineno, "not a line of perf stat: '%s'", line);
		}
	}
	free(text);
	free(path);
}

/* One function's row of perf lock contention, offsets merged. */
struct lock_row {
	char *type, *caller;
	unsigned long contended;
	double wait_us, max_us, avg_us;
	int merged;		/* rows of perf's output */
};

/* perf prints times with the largest unit that fits: ns, us, ms, s, m, h. */
static int to_us(double val, const char *unit, double *us)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1e-3 }, { "us", 1 }, { "ms", 1e3 }, { "s", 1e6 },
		{ "m", 60e6 }, { "h", 3600e6 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(unit, units[i].unit)) {
			*us = val * units[i].scale;
			return 0;
		}
	return -1;
}

/*
 * perf 6.1's tracepoint mode:
 *
 *  contended   total wait     max wait     avg wait         type   caller
 *
 *         75      1.02 ms     33.71 us     13.59 us     rwsem:R   lock_mm_and_find_vma+0x5a
 *
 * then perhaps a debug summary. A line that starts with a number is a row
 * and must read as one; other lines (the header, perf's warnings, the
 * summary) carry no numbers the report shows.
 */
static void read_lock(const char *path)
{
	char *text = slurp(path), *p = text, *line, u[3][8], type[32], caller[256];
	struct lock_row *rows = NULL, row;
	size_t n = 0, cap = 0, i;
	int lineno = 0, header = 0, got;
	double total, max, avg;
	char c;

	while ((line = next_line(&p, path, &lineno))) {
		header |= strstr(line, "contended") && strstr(line, "caller");
		if (sscanf(line, " %c", &c) != 1 || c < '0' || c > '9')
			continue;
		got = sscanf(line, " %lu %lf %7s %lf %7s %lf %7s %31s %255s %c",
			     &row.contended, &total, u[0], &max, u[1], &avg, u[2],
			     type, caller, &c);
		if (got != 9 || to_us(total, u[0], &row.wait_us) ||
		    to_us(max, u[1], &row.max_us) || to_us(avg, u[2], &row.avg_us))
			bad_input(path, lineno, "not a row of perf lock contention: '%s'", line);
		caller[strcspn(caller, "+")] = '\0';
		for (i = 0; i < n; i++)
			if (!strcmp(rows[i].type, type) && !strcmp(rows[i].caller, caller))
				break;
		if (i == n) {
			rows = grow(rows, sizeof(*rows), n++, &cap);
			rows[i] = (struct lock_row){ .type = xstrdup(type),
						    .caller = xstrdup(caller) };
		}
		rows[i].contended += row.contended;
		rows[i].wait_us += row.wait_us;
		rows[i].max_us = fmax(rows[i].max_us, row.max_us);
		rows[i].avg_us = rows[i].merged++ ? rows[i].wait_us / rows[i].contended :
						    row.avg_us;
	}
	if (!header && n)
		bad_input(path, lineno, "rows without perf lock contention's header line");
	for (i = 0; i < n; i++) {
		fprintf(samples, "lock/%s/%s/contended - %lu\n", rows[i].type,
			rows[i].caller, rows[i].contended);
		fprintf(samples, "lock/%s/%s/wait_us - %.3f\n", rows[i].type,
			rows[i].caller, rows[i].wait_us);
		fprintf(samples, "lock/%s/%s/max_us - %.3f\n", rows[i].type,
			rows[i].caller, rows[i].max_us);
		fprintf(samples, "lock/%s/%s/avg_us - %.3f\n", rows[i].type,
			rows[i].caller, rows[i].avg_us);
		free(rows[i].type);
		free(rows[i].caller);
	}
	fprintf(samples, "lock/rows - %zu\n", n);
	free(rows);
	free(text);
}

static FILE *start(const char *path, char **tmp)
{
	FILE *f;

	*tmp = xasprintf("%s.tmp", path);
	f = fopen(*tmp, "w");
	if (!f)
		bad_input(*tmp, 0, "%s", strerror(errno));
	return f;
}

static void finish(FILE *f, const char *path, const char *tmp)
{
	if (fclose(f) || rename(tmp, path))
		bad_input(path, 0, "%s", strerror(errno));
}

int main(int argc, char **argv)
{
	const char *lock = NULL, *dir;
	char *path, *cpath;
	FILE *cf;

	prog = "extract";
	while (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(argv[1], "--lock") && argc > 2) {
			lock = argv[2];
			argc--, argv++;
		} else if (!strncmp(argv[1], "--lock=", 7) && argv[1][7]) {
			lock = argv[1] + 7;
		} else if (!strcmp(argv[1], "--")) {
			argc--, argv++;
			break;
		} else {
			fatal("unknown option or missing value '%s' (see --help)", argv[1]);
		}
		argc--, argv++;
	}
	if (argc != 2)
		fatal("need one BOOTDIR (see --help)");
	dir = argv[1];
	path = path_join(dir, "samples");
	cpath = path_join(dir, "bench-config");
	atexit(remove_tmp);
	samples = start(path, &tmp_samples);
	fputs("# metric run value (run '-': once a boot)\n", samples);
	read_bench(dir);
	read_vmstat(dir);
	read_perf_stat(dir);
	read_coherence(dir, samples);
	if (lock)
		read_lock(lock);
	cf = start(cpath, &tmp_config);
	fputs(config, cf);
	finish(cf, cpath, tmp_config);
	finish(samples, path, tmp_samples);
	return 0;
}
