/* plan_check_pipe: plan_check()'s pipeline checks (plan_check-private.h):
 * how the layers split over the stages (stage_layers, vstage_layers,
 * first/last_stage_layers, interleaving) and what the zero-bubble
 * schedules ZB-H1 and DualPipe do not model. */
#include "plan_check-private.h"

#include "schedule.h"

/* first/last_stage_layers against the model and the other split keys. */
static void check_first_last(const struct plan *p, const struct model *m, const char *f,
			     struct diag *d)
{
	const char *key = p->parallel.first_stage_layers ? "/parallel/first_stage_layers"
						: "/parallel/last_stage_layers";
	if (!p->parallel.first_stage_layers && !p->parallel.last_stage_layers)
		return;
	if (p->parallel.pp < 2) {
		diag_err(d, f, key, "needs pipeline parallelism (pp >= 2), got pp = %d", p->parallel.pp);
		return;
	}
	if (p->parallel.nstage_layers)
		diag_err(d, f, key, "cannot be combined with stage_layers");
	if (p->parallel.nvstage_layers)
		diag_err(d, f, key, "cannot be combined with vstage_layers");
	if (p->parallel.nstage_layers || p->parallel.nvstage_layers)
		return;
	int left = p->parallel.pp - (p->parallel.first_stage_layers > 0) - (p->parallel.last_stage_layers > 0);
	long rest = m->layers - p->parallel.first_stage_layers - p->parallel.last_stage_layers;
	if (left == 0 && rest != 0)
		diag_err(d, f, key, "first_stage_layers + last_stage_layers must equal the model's %ld "
			 "layers with pp = 2, got %d + %d", m->layers, p->parallel.first_stage_layers,
			 p->parallel.last_stage_layers);
	else if (left > 0 && (rest < left || rest % left))
		diag_err(d, f, key, "the %ld layers left after the first and last stages (%ld - %d - %d) "
			 "must split evenly over the other %d stages", rest, m->layers,
			 p->parallel.first_stage_layers, p->parallel.last_stage_layers, left);
}

/* vstage_layers: one count per virtual stage, adding up to the model. */
static void check_vstages(const struct plan *p, const struct model *m, int v, const char *f,
			  struct diag *d)
{
	long sum = 0;

	if (!p->parallel.nvstage_layers)
		return;
	if (p->parallel.nstage_layers)
		diag_err(d, f, "/parallel/vstage_layers", "cannot be combined with stage_layers");
	if (p->parallel.nvstage_layers != p->parallel.pp * v)
		diag_err(d, f, "/parallel/vstage_layers", "expected one layer count per virtual stage "
			 "(pp x interleave = %d x %d = %d), got %d", p->parallel.pp, v, p->parallel.pp * v,
			 p->parallel.nvstage_layers);
	for (int i = 0; i < p->parallel.nvstage_layers; i++)
		sum += p->parallel.vstage_layers[i];
	if (sum != m->layers)
		diag_err(d, f, "/parallel/vstage_layers", "must add up to the model's %ld layers, got %ld",
			 m->layers, sum);
}

/* The split of the layers over the stages. */
static void check_stages(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	int v = p->parallel.schedule == SCHED_INTERLEAVED ? p->parallel.interleave : 1;
	bool explicit = p->parallel.nstage_layers || p->parallel.nvstage_layers || p->parallel.first_stage_layers ||
			p->parallel.last_stage_layers;

	if (p->parallel.pp > m->layers)
		diag_err(d, f, "/parallel/pp", "must be <= the model's %ld layers, got %d", m->layers,
			 p->parallel.pp);
	else if (p->parallel.nstage_layers) {
		long sum = 0;
		if (p->parallel.nstage_layers != p->parallel.pp)
			diag_err(d, f, "/parallel/stage_layers", "expected one layer count per pipeline stage (pp = %d), got %d",
				 p->parallel.pp, p->parallel.nstage_layers);
		for (int i = 0; i < p->parallel.nstage_layers; i++)
			sum += p->parallel.stage_layers[i];
		if (sum != m->layers)
			diag_err(d, f, "/parallel/stage_layers", "must add up to the model's %ld layers, got %ld",
				 m->layers, sum);
	} else if (!explicit && p->parallel.schedule == SCHED_INTERLEAVED &&
		   m->layers % ((long)p->parallel.pp * p->parallel.interleave))
		diag_err(d, f, "/parallel/interleave", "pp x interleave = %d x %d must divide the %ld layers "
			 "(or give first_stage_layers / last_stage_layers or vstage_layers)",
			 p->parallel.pp, p->parallel.interleave, m->layers);
	check_first_last(p, m, f, d);
	check_vstages(p, m, v, f, d);
	if (p->parallel.interleave > 1 && p->parallel.pp < 2)
		diag_err(d, f, "/parallel/interleave", "interleaving needs pipeline parallelism (pp >= 2), got pp = %d",
			 p->parallel.pp);
	if (p->parallel.interleave > 1 && p->parallel.schedule != SCHED_INTERLEAVED)
		diag_err(d, f, "/parallel/interleave", "needs schedule \"interleaved\", got \"%s\"",
			 schedule_registry[p->parallel.schedule].name);
}

