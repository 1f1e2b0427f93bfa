/* report: report writers (see report.h). */
#include "report.h"

#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll.h"
#include "schedule.h"

#define GB 1e9

static json_t *num(double x)
{
	return json_real(x);
}

static json_t *ranks_array(const int *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *scenario_json(const struct scenario *sc)
{
	const struct topology *t = sc->topo;
	json_t *peak = json_object();
	for (int i = 0; i < DTYPE_N; i++)
		if (t->gpu.peak_flops[i] > 0)
			json_object_set_new(peak, dtype_name(i), num(t->gpu.peak_flops[i] / 1e12));
	return json_pack(
		"{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:f},"
		" s:{s:s, s:s, s:s, s:I, s:s, s:f, s:f, s:I, s:f, s:f, s:o},"
		" s:i, s:i,"
		" s:{s:i, s:i, s:i, s:b, s:i, s:s, s:i, s:s, s:s},"
		" s:{s:I, s:I, s:I, s:I, s:s, s:s, s:s, s:f},"
		" s:{s:s, s:f}, s:{s:s, s:s}}",
		"name", sc->name, "path", sc->path, "description", sc->description,
		"model", "name", sc->model->name, "architecture",
		sc->model->arch == MODEL_ARCH_CNN ? "cnn" : "decoder_transformer", "path", sc->model_path,
		"layers", (json_int_t)sc->model->layers, "hidden_size", (json_int_t)sc->model->hidden,
		"heads", (json_int_t)sc->model->heads, "kv_heads", (json_int_t)sc->model->kv_heads,
		"ffn_size", (json_int_t)sc->model->ffn, "vocab_size", (json_int_t)sc->model->vocab,
		"activation", model_act_name(sc->model->act), "params", model_params(sc->model),
		"topology", "name", t->name, "path", sc->topo_path, "gpu", t->gpu.name,
		"gpus_per_node", (json_int_t)t->gpus_per_node, "intra", intra_kind_name(t->intra),
		"intra_bw_GBps", t->intra_bw_Bps / GB, "intra_latency_us", t->intra_latency_s * 1e6,
		"nics_per_node", (json_int_t)t->nics, "nic_bw_Gbps", t->nic_bw_Bps * 8 / GB,
		"hbm_GB", t->gpu.hbm_bytes / GB, "peak_tflops", peak,
		"nodes", sc->nodes, "gpus", sc->gpus,
		"parallel", "dp", sc->dp, "tp", sc->tp, "pp", sc->pp, "sp", sc->sp,
		"zero", (int)sc->zero, "schedule", schedule_registry[sc->schedule].name,
		"interleave", sc->interleave, "recompute", recompute_name(sc->recompute),
		"order", sc->order,
		"training", "seq_len", (json_int_t)sc->seq, "global_batch", (json_int_t)sc->global_batch,
		"micro_batch", (json_int_t)sc->micro_batch,
		"microbatches_per_pipeline", (json_int_t)scenario_microbatches(sc),
		"precision", dtype_name(sc->precision), "grad_reduce_dtype", dtype_name(sc->grad_dtype),
		"optimizer", sc->model->arch == MODEL_ARCH_CNN ? "sgd_momentum" : "adam",
		"train_tokens", sc->train_tokens,
		"communication", "algorithm", sc->coll_algo, "bucket_MB", sc->bucket_bytes / 1e6,
		"compute", "cost", sc->cost == COST_PROFILE ? "profile" : "roofline",
		"profile", sc->profile_path);
}

static json_t *mem_json(const struct stage_result *s)
{
	const struct mem_anatomy *m = &s->mem;
	return json_pack("{s:i, s:i, s:b, s:b, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:f}",
			 "stage", s->stage, "layers", s->layers, "embedding", s->has_embedding,
			 "head", s->has_head, "params_local", m->params_local,
			 "peak_inflight_microbatch_chunks", s->peak_inflight_chunks,
			 "inflight_factor", s->inflight,
			 "weights_GB", m->weights_bytes / GB, "gradients_GB", m->grads_bytes / GB,
			 "optimizer_GB", m->optimizer_bytes / GB,
			 "activations_GB", m->activations_bytes / GB,
			 "activations_per_layer_microbatch_GB", m->act_per_layer_bytes / GB,
			 "logits_GB", m->logits_bytes / GB, "comm_buffers_GB", m->comm_buffer_bytes / GB,
			 "reserved_GB", m->reserved_bytes / GB, "fp8_weight_copies_GB", m->fp8_weight_bytes / GB,
			 "cuda_context_GB", m->context_bytes / GB, "nccl_buffers_GB", m->nccl_bytes / GB,
			 "allocator_reserve_GB", m->fragmentation_bytes / GB,
			 "total_GB", m->total_bytes / GB, "total_GiB", m->total_bytes / 1073741824.0,
			 "capacity_GiB", m->capacity_bytes / 1073741824.0,
			 "capacity_GB", m->capacity_bytes / GB, "fits", m->fits,
			 "headroom_GB", (m->capacity_bytes - m->total_bytes) / GB);
}

static double sum_cat(const double *v, int from, int to)
{
	double s = 0;
	for (int k = from; k <= to; k++)
		s += v[k];
	return s;
}

/* A rank's iteration split: compute, exposed communication, bubble, idle. */
struct split {
	double compute_s, exposed_s, bubble_s, idle_s;
};

static struct split rank_split(const struct result *r, int i)
{
	const struct engine_rank_stats *st = &r->eng.rank[i];
	struct split x = { sum_cat(st->compute_s, CAT_FORWARD, CAT_OPTIMIZER),
			   sum_cat(st->exposed_s, CAT_TP_COMM, CAT_PP_COMM), st->bubble_s, 0 };
	x.idle_s = r->iteration_s - x.compute_s - x.exposed_s - x.bubble_s;
	if (x.idle_s < 0)
		x.idle_s = 0;
	return x;
}

/* The split averaged over all ranks. */
static struct split mean_split(const struct result *r)
{
	struct split m = { 0, 0, 0, 0 };
	int n = r->eng.nranks;
	for (int i = 0; i < n; i++) {
		struct split x = rank_split(r, i);
		m.compute_s += x.compute_s / n;
		m.exposed_s += x.exposed_s / n;
		m.bubble_s += x.bubble_s / n;
		m.idle_s += x.idle_s / n;
	}
	return m;
}

static json_t *rank_json(const struct result *r, int i)
{
	const struct engine_rank_stats *st = &r->eng.rank[i];
	struct split x = rank_split(r, i);
	double compute = x.compute_s, exposed = x.exposed_s, idle = x.idle_s;
	const struct mem_anatomy *mem = &r->stage[st->stage].mem;
	return json_pack("{s:i, s:i, s:b, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:i}",
			 "rank", i, "stage", st->stage, "fits", mem->fits,
			 "mem_total_GB", mem->total_bytes / GB, "simulated_as", st->representative,
			 "compute_s", compute, "exposed_comm_s", exposed, "bubble_s", st->bubble_s,
			 "idle_s", idle, "forward_s", st->compute_s[CAT_FORWARD],
			 "backward_s", st->compute_s[CAT_BACKWARD],
			 "recompute_s", st->compute_s[CAT_RECOMPUTE],
			 "optimizer_s", st->compute_s[CAT_OPTIMIZER],
			 "exposed_tp_comm_s", st->exposed_s[CAT_TP_COMM],
			 "exposed_dp_comm_s", st->exposed_s[CAT_DP_COMM],
			 "exposed_param_comm_s", st->exposed_s[CAT_PARAM_COMM],
			 "exposed_pp_comm_s", st->exposed_s[CAT_PP_COMM],
			 "tp_comm_s", st->comm_s[CAT_TP_COMM], "dp_comm_s", st->comm_s[CAT_DP_COMM],
			 "param_comm_s", st->comm_s[CAT_PARAM_COMM], "finish_s", st->finish_s,
			 "tp_collectives", st->collectives[CAT_TP_COMM],
			 "dp_collectives", st->collectives[CAT_DP_COMM],
			 "param_collectives", st->collectives[CAT_PARAM_COMM]);
}

static json_t *split_list(const char *s)
{
	json_t *a = json_array();
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
		json_array_append_new(a, json_string(tok));
	return a;
}

static void verdict(const struct result *r, char *buf, size_t n)
{
	const struct stage_result *w = &r->stage[r->worst_stage];
	if (r->fits)
		snprintf(buf, n, "fits: the fullest GPU (stage %d) needs %.1f GB of %.1f GB",
			 r->worst_stage, w->mem.total_bytes / GB, w->mem.capacity_bytes / GB);
	else {
		int bad = 0;
		for (int s = 0; s < r->nstages; s++)
			bad += !r->stage[s].mem.fits;
		snprintf(buf, n, "does not fit: stage %d needs %.1f GB per GPU but has %.1f GB "
			 "(short by %.1f GB); %d of %d stages do not fit",
			 r->worst_stage, w->mem.total_bytes / GB, w->mem.capacity_bytes / GB,
			 r->shortfall_bytes / GB, bad, r->nstages);
	}
}

json_t *report_to_json(const struct result *r)
{
	const struct scenario *sc = r->sc;
	char v[512];
	json_t *root = json_object();

	json_object_set_new(root, "schema", json_string("ddlsim.report"));
	json_object_set_new(root, "schema_version", json_string("1.0"));
	json_object_set_new(root, "producer", json_pack("{s:s, s:s}", "name", "ddlsim",
							"version", r->producer_version));
	json_object_set_new(root, "scenario", scenario_json(sc));
	json_object_set_new(root, "summary", json_pack(
		"{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
		"iteration_time_s", r->iteration_s, "samples_per_s", r->samples_per_s,
		"tokens_per_s", r->tokens_per_s, "tokens_per_s_per_gpu", r->tokens_per_s / sc->gpus,
		"model_tflops_per_gpu", r->model_tflops_per_gpu,
		"hardware_tflops_per_gpu", r->hardware_tflops_per_gpu,
		"mfu", r->mfu, "hfu", r->hfu, "model_flops_per_iteration", r->model_flops,
		"hardware_flops_per_iteration", r->hardware_flops,
		"peak_tflops_per_gpu", r->peak_flops_per_gpu / 1e12));

	/* breakdown */
	json_t *ranks = json_array(), *stages = json_array();
	struct split mean = mean_split(r);
	/* beyond 4096 ranks the per-stage table and the mean stand for them */
	for (int i = 0; i < r->eng.nranks && r->eng.nranks <= 4096; i++)
		json_array_append_new(ranks, rank_json(r, i));
	for (int s = 0; s < r->nstages; s++)
		json_array_append_new(stages, json_pack("{s:i, s:f, s:f, s:f, s:f}",
			"stage", s, "compute_fwd_per_microbatch_s", r->stage[s].compute_fwd_s,
			"compute_bwd_per_microbatch_s", r->stage[s].compute_bwd_s,
			"bubble_s", r->stage[s].bubble_s, "bubble_fraction", r->stage[s].bubble_fraction));
	json_object_set_new(root, "breakdown", json_pack("{s:{s:f, s:f, s:f, s:f}, s:o, s:o}",
		"mean", "compute_s", mean.compute_s, "exposed_comm_s", mean.exposed_s,
		"bubble_s", mean.bubble_s, "idle_s", mean.idle_s, "per_stage", stages, "per_rank", ranks));

	json_object_set_new(root, "communication", json_pack("{s:s, s:{s:f, s:f, s:f, s:f}}",
		"algorithm", sc->coll_algo, "bytes_per_gpu",
		"tp", r->comm_bytes_per_gpu[CAT_TP_COMM], "dp", r->comm_bytes_per_gpu[CAT_DP_COMM],
		"param", r->comm_bytes_per_gpu[CAT_PARAM_COMM], "pp", r->comm_bytes_per_gpu[CAT_PP_COMM]));

	json_t *mem = json_array();
	for (int s = 0; s < r->nstages; s++)
		json_array_append_new(mem, mem_json(&r->stage[s]));
	verdict(r, v, sizeof(v));
	int over = 0;
	for (int i = 0; i < r->eng.nranks; i++)
		over += !r->stage[r->eng.rank[i].stage].mem.fits;
	json_object_set_new(root, "memory", json_pack("{s:b, s:i, s:i, s:f, s:f, s:f, s:s, s:o}",
		"fits", r->fits, "ranks_over_capacity", over, "worst_stage", r->worst_stage,
		"worst_total_GB", r->worst_total_bytes / GB,
		"capacity_GB", sc->topo->gpu.hbm_bytes / GB, "shortfall_GB", r->shortfall_bytes / GB,
		"verdict", v, "per_stage", mem));

	json_object_set_new(root, "placement", json_pack("{s:s, s:o, s:o, s:o, s:{s:o, s:o, s:o}}",
		"order", r->order, "tp_group_of_rank0", ranks_array(r->tp_group0, r->ntp0),
		"dp_group_of_rank0", ranks_array(r->dp_group0, r->ndp0),
		"pipeline_of_rank0", ranks_array(r->pp_ranks0, r->npp0),
		"links_crossed", "tp", split_list(r->links_tp), "dp", split_list(r->links_dp),
		"pp", split_list(r->links_pp)));
	json_object_set_new(root, "cost_model", json_pack("{s:s, s:s, s:o, s:o}",
		"source", r->cost_source ? r->cost_source : "roofline", "detail", r->cost_detail,
		"measured_ops", split_list(r->measured_ops),
		"roofline_ops", split_list(r->roofline_ops)));
	json_t *ops = json_array();
	for (int i = 0; i < r->nops; i++) {
		const struct op_timing *o = &r->ops[i];
		json_array_append_new(ops, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s}",
			"block", o->block, "pass", o->pass, "op", o->name, "m", o->m, "n", o->n,
			"k", o->k, "batch", o->batch, "flops", o->flops, "bytes", o->bytes,
			"time_s", o->time_s, "tflops", o->time_s > 0 ? o->flops / o->time_s / 1e12 : 0.0,
			"source", o->measured ? "profile" : "roofline"));
	}
	json_object_set_new(json_object_get(root, "cost_model"), "ops_per_microbatch", ops);
	if (sc->pub_tflops > 0 || sc->pub_iteration_s > 0 || sc->pub_tokens_per_s > 0) {
		json_t *pub = json_pack("{s:s}", "source", sc->pub_source);
		if (sc->pub_tflops > 0) {
			json_object_set_new(pub, "hardware_tflops_per_gpu", num(sc->pub_tflops));
			json_object_set_new(pub, "tflops_error", num(r->hardware_tflops_per_gpu / sc->pub_tflops - 1));
		}
		if (sc->pub_iteration_s > 0) {
			json_object_set_new(pub, "iteration_time_s", num(sc->pub_iteration_s));
			json_object_set_new(pub, "iteration_time_error", num(r->iteration_s / sc->pub_iteration_s - 1));
		}
		if (sc->pub_tokens_per_s > 0) {
			json_object_set_new(pub, "tokens_per_s", num(sc->pub_tokens_per_s));
			json_object_set_new(pub, "tokens_per_s_error", num(r->tokens_per_s / sc->pub_tokens_per_s - 1));
		}
		json_object_set_new(root, "published", pub);
	}
	json_object_set_new(root, "training_run", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}",
		"train_tokens", sc->train_tokens, "time_to_train_s", r->time_to_train_s,
		"time_to_train_days", r->time_to_train_s / 86400, "gpu_hours", r->gpu_hours,
		"usd_per_gpu_hour", sc->usd_per_gpu_hour, "cost_usd", r->cost_usd));
	json_object_set_new(root, "simulation", json_pack("{s:b, s:i, s:i, s:I, s:I, s:I, s:f}",
		"folded", r->folded, "ranks", r->eng.nranks, "simulated_ranks", r->eng.nsimulated,
		"flows", (json_int_t)r->eng.flows, "collectives", (json_int_t)r->eng.collectives,
		"tasks", (json_int_t)r->eng.tasks, "wall_s", r->sim_wall_s));
	return root;
}

