/* program: per-rank task graphs (see program.h). */
#include "program.h"

#include <stdlib.h>
#include <string.h>

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
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		struct task *nt = realloc(p->t, (size_t)cap * sizeof(*nt));
		if (!nt)
			return -1;
		p->t = nt;
		p->cap = cap;
	}
	struct task *x = &p->t[p->n];
	*x = *t;
	if (x->count < 1)
		x->count = 1;
	x->dep0 = p->ndeps;
	x->ndeps = 0;
	x->nwaiters = 0;
	for (int i = 0; i < ndeps; i++) {
		int d = deps[i];
		if (d < 0 || d >= p->n || p->t[d].stream == x->stream)
			continue;
		if (p->ndeps == p->depcap) {
			int cap = p->depcap ? 2 * p->depcap : 64;
			int *nd = realloc(p->deps, (size_t)cap * sizeof(*nd));
			if (!nd)
				return -1;
			p->deps = nd;
			p->depcap = cap;
		}
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
					 "tp_comm", "dp_comm", "param_comm", "pp_comm" };
	return c < CAT_N ? n[c] : "?";
}

const char *stream_name(enum stream s)
{
	static const char *const n[] = { "compute", "tp", "dp", "param", "send",
					 "recv_prev", "recv_next" };
	return s < STREAM_N ? n[s] : "?";
}
