/* trace: Chrome trace-event export of the replay (see trace.h).
 *
 * The engine calls task_end() for every task of every simulated rank in
 * nondecreasing simulated time; the writer filters by rank (the ranks of
 * their class, or a list of ranges), prints one line per event through a
 * checked streaming writer (util/outfile.h: plain or gzip, the first
 * failed write kept and reported at the end) and keeps per rank only what
 * the counters and flows need: send and receive sequence numbers per
 * direction, and the memory steps (time, +1 or -1 activation unit).
 *
 * Times: every instant is rounded once to an integer nanosecond (ns_of),
 * and a slice prints ts = begin_ns / 1000 and dur = (end_ns - begin_ns) /
 * 1000 microseconds with exactly three decimals (US_FMT): a slice that
 * begins when the previous one on its track ends begins on its nanosecond,
 * never a nanosecond before it as two rounded %.3f figures could. A task
 * of no duration is a slice of dur 0.000 (its flow arrow binds to it). */
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "xalloc.h"

struct mem_step {
	long long t_ns;
	int delta;
};

struct rank_rec {
	long sends[2], recvs[2];    /* per enum p2p_dir */
	unsigned streams;           /* bit per stream that had a task */
	struct mem_step *steps;
	size_t nsteps, cap;
	bool seen;
};

/* Per stage program: which tasks open and close a (micro-batch, chunk)
 * pair's activations. */
struct prog_marks {
	const struct program *prog;
	unsigned char *opens, *closes;   /* [prog->n] */
};

/* One link's utilisation over the run: changes only. */
struct link_rec {
	char *name;
	double bw_Bps, busy_bytes, last_used, last_t;
	struct mem_step *pts;       /* t_ns and utilisation in per mille (delta field) */
	size_t npts, cap;
};

enum trace_sel {
	SEL_CLASSES,                /* default: a rank per class (engine_rank_stats.class_rank) */
	SEL_ALL,                    /* --trace-ranks all */
	SEL_LIST,                   /* --trace-ranks 0-7,64 */
};

struct trace {
	struct engine_observer obs;
	struct outfile out;
	bool open;
	enum trace_sel mode;
	long (*sel)[2];             /* SEL_LIST: rank ranges [lo, hi] */
	int nsel;
	unsigned char *keep;        /* SEL_CLASSES: [nranks] a class's rank, set by on_begin */
	int nranks;
	struct rank_rec *rk;
	size_t nrk;
	struct prog_marks *pm;
	int npm;
	long events;
	struct link_rec *lk;
	size_t nlk;
};

#define TRACE_BUSIEST_LINKS 8

/* Simulated seconds to integer nanoseconds: the one rounding of a time. */
static long long ns_of(double t_s)
{
	return t_s > 0 ? llround(t_s * 1e9) : 0;
}

/* Microseconds with exactly three decimals: printf(US_FMT, US(ns)). */
#define US_FMT "%lld.%03lld"
#define US(ns) (ns) / 1000, (ns) % 1000

static bool selected(const struct trace *tr, int rank)
{
	switch (tr->mode) {
	case SEL_CLASSES:
		return tr->keep && rank >= 0 && rank < tr->nranks && tr->keep[rank];
	case SEL_ALL:
		return true;
	case SEL_LIST:
		break;
	}
	for (int i = 0; i < tr->nsel; i++)
		if (rank >= tr->sel[i][0] && rank <= tr->sel[i][1])
			return true;
	return false;
}

static struct rank_rec *rec(struct trace *tr, int rank)
{
	if ((size_t)rank >= tr->nrk) {
		size_t n = tr->nrk ? tr->nrk : 64;
		while (n <= (size_t)rank)
			n *= 2;
		tr->rk = xreallocarray(tr->rk, n, sizeof(*tr->rk));
		memset(tr->rk + tr->nrk, 0, (n - tr->nrk) * sizeof(*tr->rk));
		tr->nrk = n;
	}
	return &tr->rk[rank];
}