/* ---- CSV ----------------------------------------------------------- */

static const char *const csv_cols[] = {
	"scenario", "model", "topology", "gpu", "nodes", "gpus", "dp", "tp", "pp", "sp",
	"zero", "schedule", "interleave", "recompute", "seq_len", "global_batch",
	"micro_batch", "precision", "iteration_time_s", "samples_per_s", "tokens_per_s",
	"model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "compute_s",
	"exposed_comm_s", "bubble_s", "idle_s", "mem_peak_GB", "mem_capacity_GB",
	"fits", "time_to_train_days", "gpu_hours", "cost_usd", NULL
};

static void field(FILE *f, const char *s, bool first)
{
	if (!first)
		fputc(',', f);
	csv_fwrite(f, s, strlen(s));
}

int report_write_csv_stream(const struct result *r, FILE *f, bool header)
{
	const struct scenario *sc = r->sc;
	char v[40][128];
	int k = 0;

	if (header) {
		for (int i = 0; csv_cols[i]; i++)
			field(f, csv_cols[i], i == 0);
		fputc('\n', f);
	}
	struct split mean = mean_split(r);
#define S(...) snprintf(v[k++], sizeof(v[0]), __VA_ARGS__)
	S("%s", sc->name);
	S("%s", sc->model->name);
	S("%s", sc->topo->name);
	S("%s", sc->topo->gpu.name);
	S("%d", sc->nodes);
	S("%d", sc->gpus);
	S("%d", sc->dp);
	S("%d", sc->tp);
	S("%d", sc->pp);
	S("%s", sc->sp ? "true" : "false");
	S("%d", (int)sc->zero);
	S("%s", schedule_registry[sc->schedule].name);
	S("%d", sc->interleave);
	S("%s", recompute_name(sc->recompute));
	S("%ld", sc->seq);
	S("%ld", sc->global_batch);
	S("%ld", sc->micro_batch);
	S("%s", dtype_name(sc->precision));
	S("%.9g", r->iteration_s);
	S("%.9g", r->samples_per_s);
	S("%.9g", r->tokens_per_s);
	S("%.6g", r->model_tflops_per_gpu);
	S("%.6g", r->hardware_tflops_per_gpu);
	S("%.6g", r->mfu);
	S("%.9g", mean.compute_s);
	S("%.9g", mean.exposed_s);
	S("%.9g", mean.bubble_s);
	S("%.9g", mean.idle_s);
	S("%.6g", r->worst_total_bytes / GB);
	S("%.6g", sc->topo->gpu.hbm_bytes / GB);
	S("%s", r->fits ? "true" : "false");
	S("%.6g", r->time_to_train_s / 86400);
	S("%.6g", r->gpu_hours);
	S("%.6g", r->cost_usd);
#undef S
	for (int i = 0; i < k; i++)
		field(f, v[i], i == 0);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

/* ---- files --------------------------------------------------------- */

int report_mkdirs(const char *dir)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return -1;
	return 0;
}

