/* result: lifetime of a result, its iteration split and its fixed-size row
 * (see result.h). */
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bug.h"
#include "engine.h"
#include "inputs.h"
#include "platform.h"
#include "timeline.h"
#include "xalloc.h"

const char *const result_status_names[RESULT_NSTATUS] = {
	"ok", "invalid", "failed", "crashed", "timeout",
};

const struct pub_figure_info pub_figures[PUB_NFIGURES] = {
	[PUB_HW_TFLOPS] = { "tflops_per_gpu", "hardware_tflops_per_gpu", "tflops_error", "TFLOP/s" },
	[PUB_MODEL_TFLOPS] = { "model_tflops_per_gpu", "model_tflops_per_gpu", "model_tflops_error", "TFLOP/s" },
	[PUB_MFU] = { "mfu", "mfu", "mfu_error", "" },
	[PUB_TOKENS_PER_S] = { "tokens_per_s", "tokens_per_s", "tokens_per_s_error", "tokens/s" },
	[PUB_ITERATION_S] = { "iteration_time_s", "iteration_time_s", "iteration_time_error", "s" },
};

double published_figure(const struct published *pb, enum pub_figure f)
{
	switch (f) {
	case PUB_HW_TFLOPS: return pb->tflops_per_gpu;
	case PUB_MODEL_TFLOPS: return pb->model_tflops_per_gpu;
	case PUB_MFU: return pb->mfu;
	case PUB_TOKENS_PER_S: return pb->tokens_per_s;
	case PUB_ITERATION_S: return pb->iteration_s;
	case PUB_NFIGURES: break;
	}
	BUG_ON(1, "published figure %d out of range", (int)f);
	return 0;
}

double result_row_figure(const struct result_row *row, enum pub_figure f)
{
	switch (f) {
	case PUB_HW_TFLOPS: return row->hardware_tflops_per_gpu;
	case PUB_MODEL_TFLOPS: return row->model_tflops_per_gpu;
	case PUB_MFU: return row->mfu;
	case PUB_TOKENS_PER_S: return row->tokens_per_s;
	case PUB_ITERATION_S: return row->iteration_s;
	case PUB_NFIGURES: break;
	}
	BUG_ON(1, "published figure %d out of range", (int)f);
	return 0;
}

double result_row_memory(const struct result_row *row, enum pub_memory m)
{
	return m == PUB_MEM_DEVICE ? row->mem_worst_device_bytes : row->mem_worst_alloc_bytes;
}

void result_set_meta(struct result *r, const struct scenario_meta *meta)
{
	scenario_meta_finish(&r->meta);
	scenario_meta_copy(&r->meta, meta);
}

void result_finish(struct result *r)
{
	scenario_meta_finish(&r->meta);
	free(r->measured_ops);
	free(r->roofline_ops);
	free(r->cost_detail);
	free(r->tp_group0);
	free(r->cp_group0);
	free(r->dp_group0);
	free(r->pp_ranks0);
	free(r->whole_replicas);
	free(r->ops);
	free(r->stage);
	if (r->eng)
		engine_result_finish(r->eng);
	free(r->eng);
	timeline_destroy(r->timeline);
	memset(r, 0, sizeof(*r));
}

void result_set_timeline(struct result *r, struct timeline *tl)
{
	timeline_destroy(r->timeline);
	r->timeline = tl;
}

static double sum_cat(const double *v, int from, int to)
{
	double s = 0;
	for (int k = from; k <= to; k++)
		s += v[k];
	return s;
}

struct result_split result_rank_split(const struct result *r, int i)
{
	const struct engine_rank_stats *st = &r->eng->rank[i];
	struct result_split x = { sum_cat(st->compute_s, CAT_FORWARD, CAT_OPTIMIZER),
				  sum_cat(st->exposed_s, CAT_TP_COMM, CAT_PP_COMM)  /* incl. CP, EP, offload */, st->bubble_s, 0 };
	x.idle_s = r->iteration_s - x.compute_s - x.exposed_s - x.bubble_s;
	if (x.idle_s < 0)
		x.idle_s = 0;
	return x;
}

int result_nranks(const struct result *r)
{
	return r->eng->nranks;
}

struct result_rank result_rank(const struct result *r, int i)
{
	const struct engine_rank_stats *st = &r->eng->rank[i];
	struct result_rank x = { .stage = st->stage, .simulated_as = st->representative,
				 .finish_s = st->finish_s, .bubble_s = st->bubble_s,
				 .interference_s = st->interference_s };
	memcpy(x.compute_s, st->compute_s, sizeof(x.compute_s));
	memcpy(x.comm_s, st->comm_s, sizeof(x.comm_s));
	memcpy(x.exposed_s, st->exposed_s, sizeof(x.exposed_s));
	memcpy(x.collectives, st->collectives, sizeof(x.collectives));
	return x;
}

struct result_sim result_sim(const struct result *r)
{
	const struct engine_result *e = r->eng;
	return (struct result_sim){ .nranks = e->nranks, .nsimulated = e->nsimulated, .flows = e->flows,
				    .collectives = e->collectives, .tasks = e->tasks, .platform_s = e->platform_s,
				    .ps_updates = e->ps_updates, .staleness_mean = e->staleness_mean,
				    .staleness_p50 = e->staleness_p50, .staleness_p95 = e->staleness_p95,
				    .staleness_max = e->staleness_max, .cls_posted = e->cls_posted,
				    .cls_split = e->cls_split, .cls_why = e->cls_why };
}

