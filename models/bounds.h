/* bounds: the physical range of every number ddlsim reads.
 *
 * One rule for numbers: a number that reaches the engine, the expression
 * evaluator or a range is finite and within the physical range of what it
 * measures, checked when it is read (exit 3), so that what the engine
 * cannot simulate (a latency of 1e308 s makes SimGrid spin, a log-normal
 * sigma of 1000 overflows its clock) is refused before simulating. Key
 * names carry their unit (sim/scenario.h, house style), so one table keyed
 * by name bounds every file format at once: an exact key name first, then
 * a unit suffix ("*_us"), then the default.
 *
 *   key             smallest > 0   largest   unit       why
 *   sigma           -              2         -          log-normal sigma 2: a rank 7x the median at 1 sd
 *   slowdown        -              1000      x          a straggler 1000x slower than its peers
 *   factor          -              1000      x          a throttled GPU 1000x slower
 *   latency_factor  -              1e6       x          1 us links degraded to 1 s
 *   bw_factor       1e-6           1e6       x          a link a million times slower or faster
 *   capacity_factor -              1000      x          MoE expert capacity
 *   oversubscription -             1000      x          fabric taper
 *   pue             -              10        -          power usage effectiveness
 *   zipf_s          -              100       -          Zipf exponent of expert routing
 *   usd_per_gpu_hour -             1e4       USD/GPU-h  a GPU-hour at 1,000x the cloud price
 *   usd_per_kWh     -              1000      USD/kWh
 *   train_tokens    -              1e18      tokens     100,000x Llama 3's 15 T
 *   dataset_tokens  -              1e18      tokens     a goal's epochs train on: as train_tokens
 *   seq_len         -              2147483647 tokens    a sequence's tokens (integers of the engine)
 *   global_batch    -              2147483647 samples   an iteration's samples (the same)
 *   tflops          1e-6           1e6       TFLOP/s    a profile entry's achieved rate
 *   tflops_per_gpu, *_tflops_per_gpu  1e-6  1e6  TFLOP/s
 *   *_us            -              1e6       us         latencies, launch and issue times: up to 1 s
 *   *_s             1e-12          1e9       s          durations: a picosecond to 30 years
 *   *_days          -              36500     days
 *   *_per_hour      -              1e4       per hour   failure rates
 *   *_GBps, GBps    1e-6           1e12      GB/s       bandwidths (1e12: the "free" links of tests)
 *   *_Gbps          1e-6           8e12      Gbit/s
 *   *_W             -              1e8       W
 *   *_MB            -              1e9       MB
 *   *_GB            -              1e7       GB
 *   *_GFLOP         -              1e12      GFLOP
 *   *_usd           -              1e13      USD
 *   (any other)     -              1e30      -          no quantity ddlsim models is larger
 *
 * "Smallest > 0" bounds a positive value from below (a positive duration
 * under a picosecond is a typo or an exponent gone wrong); 0, where the key
 * allows it, stays allowed. An integer key with an exact entry (seq_len)
 * is held to it as well (models/jload.h's integers).
 *
 * A value derived from others is held to the bound of the key it stands
 * for (bound_check_derived): a goal's epochs x dataset_tokens to
 * train_tokens', a ViT's (image_size / patch_size)^2 + 1 tokens to
 * seq_len's, a goal's global_batch_tokens.max / seq_len to global_batch's,
 * so that no route around a bound reaches the engine; and the
 * fastest a run could train its tokens (every GPU at 1.25 x its peak, the
 * most a cost source prices a kernel at) to *_days and *_usd, before
 * simulating (sim/plan.h's plan_check_train_time).
 *
 * Some sizes are bounded by another size of the same file
 * (bound_check_ratio), keyed by their JSON path:
 *
 *   key                  of            at most   why
 *   mla/kv_lora_rank     hidden_size   1 x       MLA's latent compresses the hidden state:
 *                                                DeepSeek-V2 512 of 5120 (0.1 x), V3 512 of 7168
 *   mla/q_lora_rank      hidden_size   1 x       DeepSeek-V2 and V3: 1536 of 5120 and of 7168
 *   finetune/rank        min(d, k) of  1 x       a LoRA update B A of a d x k weight has rank at
 *                        the adapted             most min(d, k): hidden_size, kv_heads x head_dim
 *                        weights                 with k_proj or v_proj, ffn_size if narrower
 *                                                (Hu et al. 2021: r 1..64) */
#ifndef DDLSIM_BOUNDS_H
#define DDLSIM_BOUNDS_H

#include <stdbool.h>

struct bound {
	const char *key;       /* exact name, or "*suffix" */
	double tiny;           /* smallest magnitude of a nonzero value (0: none) */
	double max;            /* largest magnitude */
	const char *unit;      /* for messages ("" when unitless) */
};

/* The bound of key (never NULL: the default entry when nothing matches).
 * Borrowed from a static table. */
const struct bound *bound_of(const char *key);

/* Check x against key's bound. Returns true if x is finite and within it;
 * otherwise false with "must be ..., got ..." written into msg (n bytes),
 * naming the bound and its unit. */
bool bound_check(const char *key, double x, char *msg, unsigned long n);

/* Check x, derived from other values as how says (the formula with its
 * operands, e.g. "epochs x dataset_tokens = 3 x 1e+30"), against the bound
 * of key, the input it stands for. Returns true if within; otherwise false
 * with "KEY = HOW must be at most ..., got X" in msg (n bytes); the
 * caller says where the bound comes from. */
bool bound_check_derived(const char *key, double x, const char *how, char *msg, unsigned long n);

/* Check x, the value at JSON path key (a "bound_check_ratio" row of the
 * table above), against its bound relative to of_value (the value of the
 * row's "of" key). Returns true if within or key has no row; otherwise
 * false with "must be at most R x OF = ... (why), got X" in msg. */
bool bound_check_ratio(const char *key, double x, double of_value, char *msg, unsigned long n);

#endif
