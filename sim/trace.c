/* trace: Chrome trace-event export of the replay (see trace.h).
 *
 * The engine calls task_end() for every task of every simulated rank in
 * nondecreasing simulated time; the writer filters by rank (a short list
 * of ranges), prints one line per event and keeps per rank only what the
 * counters and flows need: send and receive sequence numbers per
 * direction, and the memory steps (time, +1 or -1 activation unit). */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "xalloc.h"

struct mem_step {
	double t_s;
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
	struct mem_step *pts;       /* t_s and utilisation in per mille (delta field) */
	size_t npts, cap;
};

struct trace {
	struct engine_observer obs;
	struct atomic_file af;
	bool open;
	long (*sel)[2];             /* rank ranges [lo, hi], NULL: all */
	int nsel;
	struct rank_rec *rk;
	size_t nrk;
	struct prog_marks *pm;
	int npm;
	long events;
	struct link_rec *lk;
	size_t nlk;
};

#define TRACE_BUSIEST_LINKS 8

static bool selected(const struct trace *tr, int rank)
{
	if (!tr->sel)
		return true;
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
	rr->steps[rr->nsteps].t_s = t_s;
	rr->steps[rr->nsteps++].delta = delta;
}

static void comma(struct trace *tr)
{
	fputs(tr->events++ ? ",\n" : "\n", tr->af.f);
}

static void on_start(void *ctx, int rank, const struct program *p, int ti, double now)
{
	struct trace *tr = ctx;
	if (!selected(tr, rank) || p->t[ti].kind != TASK_COMPUTE)
		return;
	if (marks(tr, p)->opens[ti])
		step(rec(tr, rank), now, +1);
}

static void on_end(void *ctx, int rank, const struct program *p, int ti, double start, double end,
		   int peer)
{
	struct trace *tr = ctx;
	if (!selected(tr, rank))
		return;
	const struct task *t = &p->t[ti];
	struct rank_rec *rr = rec(tr, rank);
	FILE *f = tr->af.f;
	rr->seen = true;
	rr->streams |= 1u << t->stream;
	const char *name = t->kind == TASK_COMPUTE ? task_cat_name(t->cat)
			 : t->kind == TASK_COLL ? coll_op_name(t->op)
			 : t->kind == TASK_SEND ? "send" : "recv";
	comma(tr);
	fprintf(f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,"
		"\"tid\":%d,\"args\":{\"mb\":%d,\"chunk\":%d", name, task_cat_name(t->cat), start * 1e6,
		(end - start) * 1e6, rank, (int)t->stream, t->mb, t->chunk);
	if (t->kind == TASK_COMPUTE)
		fprintf(f, ",\"flops\":%.0f}}", t->flops);
	else if (t->kind == TASK_COLL)
		fprintf(f, ",\"bytes\":%.0f,\"calls\":%d}}", t->bytes, t->count);
	else
		fprintf(f, ",\"bytes\":%.0f,\"peer\":%d}}", t->bytes, peer);
	if (t->kind == TASK_SEND || t->kind == TASK_RECV) {
		int dir = t->dir == P2P_BWD;
		int src = t->kind == TASK_SEND ? rank : peer;
		long k = t->kind == TASK_SEND ? rr->sends[dir]++ : rr->recvs[dir]++;
		long long id = ((long long)src * 2 + dir) * (1LL << 24) + k;
		comma(tr);
		fprintf(f, "{\"name\":\"p2p\",\"cat\":\"p2p\",\"ph\":\"%s\",%s\"id\":%lld,\"ts\":%.3f,"
			"\"pid\":%d,\"tid\":%d}", t->kind == TASK_SEND ? "s" : "f",
			t->kind == TASK_SEND ? "" : "\"bp\":\"e\",", id, start * 1e6, rank, (int)t->stream);
	}
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
		l->pts[l->npts].t_s = t;
		l->pts[l->npts++].delta = permille;
	}
	l->last_used = used;
	l->last_t = t;
}

/* The selection s into tr->sel; with nranks > 0, a rank beyond the job's
 * nranks is an error (a trace of no rank is no trace). */
static int parse_ranks(struct trace *tr, const char *s, long nranks, struct diag *d)
{
	if (!s || !strcmp(s, "all"))
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
			rc = diag_errf(d, "--trace-ranks: expected ranks like '0-7,64', got '%s'", tok);
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
		rc = diag_errf(d, "--trace-ranks: expected ranks like '0-7,64', got '%s'", s);
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
	int e = atomic_file_open(&tr->af, path);
	if (e) {
		diag_err(d, path, "", "cannot write the trace: %s", atomic_file_strerror(-e));
		goto err;
	}
	tr->open = true;
	tr->obs = (struct engine_observer){ tr, on_start, on_end, link_period_s, on_link };
	fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"ddlsim\",\"time\":"
	      "\"simulated, one training iteration\"},\"traceEvents\":[", tr->af.f);
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
		atomic_file_abort(&tr->af);
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
	free(tr);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	fputc('"', f);
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

