/* program: per-rank task graphs (see program.h). */
#include "program.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "xalloc.h"

void program_init(struct program *p)
{
	memset(p, 0, sizeof(*p));
}

void program_finish(struct program *p)
{
	free(p->t);
	free(p->deps);
	memset(p, 0, sizeof(*p));
}

int program_add(struct program *p, const struct task *t, const int *deps, int ndeps)
{
	BUG_ON(p->n == INT_MAX || p->ndeps > INT_MAX - ndeps, "program of %d tasks is full", p->n);
	XGROW(p->t, p->cap, (size_t)p->n + 1);
	struct task *x = &p->t[p->n];
	*x = *t;
	if (x->count < 1)
		x->count = 1;
	x->dep0 = p->ndeps;
	x->ndeps = 0;
	x->nwaiters = 0;
	for (int i = 0; i < ndeps; i++) {
		int d = deps[i];
		BUG_ON(d >= p->n, "task %d depends on task %d, not yet added", p->n, d);
		if (d < 0 || p->t[d].stream == x->stream)
			continue;
		XGROW(p->deps, p->depcap, (size_t)p->ndeps + 1);
		p->deps[p->ndeps++] = d;
		p->t[d].nwaiters++;
		x->ndeps++;
	}
	return p->n++;
}

int program_compute(struct program *p, enum task_cat cat, double time_s,
		    double flops, int mb, int chunk, const int *deps, int ndeps)
{
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = cat,
			  .time_s = time_s, .flops = flops, .mb = mb, .chunk = chunk };
	return program_add(p, &t, deps, ndeps);
}

int program_coll(struct program *p, enum stream s, enum task_cat cat,
		 enum coll_op op, enum group_kind g, double bytes, int count,
		 const int *deps, int ndeps)
{
	struct task t = { .kind = TASK_COLL, .stream = s, .cat = cat, .op = op,
			  .group = g, .bytes = bytes, .count = count };
	return program_add(p, &t, deps, ndeps);
}

const char *task_cat_name(enum task_cat c)
{
	static const char *const n[] = { "forward", "backward", "recompute", "optimizer",
					 "tp_comm", "dp_comm", "param_comm", "cp_comm", "ep_comm", "offload", "pp_comm" };
	return c < CAT_N ? n[c] : "?";
}

bool program_wraps(const struct program *pr, int stage, int pp)
{
	for (int i = 0; i < pr->n; i++) {
		const struct task *t = &pr->t[i];
		if (t->kind != TASK_SEND && t->kind != TASK_RECV)
			continue;
		bool fwd = (t->rev ? !t->dir : t->dir) == P2P_FWD;
		int s = stage + (fwd == (t->kind == TASK_SEND) ? +1 : -1);
		if (s < 0 || s >= pp)
			return true;
	}
	return false;
}

bool program_stages_wrap(struct program *const *stage, int pp)
{
	for (int st = 0; st < pp; st++)
		if (program_wraps(stage[st], st, pp))
			return true;
	return false;
}

void program_serial_kinds(struct program *const *stage, int pp, bool serial[GROUP_N])
{
	int stream_of[GROUP_N];
	for (int g = 0; g < GROUP_N; g++) {
		stream_of[g] = -1;
		serial[g] = true;
	}
	for (int st = 0; st < pp; st++)
		for (int i = 0; i < stage[st]->n; i++) {
			const struct task *t = &stage[st]->t[i];
			if (t->kind != TASK_COLL)
				continue;
			if (stream_of[t->group] < 0)
				stream_of[t->group] = t->stream;
			else if (stream_of[t->group] != (int)t->stream)
				serial[t->group] = false;
		}
}

const char *stream_name(enum stream s)
{
	static const char *const n[] = { "compute", "tp", "dp", "param", "send",
					 "recv_prev", "recv_next", "cp", "ep", "host", "dp_replicate" };
	return s < STREAM_N ? n[s] : "?";
}
