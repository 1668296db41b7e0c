// SPDX-License-Identifier: GPL-2.0
/*
 * extract's reader of a boot's coherence count (extract.h): the plugin's
 * key-value section (qemu/coherence/coherence.c, format coherence-1)
 * and the guest's MARK lines (guest/phase-mark), one per marker, in the
 * order the markers ran. Mark i (from 1) starts the plugin's phase i, so
 * the phase between marks i and i + 1 is named by mark i's label, and
 * its faults and seconds are the differences of the two marks'; its top
 * lines are samples "coherence/LABEL/line/ADDR/TOP-FUNCTION"; with
 * insns=on, its instructions "coherence/LABEL/insns" and its functions'
 * "coherence/LABEL/insn_function/NAME". The last
 * phase, from the last mark to QEMU's exit, is not a measured one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extract.h"

#define MAX_MARKS 63	/* the plugin's MAX_PHASES - 1 */

struct mark {
	char label[64];
	uint64_t pgfault;
	double seconds;
};

static const char *const phase_keys[] = {
	"accesses", "transfers", "atomics", "atomic_transfers", "insns",
};

static size_t read_marks(const char *path, struct mark *m)
{
	char *text = read_file(path), *p = text, *line, extra;
	size_t n = 0;
	int lineno = 0, len;

	if (!text)
		bad_input(path, 0, "%s", strerror(errno));
	while ((line = next_line(&p, path, &lineno))) {
		if (n == MAX_MARKS)
			bad_input(path, lineno, "more than %d marks", MAX_MARKS);
		len = 0;
		if (sscanf(line, "MARK label=%63[A-Za-z0-9_.-] pgfault=%" SCNu64 " seconds=%lf%n %c",
			   m[n].label, &m[n].pgfault, &m[n].seconds, &len, &extra) != 3 ||
		    (size_t)len != strlen(line))
			bad_input(path, lineno, "not a line \"MARK label=L pgfault=N seconds=S\": '%s'", line);
		if (n && (m[n].pgfault < m[n - 1].pgfault || m[n].seconds < m[n - 1].seconds))
			bad_input(path, lineno, "pgfault or seconds went backwards");
		n++;
	}
	if (n < 2)
		bad_input(path, lineno, "%zu marks: a phase needs two", n);
	free(text);
	return n;
}

/* The phase of a "phase.K.KEY" word, KEY in *key; -1 if it is not one. */
static int phase_of(const char *word, const char **key)
{
	char *end;
	long k;

	if (strncmp(word, "phase.", 6))
		return -1;
	k = strtol(word + 6, &end, 10);
	if (end == word + 6 || *end != '.' || k < 0 || k > MAX_MARKS)
		return -1;
	*key = end + 1;
	return (int)k;
}

void read_coherence(const char *dir, FILE *samples)
{
	char *mpath = path_join(dir, "coherence.marks"), *cpath = path_join(dir, "coherence.txt");
	int has_m = !access(mpath, F_OK), has_c = !access(cpath, F_OK);
	struct mark m[MAX_MARKS];
	char *text, *p, *line, word[256], name[256], extra;
	int lineno = 0, format = 0, phases = -1, k;
	size_t n, i;
	uint64_t v, tr, at;
	const char *key;

	if (!has_m && !has_c)
		goto out;
	if (!has_c)
		bad_input(cpath, 0, "missing, but %s is there", mpath);
	if (!has_m)
		bad_input(mpath, 0, "missing, but %s is there", cpath);
	n = read_marks(mpath, m);
	for (i = 1; i < n; i++) {
		fprintf(samples, "coherence/%s/faults - %" PRIu64 "\n", m[i - 1].label,
			m[i].pgfault - m[i - 1].pgfault);
		fprintf(samples, "coherence/%s/seconds - %.6f\n", m[i - 1].label,
			m[i].seconds - m[i - 1].seconds);
	}
	text = read_file(cpath);
	if (!text)
		bad_input(cpath, 0, "%s", strerror(errno));
	p = text;
	while ((line = next_line(&p, cpath, &lineno))) {
		if (!strcmp(line, "format coherence-1")) {
			format = 1;
			continue;
		}
		if (!format || sscanf(line, "%255s", word) != 1)
			continue;
		if (!strcmp(word, "phases")) {
			if (sscanf(line, "phases %d", &phases) != 1)
				bad_input(cpath, lineno, "not a line \"phases N\"");
			if (phases != (int)n + 1)
				bad_input(cpath, lineno, "%d phases, but %s has %zu marks (want %zu phases)",
					  phases, mpath, n, n + 1);
			continue;
		}
		k = phase_of(word, &key);
		/* Phases 1 .. n-1 lie between two marks; 0 and n do not. */
		if (k < 1 || k >= (int)n)
			continue;
		if (!strcmp(key, "function")) {
			if (sscanf(line, "%*s %255s transfers %" SCNu64 " atomic_transfers %" SCNu64,
				   name, &tr, &at) != 3)
				bad_input(cpath, lineno, "not a line \"phase.K.function NAME transfers N atomic_transfers N\"");
			fprintf(samples, "coherence/%s/function/%s - %" PRIu64 "\n",
				m[k - 1].label, name, tr);
			continue;
		}
		if (!strcmp(key, "insn_function")) {
			if (sscanf(line, "%*s %255s %" SCNu64 " %c", name, &v, &extra) != 2)
				bad_input(cpath, lineno, "not a line \"phase.K.insn_function NAME N\"");
			fprintf(samples, "coherence/%s/insn_function/%s - %" PRIu64 "\n",
				m[k - 1].label, name, v);
			continue;
		}
		if (!strcmp(key, "line")) {
			if (sscanf(line, "%*s %255s transfers %" SCNu64 " atomic_transfers %" SCNu64
				   " top_function %255s", word, &tr, &at, name) != 4)
				bad_input(cpath, lineno, "not a line \"phase.K.line ADDR transfers N atomic_transfers N top_function NAME\"");
			fprintf(samples, "coherence/%s/line/%s/%s - %" PRIu64 "\n",
				m[k - 1].label, word, name, tr);
			continue;
		}
		for (i = 0; i < sizeof(phase_keys) / sizeof(phase_keys[0]); i++)
			if (!strcmp(key, phase_keys[i]))
				break;
		if (i == sizeof(phase_keys) / sizeof(phase_keys[0]))
			continue;
		if (sscanf(line, "%*s %" SCNu64 " %c", &v, &extra) != 1)
			bad_input(cpath, lineno, "not a line \"%s N\"", word);
		fprintf(samples, "coherence/%s/%s - %" PRIu64 "\n", m[k - 1].label, key, v);
	}
	if (!format)
		bad_input(cpath, 0, "no key-value section (no line \"format coherence-1\")");
	if (phases < 0)
		bad_input(cpath, 0, "no line \"phases N\": a plugin without phase markers?");
	free(text);
out:
	free(mpath);
	free(cpath);
}