static const struct prog_marks *marks(struct trace *tr, const struct program *p)
{
	for (int i = 0; i < tr->npm; i++)
		if (tr->pm[i].prog == p)
			return &tr->pm[i];
	tr->pm = xreallocarray(tr->pm, (size_t)tr->npm + 1, sizeof(*tr->pm));
	struct prog_marks *m = &tr->pm[tr->npm++];
	m->prog = p;
	m->opens = xcalloc((size_t)p->n + 1, 1);
	m->closes = xcalloc((size_t)p->n + 1, 1);
	int maxmb = 0, maxc = 0;
	for (int i = 0; i < p->n; i++)
		if (p->t[i].kind == TASK_COMPUTE) {
			if (p->t[i].mb > maxmb)
				maxmb = p->t[i].mb;
			if (p->t[i].chunk > maxc)
				maxc = p->t[i].chunk;
		}
	size_t npairs = (size_t)(maxmb + 1) * (size_t)(maxc + 1);
	int *first = xcalloc(npairs, sizeof(int)), *last = xcalloc(npairs, sizeof(int));
	for (size_t k = 0; k < npairs; k++)
		first[k] = last[k] = -1;
	for (int i = 0; i < p->n; i++) {
		const struct task *t = &p->t[i];
		if (t->kind != TASK_COMPUTE || t->mb < 0 || t->chunk < 0)
			continue;
		size_t k = (size_t)t->mb * (size_t)(maxc + 1) + (size_t)t->chunk;
		if (t->cat == CAT_FORWARD && first[k] < 0)
			first[k] = i;
		if (t->cat == CAT_BACKWARD)
			last[k] = i;
	}
	for (size_t k = 0; k < npairs; k++)
		if (first[k] >= 0 && last[k] >= 0) {
			m->opens[first[k]] = 1;
			m->closes[last[k]] = 1;
		}
	free(first);
	free(last);
	return m;
}

static void step(struct rank_rec *rr, double t_s, int delta)
{
	XGROW(rr->steps, rr->cap, rr->nsteps + 1);
	rr->steps[rr->nsteps].t_ns = ns_of(t_s);
	rr->steps[rr->nsteps++].delta = delta;
}

/* The one JSON string writer: s quoted, '"', '\' and control characters
 * escaped. */
static void put_str(struct outfile *o, const char *s)
{
	char buf[256];
	size_t n = 0;
	buf[n++] = '"';
	for (; *s; s++) {
		if (n + 8 > sizeof(buf)) {
			outfile_write(o, buf, n);
			n = 0;
		}
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)c;
		} else if (c < 0x20)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\\u%04x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n++] = '"';
	outfile_write(o, buf, n);
}

/* Start an event: the separator, then {"name":NAME (more to follow). */
static void event(struct trace *tr, const char *name)
{
	outfile_puts(&tr->out, tr->events++ ? ",\n{\"name\":" : "\n{\"name\":");
	put_str(&tr->out, name);
}

static void on_begin(void *ctx, const struct engine_result *out)
{
	struct trace *tr = ctx;
	tr->nranks = out->nranks;
	if (tr->mode != SEL_CLASSES)
		return;
	tr->keep = xcalloc((size_t)out->nranks + 1, 1);
	for (int r = 0; r < out->nranks; r++)
		tr->keep[out->rank[r].class_rank] = 1;
}

static void on_start(void *ctx, int rank, const struct program *p, int ti, double now)
{
	struct trace *tr = ctx;
	if (!selected(tr, rank) || p->t[ti].kind != TASK_COMPUTE)
		return;
	if (marks(tr, p)->opens[ti])
		step(rec(tr, rank), now, +1);
}

/* A send's or receive's flow event (an arrow from the k-th send of rank
 * a in one direction to the k-th receive of its peer in that direction),
 * when the peer is recorded too: an arrow always has both ends. */
static void flow(struct trace *tr, struct rank_rec *rr, const struct task *t, int rank, int peer,
		 long long b_ns)
{
	int dir = t->dir == P2P_BWD;
	int src = t->kind == TASK_SEND ? rank : peer;
	long k = t->kind == TASK_SEND ? rr->sends[dir]++ : rr->recvs[dir]++;
	long long id = ((long long)src * 2 + dir) * (1LL << 24) + k;
	if (!selected(tr, peer))
		return;
	event(tr, "p2p");
	outfile_printf(&tr->out, ",\"cat\":\"p2p\",\"ph\":\"%s\",%s\"id\":%lld,\"ts\":" US_FMT ",\"pid\":%d,"
		       "\"tid\":%d}", t->kind == TASK_SEND ? "s" : "f",
		       t->kind == TASK_SEND ? "" : "\"bp\":\"e\",", id, US(b_ns), rank, (int)t->stream);
}

