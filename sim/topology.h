/* topology: the hardware of a cluster, as a topology file describes it.
 *
 * A topology file (schema "ddlsim.topology" 1.0) describes one kind of node
 * and the fabric that joins nodes; a scenario says how many nodes.
 *
 *   key                          type    unit    meaning
 *   name, source                 string  -       display name; public spec cited
 *   gpu.name                     string  -
 *   gpu.peak_tflops.{fp32,tf32,fp16,bf16,fp8}  number TFLOP/s  dense peak (absent = unsupported)
 *   gpu.hbm_GB                   number  GB      HBM capacity (1e9 bytes)
 *   gpu.hbm_bw_GBps              number  GB/s    peak HBM bandwidth
 *   gpu.sm_count                 int     -       streaming multiprocessors
 *   gpu.memory_reserved_GB       number  GB      CUDA context + allocator reserve (default 2)
 *   gpu.efficiency.gemm_max      number  0..1    best GEMM fraction of peak
 *   gpu.efficiency.gemm_half_GFLOP number GFLOP  GEMM work reaching half of gemm_max
 *   gpu.efficiency.attention_max number  0..1    attention-core batched GEMMs
 *   gpu.efficiency.mem_max       number  0..1    best fraction of HBM bandwidth
 *   gpu.efficiency.mem_half_MB   number  MB      traffic reaching half of mem_max
 *   gpu.efficiency.kernel_launch_us number us    fixed cost per kernel
 *   gpu.efficiency.gemm_tile     [int,int] -     CTA output tile (m, n), wave quantization
 *   node.gpus                    int     -       GPUs per node
 *   node.intra.kind              string  -       "nvswitch" or "pcie"
 *   node.intra.bw_GBps           number  GB/s    per GPU, per direction
 *   node.intra.latency_us        number  us      GPU-to-GPU latency
 *   node.nics.count              int     -       NICs per node
 *   node.nics.bw_Gbps            number  Gb/s    per NIC, per direction
 *   node.nics.latency_us         number  us      per NIC traversal
 *   node.nics.gpus               [[int]] -       GPUs served by each NIC (default: GPU g uses NIC g*count/gpus)
 *   fabric.kind                  string  -       "nonblocking" (one switch, full bisection)
 *   fabric.latency_us            number  us      switch traversal
 *
 * Latency of a path is the sum of what it crosses: inside a node
 * intra.latency_us; between nodes 2 x nics.latency_us + fabric.latency_us. */
#ifndef DDLSIM_TOPOLOGY_H
#define DDLSIM_TOPOLOGY_H

#include <stdbool.h>

#include "diag.h"
#include "gpu.h"

#define TOPO_MAX_GPUS_PER_NODE 128
#define TOPO_MAX_NICS 64

enum intra_kind { INTRA_NVSWITCH, INTRA_PCIE };
enum fabric_kind { FABRIC_NONBLOCKING };

struct topology {
	char name[96];
	char source[512];
	char path[1024];
	struct gpu_spec gpu;
	int gpus_per_node;
	enum intra_kind intra;
	double intra_bw_Bps;        /* per GPU per direction */
	double intra_latency_s;
	int nics;
	double nic_bw_Bps;          /* per NIC per direction */
	double nic_latency_s;
	int gpu_nic[TOPO_MAX_GPUS_PER_NODE]; /* NIC used by each local GPU */
	enum fabric_kind fabric;
	double fabric_latency_s;
	double fabric_bw_Bps;       /* switch capacity per port (0 = unlimited) */
};

/* Load and validate. Returns a new topology (topology_destroy()) or NULL
 * after reporting every problem into d. */
struct topology *topology_load(const char *path, struct diag *d);
void topology_destroy(struct topology *t);

/* Where global GPU index r lives. */
static inline int topology_node_of(const struct topology *t, int r) { return r / t->gpus_per_node; }
static inline int topology_local_of(const struct topology *t, int r) { return r % t->gpus_per_node; }

/* One-way latency and bottleneck bandwidth of the uncontended path a -> b. */
double topology_path_latency(const struct topology *t, int a, int b);
double topology_path_bw(const struct topology *t, int a, int b);

const char *intra_kind_name(enum intra_kind k);

#endif