int report_write_atomic(const char *path, const char *data, size_t len, struct diag *d)
{
	char tmp[1200];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return diag_err(d, path, "", "cannot create report: %s", strerror(errno));
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto err_write;
		}
		off += (size_t)w;
	}
	if (fsync(fd))
		goto err_write;
	if (close(fd)) {
		fd = -1;
		goto err_write;
	}
	if (rename(tmp, path)) {
		unlink(tmp);
		return diag_err(d, path, "", "cannot rename report into place: %s", strerror(errno));
	}
	return 0;
err_write:
	{
		int e = errno;
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		return diag_err(d, path, "", "cannot write report: %s", strerror(e));
	}
}

int report_write(const struct result *r, const char *dir, bool json, bool csv,
		 struct diag *d)
{
	char path_json[1100], path_csv[1100];
	char *jtext = NULL, *ctext = NULL;
	size_t clen = 0;
	int rc = -1;

	if (report_mkdirs(dir))
		return diag_err(d, dir, "", "cannot create report directory: %s", strerror(errno));
	snprintf(path_json, sizeof(path_json), "%s/report.json", dir);
	snprintf(path_csv, sizeof(path_csv), "%s/report.csv", dir);
	/* render both before writing either */
	if (json) {
		json_t *j = report_to_json(r);
		jtext = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		json_decref(j);
		if (!jtext)
			return diag_errf(d, "cannot render the JSON report");
	}
	if (csv) {
		FILE *m = open_memstream(&ctext, &clen);
		if (!m || report_write_csv_stream(r, m, true)) {
			if (m)
				fclose(m);
			diag_errf(d, "cannot render the CSV report");
			goto out;
		}
		fclose(m);
	}
	if (json) {
		size_t n = strlen(jtext);
		jtext[n] = '\n';
		if (report_write_atomic(path_json, jtext, n + 1, d))
			goto out;
	}
	if (csv && report_write_atomic(path_csv, ctext, clen, d)) {
		if (json)
			unlink(path_json);
		goto out;
	}
	rc = 0;
out:
	free(jtext);
	free(ctext);
	return rc;
}