static void on_end(void *ctx, int rank, const struct program *p, int ti, double start, double end, int peer)
{
	struct trace *tr = ctx;
	if (!selected(tr, rank))
		return;
	const struct task *t = &p->t[ti];
	struct rank_rec *rr = rec(tr, rank);
	rr->seen = true;
	rr->streams |= 1u << t->stream;
	const char *name = t->kind == TASK_COMPUTE ? task_cat_name(t->cat)
			 : t->kind == TASK_COLL ? coll_op_name(t->op)
			 : t->kind == TASK_SEND ? "send" : "recv";
	long long b = ns_of(start), e = ns_of(end);
	if (e < b)
		e = b;
	event(tr, name);
	outfile_puts(&tr->out, ",\"cat\":");
	put_str(&tr->out, task_cat_name(t->cat));
	outfile_printf(&tr->out, ",\"ph\":\"X\",\"ts\":" US_FMT ",\"dur\":" US_FMT ",\"pid\":%d,\"tid\":%d,"
		       "\"args\":{", US(b), US(e - b), rank, (int)t->stream);
	if (t->mb >= 0)
		outfile_printf(&tr->out, "\"mb\":%d,\"chunk\":%d,", t->mb, t->chunk);
	if (t->kind == TASK_COMPUTE)
		outfile_printf(&tr->out, "\"flops\":%.0f}}", t->flops);
	else if (t->kind == TASK_COLL)
		outfile_printf(&tr->out, "\"bytes\":%.0f,\"calls\":%d}}", t->bytes, t->count);
	else
		outfile_printf(&tr->out, "\"bytes\":%.0f,\"peer\":%d}}", t->bytes, peer);
	if (t->kind == TASK_SEND || t->kind == TASK_RECV)
		flow(tr, rr, t, rank, peer, b);
	if (t->kind == TASK_COMPUTE && marks(tr, p)->closes[ti])
		step(rr, end, -1);
}

static void on_link(void *ctx, int i, const char *name, double t, double used, double bw)
{
	struct trace *tr = ctx;
	if ((size_t)i >= tr->nlk) {
		size_t n = (size_t)i + 1;
		tr->lk = xreallocarray(tr->lk, n, sizeof(*tr->lk));
		memset(tr->lk + tr->nlk, 0, (n - tr->nlk) * sizeof(*tr->lk));
		tr->nlk = n;
	}
	struct link_rec *l = &tr->lk[i];
	if (!l->name) {
		l->name = xstrdup(name);
		l->bw_Bps = bw;
	}
	/* the usage held since the last sample */
	l->busy_bytes += l->last_used * (t - l->last_t);
	int permille = bw > 0 ? (int)(1000 * used / bw + 0.5) : 0;
	int prev = l->npts ? l->pts[l->npts - 1].delta : 0;
	if (permille != prev) {
		XGROW(l->pts, l->cap, l->npts + 1);
		l->pts[l->npts].t_ns = ns_of(t);
		l->pts[l->npts++].delta = permille;
	}
	l->last_used = used;
	l->last_t = t;
}

/* The selection s into tr->sel; with nranks > 0, a rank beyond the job's
 * nranks is an error (a trace of no rank is no trace). */
static int parse_ranks(struct trace *tr, const char *s, long nranks, struct diag *d)
{
	tr->mode = !s ? SEL_CLASSES : !strcmp(s, "all") ? SEL_ALL : SEL_LIST;
	if (tr->mode != SEL_LIST)
		return 0;
	char *buf = xstrdup(s), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		errno = 0;
		long lo = strtol(tok, &end, 10), hi = lo;
		if (*end == '-') {
			char *e2;
			hi = strtol(end + 1, &e2, 10);
			end = e2;
		}
		if (errno || end == tok || *end || lo < 0 || hi < lo) {
			rc = diag_errf(d, "--trace-ranks: expected 'all' or ranks like '0-7,64', got '%s'", tok);
			break;
		}
		if (nranks > 0 && hi >= nranks) {
			rc = diag_errf(d, "--trace-ranks: rank %ld of '%s' is beyond the job, which has %ld rank%s "
				       "(0-%ld)", hi, s, nranks, nranks == 1 ? "" : "s", nranks - 1);
			break;
		}
		tr->sel = xreallocarray(tr->sel, (size_t)tr->nsel + 1, sizeof(*tr->sel));
		tr->sel[tr->nsel][0] = lo;
		tr->sel[tr->nsel++][1] = hi;
	}
	if (!rc && !tr->sel)
		rc = diag_errf(d, "--trace-ranks: expected 'all' or ranks like '0-7,64', got '%s'", s);
	free(buf);
	return rc;
}

int trace_ranks_check(const char *ranks, long nranks, struct diag *d)
{
	struct trace tr = { 0 };
	int rc = parse_ranks(&tr, ranks, nranks, d);
	free(tr.sel);
	return rc;
}

