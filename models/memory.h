/* memory: the memory anatomy of one GPU in a training job.
 *
 * Model states follow the ZeRO paper (Rajbhandari et al. 2020): with mixed
 * precision, Psi parameters cost 2 Psi bytes of fp16/bf16 weights, 2 Psi of
 * gradients and K Psi of optimizer state (Adam: fp32 master weights,
 * momentum and variance, K = 12). ZeRO-1 shards the optimizer state over
 * the N_d data-parallel ranks, ZeRO-2 also the gradients, ZeRO-3 / FSDP
 * also the parameters. In fp32 training K = 8 (the weights are the master).
 *
 * Activations follow Korthikanti et al. 2022, "Reducing Activation
 * Recomputation in Large Transformer Models", bytes per layer for sequence
 * s, micro-batch b, hidden h, heads a, tensor parallelism t (16-bit
 * activations, 1-byte dropout masks):
 *   no parallelism            sbh (34 + 5as/h)
 *   tensor parallel           sbh (10 + 24/t + 5as/(ht))
 *   tensor + sequence par.    sbh/t (34 + 5as/h)
 *   selective recompute       drops the 5as/h term (the attention core)
 *   full recompute            2sbh (only the layer input), / t with SP
 * times the layers a rank holds and the micro-batches in flight at its
 * peak, which the pipeline schedule counts (1F1B: p - stage on stage
 * `stage`; GPipe: m; interleaving adds its factor). */
#ifndef DDLSIM_MEMORY_H
#define DDLSIM_MEMORY_H

#include <stdbool.h>

#include "gpu.h"
#include "model.h"
#include "workload.h"

enum zero_stage { ZERO_0, ZERO_1, ZERO_2, ZERO_3 };

/* What one rank holds. */
struct mem_rank_input {
	const struct model *model;
	const struct gpu_spec *gpu;
	enum dtype dtype;          /* training precision: fp32, fp16 or bf16 */
	double grad_elem_bytes;    /* bytes per gradient element (4 for Megatron's fp32
				      main_grad); 0 = the weights' size */
	double micro_batch, seq;
	int tp, dp;
	bool sp;
	enum zero_stage zero;
	enum recompute recompute;
	double layers;             /* transformer layers on this rank (all chunks) */
	bool has_embedding, has_head;
	double inflight;           /* peak micro-batches in flight, in units of the
				      rank's whole layer set (chunks / v) */
	double bucket_bytes;       /* gradient bucket size (DDP / ZeRO) */
	double prefetch_layers;    /* ZeRO-3: layers all-gathered ahead */
};

struct mem_anatomy {
	double params_local;       /* parameters this rank owns before ZeRO sharding */
	double weights_bytes;
	double grads_bytes;
	double optimizer_bytes;
	double activations_bytes;  /* peak */
	double act_per_layer_bytes;/* one layer, one micro-batch */
	double logits_bytes;
	double comm_buffer_bytes;
	double reserved_bytes;
	double total_bytes;
	double capacity_bytes;
	bool fits;
};

/* Activation bytes of one layer for one micro-batch under the input's
 * parallelism and recompute mode (formulas above). */
double memory_layer_activations(const struct mem_rank_input *in);

/* Bytes per parameter of optimizer state before sharding (12 or 8). */
double memory_optimizer_bytes_per_param(enum dtype dt);

/* Fill out from in. */
void memory_rank(const struct mem_rank_input *in, struct mem_anatomy *out);

const char *zero_stage_name(enum zero_stage z);

#endif
