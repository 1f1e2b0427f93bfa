/* progress: a command's progress line or JSON lines (see progress.h). */
#include "progress.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "human.h"
#include "xalloc.h"

enum mode { MODE_NONE, MODE_LINE, MODE_JSON };

struct progress {
	const char *command, *unit;
	int n, jobs, done, failed;
	enum mode mode;
	bool eager, shown;
	double t0, last;
	double *cpu_s;          /* [n] estimated weight */
	long *expect;           /* [n] tasks expected, 0 unknown */
	long *tasks;            /* [n] tasks replayed so far */
	bool *ended;            /* [n] */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct progress *progress_create(const char *command, const char *unit, int n, int jobs,
				 bool quiet, bool json)
{
	struct progress *p = xcalloc(1, sizeof(*p));
	*p = (struct progress){ .command = command, .unit = unit, .n = n, .jobs = jobs > 0 ? jobs : 1,
				.t0 = now_s() };
	p->mode = quiet ? MODE_NONE : isatty(STDERR_FILENO) ? MODE_LINE : json ? MODE_JSON : MODE_NONE;
	p->cpu_s = xcalloc((size_t)n + 1, sizeof(*p->cpu_s));
	p->expect = xcalloc((size_t)n + 1, sizeof(*p->expect));
	p->tasks = xcalloc((size_t)n + 1, sizeof(*p->tasks));
	p->ended = xcalloc((size_t)n + 1, sizeof(*p->ended));
	return p;
}

void progress_eager(struct progress *p)
{
	p->eager = true;
}

void progress_clear(struct progress *p)
{
	if (!p || !p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = false;
	cleanup_line_shown(0);
}

void progress_destroy(struct progress *p)
{
	if (!p)
		return;
	progress_clear(p);
	free(p->cpu_s);
	free(p->expect);
	free(p->tasks);
	free(p->ended);
	free(p);
}

void progress_expect(struct progress *p, int i, double cpu_s, long tasks)
{
	p->cpu_s[i] = cpu_s;
	p->expect[i] = tasks;
}

/* The weighted share done, in [0, 1]; *left_s the time left. */
static double share_done(const struct progress *p, double elapsed, double *left_s)
{
	double all = 0, got = 0;
	for (int i = 0; i < p->n; i++) {
		double w = p->cpu_s[i] > 1e-3 ? p->cpu_s[i] : 1e-3;
		double f = p->ended[i] ? 1 : p->expect[i] > 0 ? (double)p->tasks[i] / (double)p->expect[i] : 0;
		all += w;
		got += w * (f < 0.99 || p->ended[i] ? f : 0.99);
	}
	double share = all > 0 ? got / all : 1;
	*left_s = share >= 0.05 ? elapsed * (1 - share) / share : (all - got) / p->jobs - elapsed;
	if (*left_s < 0)
		*left_s = 0;
	return share;
}

static void draw_line(struct progress *p, double share, double elapsed, double left)
{
	char e[32], l[32], a[32], b[32], line[256];
	size_t n = (size_t)snprintf(line, sizeof(line), "\r\033[Kddlsim %s: %.0f%% (", p->command,
				    100 * share);
	if (p->n == 1 && p->expect[0] > 0 && !p->ended[0])
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s of %s tasks",
				      human_number((double)p->tasks[0], a, sizeof(a)),
				      human_number((double)p->expect[0], b, sizeof(b)));
	else
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%d of %d %s done", p->done, p->n, p->unit);
	if (p->failed && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, ", %d failed", p->failed);
	if (n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, "), %s elapsed, about %s left",
			 human_duration(elapsed, e, sizeof(e)), human_duration(left, l, sizeof(l)));
	cleanup_line_shown(1);  /* before the first byte: a signal may come mid-line */
	fputs(line, stderr);    /* one write (stderr is unbuffered) */
	fflush(stderr);
	p->shown = true;
}

static void draw_json(struct progress *p, double share, double elapsed, double left)
{
	json_t *o = json_pack("{s:{s:s,s:i,s:i,s:i,s:f,s:f,s:f}}", "progress", "command", p->command,
			      "done", p->done, "total", p->n, "failed", p->failed, "percent",
			      round(1000 * share) / 10, "elapsed_s", round(100 * elapsed) / 100,
			      "remaining_s", round(100 * left) / 100);
	char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
	if (s)
		fprintf(stderr, "%s\n", s);
	fflush(stderr);
	free(s);
	json_decref(o);
}

/* Redraw the line when it is due (force: a job ended). */
static void update(struct progress *p, bool force)
{
	if (p->mode != MODE_LINE)
		return;
	double t = now_s(), elapsed = t - p->t0, left;
	if (!p->eager && elapsed < PROGRESS_AFTER_S)
		return;
	if (!force && t - p->last < 1.0 / PROGRESS_HZ)
		return;
	p->last = t;
	double share = share_done(p, elapsed, &left);
	draw_line(p, share, elapsed, left);
}

void progress_tasks(struct progress *p, const long *tasks)
{
	for (int i = 0; i < p->n; i++)
		p->tasks[i] = tasks[i];
	update(p, false);
}

void progress_done(struct progress *p, int i, bool failed)
{
	if (p->ended[i])
		return;
	p->ended[i] = true;
	p->done++;
	p->failed += failed;
	if (p->mode == MODE_JSON) {
		double left, elapsed = now_s() - p->t0;
		double share = share_done(p, elapsed, &left);
		draw_json(p, share, elapsed, left);
		return;
	}
	update(p, true);
}