struct trace *trace_create(const char *path, const char *ranks, double link_period_s, struct diag *d)
{
	struct trace *tr = xcalloc(1, sizeof(*tr));
	if (parse_ranks(tr, ranks, 0, d))
		goto err;
	int e = outfile_open(&tr->out, path);
	if (e) {
		diag_err(d, path, "", "cannot write the trace: %s", atomic_file_strerror(-e));
		goto err;
	}
	tr->open = true;
	tr->obs = (struct engine_observer){ .ctx = tr, .begin = on_begin, .task_start = on_start,
					    .task_end = on_end, .link_sample_s = link_period_s,
					    .link_sample = on_link };
	outfile_puts(&tr->out, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"ddlsim\",\"time\":"
		     "\"simulated, one training iteration\"},\"traceEvents\":[");
	return tr;
err:
	trace_destroy(tr);
	return NULL;
}

const struct engine_observer *trace_observer(struct trace *tr)
{
	return &tr->obs;
}

long trace_events(const struct trace *tr)
{
	return tr->events;
}

void trace_destroy(struct trace *tr)
{
	if (!tr)
		return;
	if (tr->open)
		outfile_abort(&tr->out);
	for (size_t i = 0; i < tr->nrk; i++)
		free(tr->rk[i].steps);
	for (int i = 0; i < tr->npm; i++) {
		free(tr->pm[i].opens);
		free(tr->pm[i].closes);
	}
	for (size_t i = 0; i < tr->nlk; i++) {
		free(tr->lk[i].name);
		free(tr->lk[i].pts);
	}
	free(tr->lk);
	free(tr->pm);
	free(tr->rk);
	free(tr->sel);
	free(tr->keep);
	free(tr);
}

/* Links by bytes carried, most first (ties: lower index first). */
static int by_busy(const void *a, const void *b, void *ctx)
{
	const struct trace *tr = ctx;
	double x = tr->lk[*(const int *)a].busy_bytes, y = tr->lk[*(const int *)b].busy_bytes;
	return x > y ? -1 : x < y ? 1 : *(const int *)a - *(const int *)b;
}

/* Warn when selected ranks of the job were not simulated (folded into a
 * representative replica): the trace has no process for them. */
static void warn_folded(const struct trace *tr, const struct result *r, struct diag *d)
{
	long nfold = 0, first = -1;
	for (int i = 0; i < r->eng->nranks; i++)
		if (tr->sel && selected(tr, i) && r->eng->rank[i].representative != i && !nfold++)
			first = i;
	if (nfold)
		diag_warn(d, "--trace-ranks", "", "%ld selected rank%s not simulated but folded into a "
			  "representative replica (rank %ld into rank %d): the trace holds no process for %s; "
			  "simulation.fold \"off\" simulates every rank", nfold, nfold == 1 ? " was" : "s were",
			  first, r->eng->rank[first].representative, nfold == 1 ? "it" : "them");
}

/* A metadata event ("M") of pid (tid < 0: none) with one argument. */
static void meta(struct trace *tr, const char *name, int pid, int tid, const char *key, const char *str,
		 int num)
{
	event(tr, name);
	outfile_printf(&tr->out, ",\"ph\":\"M\",\"pid\":%d", pid);
	if (tid >= 0)
		outfile_printf(&tr->out, ",\"tid\":%d", tid);
	outfile_printf(&tr->out, ",\"args\":{\"%s\":", key);
	if (str)
		put_str(&tr->out, str);
	else
		outfile_printf(&tr->out, "%d", num);
	outfile_puts(&tr->out, "}}");
}

/* A counter event ("C") at t_ns with one value. */
static void counter(struct trace *tr, const char *name, long long t_ns, int pid, const char *key,
		    const char *fmt, double v)
{
	char num[64];
	snprintf(num, sizeof(num), fmt, v);
	event(tr, name);
	outfile_printf(&tr->out, ",\"ph\":\"C\",\"ts\":" US_FMT ",\"pid\":%d,\"args\":{\"%s\":%s}}", US(t_ns), pid,
		       key, num);
}

/* "stands for N ranks: a, b, ..." of every recorded rank: the ranks of
 * its class (by default) or those whose figures it is (a selection).
 * label[rank] (caller frees each and the array). */
static char **labels(const struct trace *tr, const struct result *r)
{
	int n = r->eng->nranks;
	int *count = xcalloc((size_t)n + 1, sizeof(int)), *shown = xcalloc((size_t)n + 1, sizeof(int));
	char **list = xcalloc((size_t)n + 1, sizeof(char *)), **label = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		const struct engine_rank_stats *st = &r->eng->rank[i];
		int rep = tr->mode == SEL_CLASSES ? st->class_rank : st->representative;
		if (rep < 0 || rep >= n || (size_t)rep >= tr->nrk || !tr->rk[rep].seen)
			continue;
		if (shown[rep] < 16) {
			char *x = xasprintf("%s%s%d", list[rep] ? list[rep] : "", shown[rep]++ ? ", " : "", i);
			free(list[rep]);
			list[rep] = x;
		}
		count[rep]++;
	}
	for (int i = 0; i < n; i++)
		if (count[i])
			label[i] = xasprintf("stands for %d rank%s: %s%s", count[i], count[i] == 1 ? "" : "s", list[i],
					     count[i] > shown[i] ? ", ..." : "");
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	free(count);
	free(shown);
	return label;
}