int result_nlinks(const struct result *r)
{
	return r->eng ? r->eng->nlinks : 0;
}

struct result_link result_link(const struct result *r, int i)
{
	const struct engine_link_stats *l = &r->eng->links[i];
	struct result_link x = { .name = l->name,
				 .cls = platform_link_class(inputs_topology(r->in), l->name),
				 .busy_s = l->busy_s, .peak_util = l->peak_util, .bw_Bps = l->bw_Bps,
				 .crossbar = l->fatpipe, .timed = l->timed };
	for (int c = 0; c < CAT_N; c++) {
		x.bytes_by_cat[c] = l->bytes[c];
		x.bytes += l->bytes[c];
	}
	return x;
}

struct result_split result_mean_split(const struct result *r)
{
	struct result_split m = { 0, 0, 0, 0 };
	int n = r->eng->nranks;
	for (int i = 0; i < n; i++) {
		struct result_split x = result_rank_split(r, i);
		m.compute_s += x.compute_s / n;
		m.exposed_s += x.exposed_s / n;
		m.bubble_s += x.bubble_s / n;
		m.idle_s += x.idle_s / n;
	}
	return m;
}

double result_busy(const struct result *r, double *group)
{
	struct result_split m = result_mean_split(r);
	for (int k = 0; group && k < PLAN_MAX_NODE_GROUPS; k++)
		group[k] = -1;
	for (int i = 0; group && i < r->ngroups; i++) {
		const struct group_result *g = &r->group[i];
		double c = 0;
		int n = 0;
		for (int q = g->first_rank; q < g->first_rank + g->ranks && q < r->eng->nranks; q++, n++)
			c += result_rank_split(r, q).compute_s;
		group[r->group_index[i]] = r->iteration_s > 0 && n > 0 ? c / n / r->iteration_s : 0;
	}
	return r->iteration_s > 0 ? m.compute_s / r->iteration_s : 0;
}

void result_row_fill(struct result_row *row, const struct result *r)
{
	int index = row->index;
	memset(row, 0, sizeof(*row));
	row->index = index;
	row->status = RESULT_OK;
	row->plan = r->plan;
	row->gpus = r->gpus;
	row->iteration_s = r->iteration_s;
	row->samples_per_s = r->samples_per_s;
	row->tokens_per_s = r->tokens_per_s;
	row->model_tflops_per_gpu = r->model_tflops_per_gpu;
	row->hardware_tflops_per_gpu = r->hardware_tflops_per_gpu;
	row->mfu = r->mfu;
	row->hfu = r->hfu;
	row->mean = result_mean_split(r);
	result_busy(r, row->group_busy);
	row->mem_worst_bytes = r->worst_total_bytes;
	for (int s = 0; s < r->nstages; s++) {
		/* the largest of each measure (stages differ by their NCCL
		 * communicators: the largest total need not be the largest
		 * allocator figure) */
		const struct mem_anatomy *w = &r->stage[s].mem;
		row->mem_worst_alloc_bytes = fmax(row->mem_worst_alloc_bytes, w->allocator_bytes);
		row->mem_worst_device_bytes = fmax(row->mem_worst_device_bytes, w->total_bytes - w->fragmentation_bytes);
	}
	row->mem_capacity_bytes = inputs_topology(r->in)->gpu.hbm_bytes;
	row->fits = r->fits;
	row->mem_short_bytes = r->fits ? 0 : r->shortfall_bytes;
	row->folded = r->folded;
	snprintf(row->fold_reason, sizeof(row->fold_reason), "%s",
		 !r->folded && r->fold_reason && result_nranks(r) > 1 ? r->fold_reason : "");
	if (!r->fits)
		snprintf(row->reason, sizeof(row->reason), "does not fit: the fullest GPU needs %.1f GB of %.1f GB, "
			 "%.1f GB missing", r->worst_total_bytes / 1e9, (r->worst_total_bytes - r->shortfall_bytes) / 1e9,
			 r->shortfall_bytes / 1e9);
	memcpy(row->comm_bytes_per_gpu, r->comm_bytes_per_gpu, sizeof(row->comm_bytes_per_gpu));
	row->time_to_train_s = r->time_to_train_s;
	row->gpu_hours = r->gpu_hours;
	row->cost_usd = r->cost_usd;
	row->sim_wall_s = r->sim_wall_s;
}

const char *result_row_status_name(const struct result_row *row)
{
	return row->status == RESULT_OK && !row->fits ? "oom" : result_status_names[row->status];
}

bool result_row_usable(const struct result_row *row)
{
	return row->status == RESULT_OK && row->fits;
}

void result_row_fail(struct result_row *row, enum result_status st, const char *reason)
{
	size_t cap = sizeof(row->reason), n = strlen(reason);
	row->status = st;
	if (n < cap) {
		memcpy(row->reason, reason, n + 1);
		return;
	}
	n = cap - 4;  /* room for "..." and the terminator */
	while (n > 0 && ((unsigned char)reason[n] & 0xC0) == 0x80)
		n--;  /* do not cut a UTF-8 character */
	memcpy(row->reason, reason, n);
	memcpy(row->reason + n, "...", 4);
}