/* ---- terminal ------------------------------------------------------ */

static void human_bytes(double b, char *out, size_t n)
{
	if (b >= 1e12)
		snprintf(out, n, "%.2f TB", b / 1e12);
	else if (b >= 1e9)
		snprintf(out, n, "%.2f GB", b / 1e9);
	else if (b >= 1e6)
		snprintf(out, n, "%.2f MB", b / 1e6);
	else
		snprintf(out, n, "%.0f B", b);
}

void report_print_summary(const struct result *r, FILE *f)
{
	const struct scenario *sc = r->sc;
	char buf[64], vbuf[512];
	struct split mean = mean_split(r);

	fprintf(f, "scenario     %s\n", sc->name);
	if (r->params >= 1e9)
		fprintf(f, "model        %s (%.2f B params)\n", sc->model->name, r->params / 1e9);
	else
		fprintf(f, "model        %s (%.2f M params)\n", sc->model->name, r->params / 1e6);
	fprintf(f, "cluster      %d x %s = %d x %s\n", sc->nodes, sc->topo->name, sc->gpus,
		sc->topo->gpu.name);
	fprintf(f, "plan         dp=%d tp=%d pp=%d%s zero=%d schedule=%s v=%d recompute=%s\n",
		sc->dp, sc->tp, sc->pp, sc->sp ? " sp" : "", (int)sc->zero,
		schedule_registry[sc->schedule].name, sc->interleave, recompute_name(sc->recompute));
	fprintf(f, "links        tp: %s; dp: %s; pp: %s\n", r->links_tp[0] ? r->links_tp : "-",
		r->links_dp[0] ? r->links_dp : "-", r->links_pp[0] ? r->links_pp : "-");
	if (sc->model->arch == MODEL_ARCH_CNN)
		fprintf(f, "batch        %ld images, micro-batch %ld, %g micro-batches per GPU, %s\n",
			sc->global_batch, sc->micro_batch, r->microbatches, dtype_name(sc->precision));
	else
		fprintf(f, "batch        %ld x %ld tokens, micro-batch %ld, %g micro-batches per pipeline, %s\n",
			sc->global_batch, sc->seq, sc->micro_batch, r->microbatches, dtype_name(sc->precision));
	fprintf(f, "\n%-28s %14s\n", "metric", "value");
	fprintf(f, "%-28s %14.4f\n", "iteration_time_s", r->iteration_s);
	fprintf(f, "%-28s %14.2f\n", "samples_per_s", r->samples_per_s);
	fprintf(f, "%-28s %14.0f\n", "tokens_per_s", r->tokens_per_s);
	fprintf(f, "%-28s %14.1f\n", "model_tflops_per_gpu", r->model_tflops_per_gpu);
	fprintf(f, "%-28s %14.1f\n", "hardware_tflops_per_gpu", r->hardware_tflops_per_gpu);
	fprintf(f, "%-28s %13.1f%%\n", "mfu", 100 * r->mfu);
	fprintf(f, "%-28s %14.4f\n", "compute_s (mean)", mean.compute_s);
	fprintf(f, "%-28s %14.4f\n", "exposed_comm_s (mean)", mean.exposed_s);
	fprintf(f, "%-28s %14.4f\n", "bubble_s (mean)", mean.bubble_s);
	fprintf(f, "%-28s %14.4f\n", "idle_s (mean)", mean.idle_s);
	human_bytes(r->comm_bytes_per_gpu[CAT_DP_COMM], buf, sizeof(buf));
	fprintf(f, "%-28s %14s\n", "dp bytes sent per GPU", buf);
	if (sc->tp > 1) {
		human_bytes(r->comm_bytes_per_gpu[CAT_TP_COMM], buf, sizeof(buf));
		fprintf(f, "%-28s %14s\n", "tp bytes sent per GPU", buf);
	}
	if (sc->pp > 1) {
		human_bytes(r->comm_bytes_per_gpu[CAT_PP_COMM], buf, sizeof(buf));
		fprintf(f, "%-28s %14s\n", "pp bytes sent per GPU", buf);
	}
	const struct stage_result *w = &r->stage[r->worst_stage];
	/* memory in GB (1e9 bytes, as datasheets count) and GiB (2^30, as
	 * nvidia-smi and PyTorch count) */
	fprintf(f, "\nmemory per GPU (stage %d)     %14s %10s\n", r->worst_stage, "GB", "GiB");
	const struct { const char *name; double bytes; } rows[] = {
		{ "weights", w->mem.weights_bytes }, { "gradients", w->mem.grads_bytes },
		{ "optimizer state", w->mem.optimizer_bytes },
		{ "fp8 weight copies", w->mem.fp8_weight_bytes },
		{ "activations", w->mem.activations_bytes }, { "logits", w->mem.logits_bytes },
		{ "comm buffers", w->mem.comm_buffer_bytes },
		{ "CUDA context", w->mem.context_bytes }, { "NCCL buffers", w->mem.nccl_bytes },
		{ "allocator reserve", w->mem.fragmentation_bytes },
		{ "total", w->mem.total_bytes }, { "capacity", w->mem.capacity_bytes },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].bytes > 0 || strcmp(rows[i].name, "fp8 weight copies"))
			fprintf(f, "  %-26s %14.2f %10.2f\n", rows[i].name, rows[i].bytes / GB,
				rows[i].bytes / 1073741824.0);
	verdict(r, vbuf, sizeof(vbuf));
	fprintf(f, "memory: %s\n", vbuf);
	if (sc->train_tokens > 0)
		fprintf(f, "\ntraining %.3g tokens: %.1f days, %.0f GPU-hours, $%.0f\n",
			sc->train_tokens, r->time_to_train_s / 86400, r->gpu_hours, r->cost_usd);
	fprintf(f, "\nsimulated %d of %d ranks%s, %ld flows, %ld tasks in %.2f s\n",
		r->eng.nsimulated, r->eng.nranks, r->folded ? " (folded replicas)" : "",
		r->eng.flows, r->eng.tasks, r->sim_wall_s);
}
