/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the file race tests share: the file's content, one value a page
 * (pval()) in every word, written with pwrite(); and a new test file, a
 * memfd or, with SPF_FILE_DIR set, an unnamed file in that directory.
 */
#ifndef SPF_FILE_H
#define SPF_FILE_H

#include "spf_common.h"

/* The value of every word of page p of the file at epoch e. */
static inline uint64_t pval(unsigned long epoch, long p)
{
	return mkval(epoch, 0, p, 0);
}

/*
 * Pages [lo, hi) of fd get epoch e, through buf (hi - lo pages at
 * least). 0 or an errno.
 */
static inline int write_file_pages(int fd, uint64_t *buf, long lo, long hi,
				   unsigned long e)
{
	size_t len = (hi - lo) * PS;
	ssize_t n;

	for (long p = lo; p < hi; p++)
		for (size_t i = 0; i < WORDS_PER_PAGE; i++)
			buf[(p - lo) * WORDS_PER_PAGE + i] = pval(e, p);
	n = pwrite(fd, buf, len, lo * PS);
	return n == (ssize_t)len ? 0 : n < 0 ? errno : EIO;
}

/* A new empty file: a memfd named name, or an unnamed file in SPF_FILE_DIR. */
static inline int new_test_file(const char *name)
{
	const char *dir = getenv("SPF_FILE_DIR");

	if (dir && *dir)
		return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return memfd_create(name, MFD_CLOEXEC);
}

#endif