/* ZB-H1 (schedule.h) splits each layer's backward into B and W by its
 * weight-gradient GEMMs (blocks.h wgrad); what would need more than that
 * split is refused: CP's backward pipeline, tp_comm_overlap's
 * chunked GEMMs, parameters that W would have to fetch again (ZeRO-3's
 * gathers, offloaded parameters), and full recomputation (the layer
 * inputs it recomputes in B would wait for W). Interleaving is refused by
 * check_stages (it needs schedule "interleaved"). Expert parallelism is
 * not refused: the MoE block's B runs the dispatch, the experts' input
 * gradients and the combine, and leaves the router's and experts' weight
 * gradients to W (blocks.h moe_wgrad), as DualPipe does. */
static void check_zbh1(const struct plan *p, const char *f, struct diag *d)
{
	if (p->parallel.schedule != SCHED_ZBH1)
		return;
	if (p->parallel.cp > 1)
		diag_err(d, f, "/parallel/cp", "schedule \"zb-h1\" does not split context parallelism's "
			 "attention backward into B and W; needs cp = 1, got %d", p->parallel.cp);
	if (p->communication.tp_comm_overlap)
		diag_err(d, f, "/communication/tp_comm_overlap", "schedule \"zb-h1\" does not split "
			 "tp_comm_overlap's chunked GEMMs into B and W; needs false");
	if (p->parallel.zero >= ZERO_3)
		diag_err(d, f, "/parallel/zero", "schedule \"zb-h1\" with ZeRO-3 is not modelled (W would "
			 "gather the layer's parameters again); needs zero <= 2, got %d", (int)p->parallel.zero);
	if (p->parallel.recompute == RECOMPUTE_FULL)
		diag_err(d, f, "/parallel/recompute", "schedule \"zb-h1\" with full recomputation is not "
			 "modelled (W would hold the recomputed layer inputs, which memory does not count); "
			 "needs \"none\" or \"selective\", got \"full\"");
	if (p->parallel.offload == OFFLOAD_PARAMS)
		diag_err(d, f, "/parallel/offload", "schedule \"zb-h1\" with offloaded parameters is not "
			 "modelled (W would fetch them again); needs \"none\" or \"optimizer\", got \"%s\"",
			 plan_offload_names[p->parallel.offload]);
}

/* DualPipe (schedule.h): the reference's requirements (dualpipe.py
 * step(): num_ranks even, num_chunks even and >= 2 num_ranks), and what
 * its B/W split does not model, as for zb-h1; its expert-parallel
 * backward splits (B leaves the experts' and router's weight gradients
 * to W, blocks.h moe_wgrad). Tied embeddings are refused: the first
 * and last ranks each hold the embedding and the head. */
static void check_dualpipe(const struct plan *p, const struct model *m, const char *f,
			   struct diag *d)
{
	long mb = (long)plan_microbatches(p);
	if (p->parallel.schedule != SCHED_DUALPIPE)
		return;
	if (p->parallel.pp < 2 || p->parallel.pp % 2)
		diag_err(d, f, "/parallel/pp", "schedule \"dualpipe\" needs an even number of pipeline "
			 "stages (pp >= 2), got %d", p->parallel.pp);
	else if (mb % 2 || mb < 2L * p->parallel.pp)
		diag_err(d, f, "/training/global_batch", "schedule \"dualpipe\" needs an even number of "
			 "micro-batches per pipeline, at least 2 x pp = %d (DualPipe.step()), got %ld",
			 2 * p->parallel.pp, mb);
	if (p->parallel.cp > 1)
		diag_err(d, f, "/parallel/cp", "schedule \"dualpipe\" does not split context parallelism's "
			 "attention backward into B and W; needs cp = 1, got %d", p->parallel.cp);
	if (p->communication.tp_comm_overlap)
		diag_err(d, f, "/communication/tp_comm_overlap", "schedule \"dualpipe\" does not split "
			 "tp_comm_overlap's chunked GEMMs into B and W; needs false");
	if (p->parallel.recompute == RECOMPUTE_FULL)
		diag_err(d, f, "/parallel/recompute", "schedule \"dualpipe\" with full recomputation is not "
			 "modelled (W would hold the recomputed layer inputs, which memory does not count); "
			 "needs \"none\", \"selective\" or \"selective-op\", got \"full\"");
	if (p->parallel.offload == OFFLOAD_PARAMS)
		diag_err(d, f, "/parallel/offload", "schedule \"dualpipe\" with offloaded parameters is not "
			 "modelled (W would fetch them again); needs \"none\" or \"optimizer\", got \"%s\"",
			 plan_offload_names[p->parallel.offload]);
	if (m->tied_embeddings)
		diag_err(d, f, "/model", "schedule \"dualpipe\" with tied embeddings is not modelled (the "
			 "first and last ranks each hold the embedding and the head); needs a model with "
			 "untied embeddings");
}

void plan_check_pipeline(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	check_stages(p, m, f, d);
	check_zbh1(p, f, d);
	check_dualpipe(p, m, f, d);
}