int trace_finish(struct trace *tr, const struct result *r, struct atomic_file *out, struct diag *d)
{
	warn_folded(tr, r, d);
	FILE *f = tr->af.f;
	int n = r->eng->nranks;
	/* ranks each simulated rank stands for */
	int *count = xcalloc((size_t)n + 1, sizeof(int)), *shown = xcalloc((size_t)n + 1, sizeof(int));
	char **label = xcalloc((size_t)n + 1, sizeof(char *));
	size_t *llen = xcalloc((size_t)n + 1, sizeof(size_t));
	FILE **lf = xcalloc((size_t)n + 1, sizeof(FILE *));
	for (int i = 0; i < n; i++) {
		int rep = r->eng->rank[i].representative;
		if (rep < 0 || rep >= n || (size_t)rep >= tr->nrk || !tr->rk[rep].seen)
			continue;
		if (!lf[rep])
			lf[rep] = open_memstream(&label[rep], &llen[rep]);
		if (!lf[rep]) {
			fprintf(stderr, "ddlsim: fatal: out of memory labelling the trace\n");
			exit(1);
		}
		if (shown[rep] < 16)
			fprintf(lf[rep], "%s%d", shown[rep]++ ? ", " : "", i);
		count[rep]++;
	}
	static const char *const tname[STREAM_N] = { "compute", "TP collectives", "DP gradient reduction",
		"param gathers (ZeRO-3)", "pipeline send", "pipeline recv from previous stage",
		"pipeline recv from next stage", "CP exchange" };
	for (int rank = 0; rank < n && (size_t)rank < tr->nrk; rank++) {
		struct rank_rec *rr = &tr->rk[rank];
		if (!rr->seen)
			continue;
		int stage = r->eng->rank[rank].stage;
		comma(tr);
		fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":"
			"\"rank %d (stage %d)\"}}", rank, rank, stage);
		comma(tr);
		fprintf(f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"sort_index\":%d}}",
			rank, rank);
		if (lf[rank]) {
			fclose(lf[rank]);
			lf[rank] = NULL;
			char *text = xasprintf("stands for %d rank%s: %s%s", count[rank], count[rank] == 1 ? "" : "s",
					       label[rank], count[rank] > shown[rank] ? ", ..." : "");
			comma(tr);
			fprintf(f, "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"labels\":", rank);
			json_str(f, text);
			fputs("}}", f);
			free(text);
		}
		for (int s = 0; s < STREAM_N; s++)
			if (rr->streams & (1u << s)) {
				comma(tr);
				fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":"
					"{\"name\":\"%s\"}}", rank, s, tname[s]);
			}
		/* memory in use over the iteration */
		const struct mem_anatomy *m = &r->stage[stage].mem;
		double unit = r->stage[stage].peak_inflight_chunks > 0
				      ? m->activations_bytes / r->stage[stage].peak_inflight_chunks : 0;
		double base = m->total_bytes - m->activations_bytes;
		int alive = 0;
		comma(tr);
		fprintf(f, "{\"name\":\"memory in use (GB)\",\"ph\":\"C\",\"ts\":0,\"pid\":%d,\"args\":"
			"{\"GB\":%.6f}}", rank, base / 1e9);
		for (size_t k = 0; k < rr->nsteps; k++) {
			alive += rr->steps[k].delta;
			comma(tr);
			fprintf(f, "{\"name\":\"memory in use (GB)\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%d,\"args\":"
				"{\"GB\":%.6f}}", rr->steps[k].t_s * 1e6, rank, (base + alive * unit) / 1e9);
		}
	}
	for (int i = 0; i < n; i++) {
		if (lf[i])
			fclose(lf[i]);
		free(label[i]);
	}
	free(lf);
	free(label);
	free(llen);
	free(count);
	free(shown);
	/* the busiest links: most bytes carried */
	int *order = xcalloc(tr->nlk + 1, sizeof(int)), ntop = 0;
	for (size_t i = 0; i < tr->nlk; i++)
		if (tr->lk[i].busy_bytes > 0)
			order[ntop++] = (int)i;
	qsort_r(order, (size_t)ntop, sizeof(int), by_busy, tr);
	if (ntop > TRACE_BUSIEST_LINKS)
		ntop = TRACE_BUSIEST_LINKS;
	const int *top = order;
	if (ntop) {
		int pid = n;  /* after every rank */
		comma(tr);
		fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":"
			"\"busiest links (%% of bandwidth, sampled every %g ms)\"}}", pid, tr->obs.link_sample_s * 1e3);
		comma(tr);
		fprintf(f, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"sort_index\":-1}}",
			pid);
	}
	for (int k = 0; k < ntop; k++) {
		const struct link_rec *l = &tr->lk[top[k]];
		char *name = xasprintf("%s (%.0f GB/s) %%", l->name, l->bw_Bps / 1e9);
		comma(tr);
		fputs("{\"name\":", f);
		json_str(f, name);
		fprintf(f, ",\"ph\":\"C\",\"ts\":0,\"pid\":%d,\"args\":{\"util\":0}}", n);
		for (size_t j = 0; j < l->npts; j++) {
			comma(tr);
			fputs("{\"name\":", f);
			json_str(f, name);
			fprintf(f, ",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%d,\"args\":{\"util\":%.1f}}",
				l->pts[j].t_s * 1e6, n, l->pts[j].delta / 10.0);
		}
		free(name);
	}
	free(order);
	fputs("\n]}\n", f);
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (ferror(f)) {
		rc = diag_err(d, tr->af.path, "", "cannot write the trace");
		atomic_file_abort(&tr->af);
	} else {
		char *path = xstrdup(tr->af.path);
		int e = atomic_file_stage(&tr->af);
		if (e)
			rc = diag_err(d, path, "", "cannot write the trace: %s", atomic_file_strerror(-e));
		else
			*out = tr->af;  /* the caller publishes it with the reports */
		free(path);
	}
	tr->open = false;
	trace_destroy(tr);
	return rc;
}