/* The processes of the recorded ranks: names, labels, tracks, memory. */
static void rank_processes(struct trace *tr, const struct result *r)
{
	static const char *const tname[STREAM_N] = { "compute", "TP collectives", "DP gradient reduction",
		"param gathers (ZeRO-3)", "pipeline send", "pipeline recv from previous stage",
		"pipeline recv from next stage", "CP exchange" };
	int n = r->eng->nranks;
	char **label = labels(tr, r);
	for (int rank = 0; rank < n && (size_t)rank < tr->nrk; rank++) {
		struct rank_rec *rr = &tr->rk[rank];
		if (!rr->seen)
			continue;
		int stage = r->eng->rank[rank].stage;
		char *pname = xasprintf("rank %d (stage %d)", rank, stage);
		meta(tr, "process_name", rank, -1, "name", pname, 0);
		free(pname);
		meta(tr, "process_sort_index", rank, -1, "sort_index", NULL, rank);
		if (label[rank])
			meta(tr, "process_labels", rank, -1, "labels", label[rank], 0);
		for (int s = 0; s < STREAM_N; s++)
			if (rr->streams & (1u << s))
				meta(tr, "thread_name", rank, s, "name", tname[s], 0);
		/* memory in use over the iteration */
		const struct mem_anatomy *m = &r->stage[stage].mem;
		double unit = r->stage[stage].peak_inflight_chunks > 0
				      ? m->activations_bytes / r->stage[stage].peak_inflight_chunks : 0;
		double base = m->total_bytes - m->activations_bytes;
		int alive = 0;
		counter(tr, "memory in use (GB)", 0, rank, "GB", "%.6f", base / 1e9);
		for (size_t k = 0; k < rr->nsteps; k++) {
			alive += rr->steps[k].delta;
			counter(tr, "memory in use (GB)", rr->steps[k].t_ns, rank, "GB", "%.6f", (base + alive * unit) / 1e9);
		}
	}
	for (int i = 0; i < n; i++)
		free(label[i]);
	free(label);
}

/* The busiest links (most bytes carried) as counters of one process
 * after every rank. */
static void link_counters(struct trace *tr, int pid)
{
	int *order = xcalloc(tr->nlk + 1, sizeof(int)), ntop = 0;
	for (size_t i = 0; i < tr->nlk; i++)
		if (tr->lk[i].busy_bytes > 0)
			order[ntop++] = (int)i;
	qsort_r(order, (size_t)ntop, sizeof(int), by_busy, tr);
	if (ntop > TRACE_BUSIEST_LINKS)
		ntop = TRACE_BUSIEST_LINKS;
	if (ntop) {
		char *pname = xasprintf("busiest links (%% of bandwidth, sampled every %g ms)", tr->obs.link_sample_s * 1e3);
		meta(tr, "process_name", pid, -1, "name", pname, 0);
		free(pname);
		meta(tr, "process_sort_index", pid, -1, "sort_index", NULL, -1);
	}
	for (int k = 0; k < ntop; k++) {
		const struct link_rec *l = &tr->lk[order[k]];
		char *name = xasprintf("%s (%.0f GB/s) %%", l->name, l->bw_Bps / 1e9);
		counter(tr, name, 0, pid, "util", "%.1f", 0);
		for (size_t j = 0; j < l->npts; j++)
			counter(tr, name, l->pts[j].t_ns, pid, "util", "%.1f", l->pts[j].delta / 10.0);
		free(name);
	}
	free(order);
}

int trace_finish(struct trace *tr, const struct result *r, struct atomic_file *out, struct diag *d)
{
	warn_folded(tr, r, d);
	rank_processes(tr, r);
	link_counters(tr, r->eng->nranks);
	outfile_puts(&tr->out, "\n]}\n");
	char *path = xstrdup(tr->out.af.path);
	int rc = 0, e = outfile_stage(&tr->out, out);
	tr->open = false;
	if (e)
		rc = diag_err(d, path, "", "cannot write the trace: %s", atomic_file_strerror(-e));
	free(path);
	trace_destroy(tr);
	return rc;
}
