// SPDX-License-Identifier: GPL-2.0
/*
 * Write FILE.dat and FILE.gp next to FILE.png and run gnuplot on them
 * (what the plot shows is the caller's: plot-faults.c, sweep.c).
 * gnuplot runs in that directory and the script names its files without
 * a path, so the three files can be moved together and redrawn by hand.
 * gnuplot draws into a temporary file beside FILE.png, renamed over it
 * once complete: a failed plot leaves the old one, and nothing but a
 * regular file is ever replaced (--plot /dev/null must not unlink it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"
#include "util.h"

static void plot_error(const char *fmt, const char *arg)
{
	fflush(stdout);
	fprintf(stderr, "%s: error: ", prog);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}

/* gnuplot single-quoted strings escape a quote by doubling it. */
void plot_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static FILE *create(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		plot_error("cannot write %s", path);
	return f;
}

static int finish(FILE *f, const char *path)
{
	if (!fclose(f))
		return 0;
	plot_error("cannot write %s", path);
	return -1;
}

void plot_preamble(FILE *f, const char *tool, const char *png_name,
		   int width, int height)
{
	fprintf(f, "# Written by %s; redraw with: gnuplot <this file>\n"
		"if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		"\tset terminal pngcairo size %d,%d noenhanced font \",10\"\n"
		"} else {\n"
		"\tset terminal png size %d,%d noenhanced\n"
		"}\n"
		"# %s draws into a temporary file: gnuplot -e \"png='...'\"\n"
		"if (!exists(\"png\")) png = ", tool, width, height, width, height, prog);
	plot_quoted(f, png_name);
	fputs("\nset output png\n", f);
}

/* FILE.dat and FILE.gp; 0 on success. */
static int write_files(const char *dat, const char *gp, const char *png,
		       void (*write_dat)(FILE *f, const void *ctx),
		       void (*write_gp)(FILE *f, const void *ctx, const char *dat_name,
					const char *png_name),
		       const void *ctx)
{
	char *dat_name = base_name(dat), *png_name = base_name(png);
	FILE *f;
	int ret = -1;

	f = create(dat);
	if (!f)
		goto out;
	write_dat(f, ctx);
	if (finish(f, dat))
		goto out;
	f = create(gp);
	if (!f)
		goto out;
	write_gp(f, ctx, dat_name, png_name);
	ret = finish(f, gp);
out:
	free(dat_name);
	free(png_name);
	return ret;
}

/* "png='NAME'" for gnuplot -e, NAME quoted as gnuplot wants; caller frees. */
static char *png_assignment(const char *name)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!f) {
		fprintf(stderr, "%s: error: out of memory\n", prog);
		exit(1);
	}
	fputs("png=", f);
	plot_quoted(f, name);
	if (fclose(f)) {
		fprintf(stderr, "%s: error: out of memory\n", prog);
		exit(1);
	}
	return s;
}

/*
 * gnuplot draws into out (a name in dir); its own messages go to stderr
 * as they are. 0 if it succeeded, 127 when there is no gnuplot to run.
 */
static int run_gnuplot(const char *dir, const char *script, const char *out)
{
	char *assign = png_assignment(out);
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		free(assign);
		return -1;
	}
	if (!pid) {
		if (chdir(dir))
			_exit(127);
		execlp("gnuplot", "gnuplot", "-e", assign, script, (char *)NULL);
		_exit(127);
	}
	free(assign);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int nonempty(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && st.st_size > 0;
}

/* 0 when path does not exist or is a regular file, else -1. */
static int replaceable(const char *path)
{
	struct stat st;

	return lstat(path, &st) || S_ISREG(st.st_mode) ? 0 : -1;
}

/* "out/x.png" -> "out/x"; anything without .png keeps its name. */
static char *stem(const char *png)
{
	size_t len = strlen(png);

	if (len > 4 && !strcmp(png + len - 4, ".png"))
		return xstrndup(png, len - 4);
	return xstrdup(png);
}

void plot_check_paths(const char *png)
{
	char *base = stem(png);
	char *paths[] = { xstrdup(png), xasprintf("%s.gp", base), xasprintf("%s.dat", base) };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(paths); i++)
		if (replaceable(paths[i]))
			fatal("--plot %s: %s is not a regular file: not replacing it",
			      png, paths[i]);
	for (i = 0; i < ARRAY_SIZE(paths); i++)
		free(paths[i]);
	free(base);
}

/*
 * A new, empty file beside png, with the mode a created file gets (mkstemp
 * makes it 0600); its path, or NULL after saying why.
 */
static char *temp_beside(const char *dir, const char *png)
{
	char *name = base_name(png), *tmp = xasprintf("%s/.%s.XXXXXX", dir, name);
	mode_t mask = umask(0);
	int fd, err;

	umask(mask);
	free(name);
	fd = mkstemp(tmp);
	err = fd < 0;
	if (!err) {
		err = fchmod(fd, 0666 & ~mask);
		if (close(fd))
			err = -1;
	}
	if (err) {
		char *why = xasprintf("%s: %s", tmp, strerror(errno));

		plot_error("cannot create a temporary file for the plot: %s", why);
		free(why);
		if (fd >= 0)
			unlink(tmp);
		free(tmp);
		return NULL;
	}
	return tmp;
}

int plot_draw(const char *png, void (*write_dat)(FILE *f, const void *ctx),
	      void (*write_gp)(FILE *f, const void *ctx, const char *dat_name,
			       const char *png_name),
	      const void *ctx)
{
	char *base = stem(png), *dir = parent_dir(png);
	char *gp = xasprintf("%s.gp", base), *dat = xasprintf("%s.dat", base);
	char *gp_name = base_name(gp), *tmp = NULL, *tmp_name = NULL;
	int ret = EXIT_PLOT, status;

	if (write_files(dat, gp, png, write_dat, write_gp, ctx))
		goto out;
	tmp = temp_beside(dir, png);
	if (!tmp)
		goto out;
	tmp_name = base_name(tmp);
	status = run_gnuplot(dir, gp_name, tmp_name);
	if (status == 127) {
		plot_error("gnuplot not found, no plot (install gnuplot-nox; the script is %s)",
			   gp);
		goto out;
	}
	if (status || !nonempty(tmp)) {
		plot_error("gnuplot failed to draw %s", png);
		goto out;
	}
	/* Checked again: it may have become something else meanwhile. */
	if (replaceable(png)) {
		plot_error("%s is no longer a regular file: not replacing it", png);
		goto out;
	}
	if (rename(tmp, png)) {
		char *why = xasprintf("%s: %s", png, strerror(errno));

		plot_error("cannot rename the plot to %s", why);
		free(why);
		goto out;
	}
	ret = 0;
out:
	if (ret && tmp)
		unlink(tmp);
	free(base);
	free(dir);
	free(gp);
	free(dat);
	free(gp_name);
	free(tmp);
	free(tmp_name);
	return ret;
}
