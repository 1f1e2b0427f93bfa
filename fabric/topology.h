/* topology: the hardware of a cluster, as a topology file describes it.
 *
 * A topology file (schema "ddlsim.topology" 1.5; 1.0 to 1.4 files are accepted)
 * describes one kind of node and the fabric that joins nodes; a scenario
 * says how many nodes. Keys marked 1.1 need schema_version "1.1".
 *
 *   key                          type    unit    default   meaning
 *   name, source                 string  -       required  display name; public spec cited
 *   gpu                          string  path    -         (1.4) a GPU preset file (schema ddlsim.gpu 1.0,
 *                                                          gpus/; relative to this file) instead of the
 *                                                          inline object below
 *   gpu.preset                   string  path    -         (1.4) a GPU preset; the object's other keys
 *                                                          override the preset's (objects key by key;
 *                                                          hbm_GB alone also replaces the preset's
 *                                                          hbm_total_bytes). Every number, a preset's
 *                                                          and an override's, is bounded as
 *                                                          models/bounds.h says
 *   gpu.name                     string  -       required
 *   gpu.peak_tflops.{fp32,tf32,fp16,bf16,fp8}  number TFLOP/s  dense peak (absent = unsupported)
 *   gpu.peak_tflops.{mxfp8,nvfp4}  number TFLOP/s (none) dense peak of block-scaled GEMMs: the
 *                                                          fp8 and fp4 tensor rate of a GPU with
 *                                                          block-scaled tensor cores (Blackwell);
 *                                                          absent = training.precision mxfp8 /
 *                                                          nvfp4 refused
 *   gpu.hbm_GB                   number  GB      required  HBM capacity (1e9 bytes)
 *   gpu.hbm_bw_GBps              number  GB/s    required  peak HBM bandwidth
 *   gpu.sm_count                 int     -       required  streaming multiprocessors
 *   gpu.compute_capability       number  -       0         (1.5) CUDA compute capability (8.0 A100, 9.0
 *                                                          H100): which attention kernel a stack runs
 *   gpu.l2_MB                    number  MB      0 (none)  (1.5) L2 that caches one SM's accesses (one
 *                                                          partition where the L2 is split): re-reads
 *                                                          of row-wise kernels (models/rowwise.h)
 *   gpu.hbm_total_bytes          number  bytes   hbm_GB    (1.2) capacity as the device reports it
 *                                                          (nvidia-smi / cudaMemGetInfo total)
 *   gpu.memory_reserved_GB       number  GB      2         CUDA context and library workspaces
 *   gpu.efficiency.gemm_max      number  0..1    0.8       best GEMM fraction of peak
 *   gpu.efficiency.gemm_half_GFLOP number GFLOP  -         obsolete since 1.5 (GEMMs are priced in
 *                                                          waves of tiles): read, not used
 *   gpu.efficiency.gemm_max_fp8  number  0..1    gemm_max  (1.2) best fp8 GEMM fraction of the fp8 peak
 *   gpu.efficiency.gemm_max_mxfp8 number 0..1   gemm_max  (1.5) best MXFP8 GEMM fraction of the mxfp8 peak
 *   gpu.efficiency.gemm_max_nvfp4 number 0..1   gemm_max  (1.5) best NVFP4 GEMM fraction of the nvfp4 peak
 *   gpu.efficiency.gemm_libraries object -       -         (1.5) per older GEMM library a stack may run
 *                                                          ("cublas11"): {max, source}, as gemm_max
 *                                                          for that library's 16-bit GEMMs
 *                                                          (models/gpu.h enum gemm_lib)
 *   gpu.efficiency.gemm_epilogue object -        -         (1.5) {serial, source}: serial true when the
 *                                                          GPU's GEMM kernels store each output tile
 *                                                          after their mainloop (not persistent: sm80
 *                                                          and older): a GEMM costs max(compute,
 *                                                          inputs) + output write (cost_roofline.c);
 *                                                          optional mainloop_max (0..1): the 16-bit
 *                                                          GEMM mainloop's fraction of peak then
 *                                                          (gemm_max re-derived without its write;
 *                                                          read with serial false, used with true)
 *   gpu.efficiency.attention_max number  0..1    -         obsolete since 1.5 (batched GEMMs are
 *                                                          priced as GEMMs): read, not used
 *   gpu.efficiency.flash_fwd_max number  0..1    0 (none)  (1.2) fused attention forward, fraction of the
 *                                                          16-bit peak at head dim 128, long sequences
 *   gpu.efficiency.flash_bwd_max number  0..1    0 (none)  (1.2) the same, backward (models/attention.h)
 *   gpu.efficiency.source        string  -       -         (1.2) the micro-benchmarks every efficiency
 *                                                          comes from
 *   gpu.efficiency.mem_max       number  0..1    0.85      element-wise kernels: fraction of HBM
 *                                                          bandwidth
 *   gpu.efficiency.mem_rowwise_max number 0..1   mem_max   (1.5) row-wise kernels (norms, softmax,
 *                                                          the loss): a measured fraction of HBM
 *                                                          bandwidth over the bytes their passes move
 *   gpu.efficiency.mem_half_MB   number  MB      -         obsolete since 1.5 (a fixed latency per
 *                                                          kernel instead): read, not used
 *   gpu.efficiency.sustained_clock_ratio number 0..1 1     (1.5) compute clock inside a training step
 *                                                          over the benchmarks' (compute-bound kernels
 *                                                          run 1/ratio slower; cost_roofline.c)
 *   gpu.efficiency.flash_sustained_ratio number 0..1 1     (1.5) flash attention's throughput in a steady
 *                                                          step over its burst benchmarks' (on top of
 *                                                          sustained_clock_ratio; cost_roofline.c)
 *   gpu.efficiency.flash_seq_half number tokens 239      (1.5) keys a query row sees at which flash
 *                                                          reaches half its maximum (models/attention.h
 *                                                          length factor)
 *   gpu.efficiency.comm_overlap_clock_ratio number 0..1 1  (1.5) the same while a collective runs beside
 *                                                          compute (the engine, compute-bound share)
 *   gpu.efficiency.attention_backends object -   -         (1.5) per flash kernel ("fa2", "fa3",
 *                                                          "cudnn"): {fwd_max, bwd_max, source}, as
 *                                                          flash_fwd_max (models/attention.h);
 *                                                          optional bwd_seq_half: the backward's
 *                                                          own half-length (else flash_seq_half);
 *                                                          with it, fa3's bwd_max is its main
 *                                                          kernel (its pre/post kernels priced
 *                                                          apart); without, the whole backward
 *   gpu.efficiency.kernel_launch_us number us    4         fixed latency of every kernel (launch,
 *                                                          fill, drain)
 *   gpu.efficiency.gemm_tile     [int,int] -     [128,256] CTA output tile (m, n), wave quantization
 *   gpu.power.tdp_W              number  W       -         (1.3) board power limit (datasheet TDP)
 *   gpu.power.idle_W             number  W       -         (1.3) power of an idle GPU
 *   gpu.power.source             string  -       required  (1.3) where both figures come from
 *   gpu.power.power_cap_W        number  W       tdp_W     (1.5) board power limit set below the TDP
 *                                                          (nvidia-smi -pl): compute-bound kernels run
 *                                                          at its clock ratio, memory-bound ones as
 *                                                          before; energy counts a busy GPU at it
 *                                                          (economics.h). Needs cap_clock_ratio; not
 *                                                          below its first point or idle_W, not above tdp_W
 *   gpu.power.cap_clock_ratio    [[W,r]] -       -         (1.5) measured compute clock at power limits
 *                                                          over the clock at tdp_W: 2-16 points,
 *                                                          limits rising, ratios in (0, 1] not
 *                                                          falling, the last [tdp_W, 1]; linear
 *                                                          between points (models/gpu.h)
 *   gpu.power.cap_source         string  -       required  (1.5) with cap_clock_ratio: the measurement
 *                                                          and the part it was taken on
 *   node.power_max_W             number  W       -         (1.3) the node's datasheet maximum (GPUs,
 *                                                          CPUs, NICs, switches, fans); economics.h
 *   node.gpus                    int     -       required  GPUs per node (<= 128)
 *   node.cpu_cores               int     -       -         (any version) the host CPU cores of a
 *                                                          node, for a data loader on the CPU
 *                                                          (models/input_pipeline.h); cited in source
 *   node.intra.kind              string  -       required  "nvswitch", "pcie" or (1.1) "nvlink_mesh"
 *   node.intra.bw_GBps           number  GB/s    required  nvswitch: per GPU per direction;
 *                                                          pcie: each GPU's link to its switch;
 *                                                          nvlink_mesh: optional, for reports
 *                                                          (default: the best GPU's NVLink total)
 *   node.intra.latency_us        number  us      required  one GPU-to-GPU hop (see below)
 *   node.intra.links             [[a,b,lanes]] - (1.1)     nvlink_mesh: NVLink lanes between GPUs a, b
 *   node.intra.lane_bw_GBps      number  GB/s    (1.1)     nvlink_mesh: per lane per direction
 *   node.intra.host_bw_GBps      number  GB/s    (1.1) 16  nvlink_mesh: PCIe to the host, for pairs
 *                                                          with no NVLink path of <= 2 hops;
 *                                                          nvswitch: (1.1) 0 (unknown) a GPU's link to
 *                                                          its CPU (PCIe or C2C), per direction, for
 *                                                          CPU offload (topology_host_bw())
 *   node.intra.pcie.sockets      int     -       (1.1) 1   pcie tree: CPU root complexes (1 or 2)
 *   node.intra.pcie.switches     int     -       (1.1)     PCIe switches, spread evenly over sockets
 *   node.intra.pcie.gpus_per_switch int  -       (1.1)     GPU g sits on switch g / gpus_per_switch
 *   node.intra.pcie.nics_per_switch int  -       (1.1) 0   NIC i sits on switch i / nics_per_switch
 *                                                          (0: NICs hang off the root complex of socket 0)
 *   node.intra.pcie.switch_uplink_GBps number GB/s (1.1)   switch to root complex, per direction
 *   node.intra.pcie.cross_socket_GBps number GB/s (1.1)    socket-to-socket link (sockets = 2)
 *   node.nics.count              int     -       required  NICs per node (<= 128)
 *   node.nics.bw_Gbps            number  Gb/s    required  per NIC, per direction
 *   node.nics.latency_us         number  us      required  per NIC traversal
 *   node.nics.gpus               [[int]] -       even      GPUs served by each NIC (default: GPU g uses NIC g*count/gpus)
 *   fabric.kind                  string  -       required  "nonblocking" (one switch, full bisection),
 *                                                          (1.1) "fat_tree" or "rail"
 *   fabric.latency_us            number  us      required  one switch traversal
 *   fabric.levels                int     -       (1.1)     fat_tree: 2 (leaf, spine) or 3 (leaf, spine, core)
 *   fabric.radix                 int     -       (1.1)     fat_tree: ports per switch; rail: nodes per
 *                                                          rail switch (0 = unlimited, default)
 *   fabric.oversubscription      number  ratio   (1.1) 1   fat_tree: leaf downlink : uplink bandwidth (>= 1)
 *   fabric.pxn                   bool    -       (1.1) true rail: cross-rail traffic first moves over
 *                                                          NVLink to the GPU on the peer's rail (NCCL PXN)
 *
 * Paths. Every GPU-to-GPU path is a list of links (topology_route()), and
 * its latency is the sum of theirs, its bandwidth the smallest:
 *   nvswitch     GPU link up + GPU link down, latency_us / 2 each;
 *   nvlink_mesh  the direct NVLink (lanes x lane_bw, latency_us); without
 *                one, two NVLinks through the intermediate GPU with the
 *                widest bottleneck (lowest index on ties), else both GPUs'
 *                PCIe links to the host (latency_us / 2 each);
 *   pcie         GPU link, then switch uplinks and the cross-socket link as
 *                needed; every PCIe link has latency_us / 2;
 *   GPU to NIC   the NIC link (nics.latency_us); in a pcie tree first the
 *                PCIe links from the GPU to the NIC's switch.
 * Between nodes: GPU to its NIC, the fabric, NIC to GPU. Fabric latency in
 * units of L = fabric.latency_us: nonblocking and rail L; fat_tree L inside
 * a leaf, 3 L across leaves (leaf, spine, leaf), 5 L across pods.
 *
 * Fat trees. A leaf has D = floor(radix r / (r + 1)) down ports (r = the
 * oversubscription; radix / 2 when r = 1), hence floor(D / nics) nodes, and
 * D x NIC bandwidth / r of uplink bandwidth (one aggregated, ECMP-balanced
 * pipe). A 2-level tree has at most radix leaves; a 3-level tree groups
 * radix / 2 leaves per pod behind non-oversubscribed spines, at most radix
 * pods. Rail fabrics: NIC i of every node on rail switch i (non-blocking);
 * with pxn the collective planner reroutes cross-rail flows over NVLink,
 * without it they are modelled as the rail switch would carry them. */
#ifndef DDLSIM_TOPOLOGY_H
#define DDLSIM_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "gpu.h"

#define TOPO_MAX_GPUS_PER_NODE 128
#define TOPO_MAX_NICS 128
#define TOPO_MAX_NODES 16384  /* platform size limit, any fabric */
#define TOPO_MAX_HOPS 16

enum intra_kind { INTRA_NVSWITCH, INTRA_PCIE, INTRA_NVLINK_MESH };
enum fabric_kind { FABRIC_NONBLOCKING, FABRIC_FAT_TREE, FABRIC_RAIL };

/* The bandwidth of a switch crossbar with none of its own
 * (fabric_bw_Bps 0): more than any sum of flows, so it binds none. */
#define TOPO_UNBOUNDED_BPS 1e15

struct topology {
	char name[96];
	char source[4096];
	char path[1024];
	char gpu_preset[1024];          /* the GPU preset file ("" = inline gpu) */
	int schema_minor;
	struct gpu_spec gpu;
	int gpus_per_node;              /* GPUs of a node the job uses (topology_use_gpus()) */
	int gpus_per_node_physical;     /* node.gpus */
	enum intra_kind intra;
	double intra_bw_Bps;        /* per GPU per direction (see the key table) */
	double intra_latency_s;
	int nics;
	double nic_bw_Bps;          /* per NIC per direction */
	double nic_latency_s;
	int gpu_nic[TOPO_MAX_GPUS_PER_NODE]; /* NIC used by each local GPU */
	enum fabric_kind fabric;
	double fabric_latency_s;
	double fabric_bw_Bps;       /* switch capacity per port (0 = unlimited) */
	double node_power_max_W;    /* 0 = not given */
	long node_cpu_cores;        /* host CPU cores per node, 0 = not given */

	/* nvlink_mesh: per-direction bandwidth of the NVLinks between local
	 * GPUs (0 = none), and the host PCIe link for pairs without a path */
	double *nvl_bw_Bps;         /* [gpus * gpus], owned */
	int *nvl_via;               /* [gpus * gpus] 2-hop GPU, -1 direct, -2 host; owned */
	double host_bw_Bps;
	/* pcie tree (pcie_switches = 0: one flat switch) */
	int pcie_sockets, pcie_switches, pcie_gpus_per_switch, pcie_nics_per_switch;
	double pcie_uplink_bw_Bps, pcie_xsocket_bw_Bps;
	/* fat_tree */
	int ft_levels, ft_radix;
	double ft_oversub;
	int ft_nodes_per_leaf, ft_leaves_per_pod;
	double ft_leaf_up_bw_Bps, ft_pod_up_bw_Bps;
	/* rail */
	int rail_radix;
	bool rail_pxn;
};

/* Load and validate. Returns a new topology (topology_destroy()) or NULL
 * after reporting every problem into d. */
struct topology *topology_load(const char *path, struct diag *d);

/* Use only the first used GPUs of each node (a scenario's
 * gpus_per_node_used): t then describes nodes of used GPUs with the same
 * NICs, fabric and per-GPU links; the others idle and carry nothing. A
 * 2-hop NVLink route through an unused GPU falls back to the host (no
 * NCCL kernel runs on an unused GPU to forward it). Returns 0, or -1
 * after reporting "file: jpath: ..." when used is not in 1..node.gpus. */
int topology_use_gpus(struct topology *t, int used, const char *file, const char *jpath,
		      struct diag *d);

/* Check a GPU preset file (schema "ddlsim.gpu" 1.0, gpus/<name>.json): the
 * keys of the topology's gpu object at the top level, plus "sources", an
 * object with a string per key citing where its number comes from.
 * Returns 0, or -1 after reporting every problem into d. */
int topology_gpu_preset_check(const char *path, struct diag *d);
/* Read a GPU preset file (checked as topology_gpu_preset_check() does)
 * into out, as a topology's gpu would read. Returns 0, or -1 after
 * reporting every problem into d. */
int topology_gpu_preset_load(const char *path, struct gpu_spec *out, struct diag *d);
/* Whether a board power limit of cap_W can apply to GPU g, by the rules of
 * gpu.power.power_cap_W (not above tdp_W, a measured cap_clock_ratio, not
 * below its first point nor idle_W): 0, or -1 with why (the message after
 * "power_cap_W: ") in msg. */
int topology_gpu_cap_check(const struct gpu_spec *g, double cap_W, char *msg, size_t n);
void topology_destroy(struct topology *t);

/* Per-direction bandwidth of one GPU's link to host memory (CPU
 * offload): nvlink_mesh and nvswitch the host_bw_GBps key (0 if an
 * nvswitch file gives none), pcie the GPU's link to its switch. */
double topology_host_bw(const struct topology *t);

/* Where global GPU index r lives. */
static inline int topology_node_of(const struct topology *t, int r) { return r / t->gpus_per_node; }
static inline int topology_local_of(const struct topology *t, int r) { return r % t->gpus_per_node; }

/* ---- links and routes (topology_route.c) ----------------------------- */

enum topo_link_kind {
	TL_GPU,        /* GPU into its NVSwitch / PCIe switch / host: node, index = local GPU */
	TL_NVLINK,     /* NVLink between local GPUs index < index2 */
	TL_PCIE_UP,    /* PCIe switch index to its root complex */
	TL_XSOCKET,    /* socket 0 <-> socket 1 */
	TL_NIC,        /* NIC index of node */
	TL_SWITCH,     /* a switch crossing (FATPIPE): fabric-level index, see platform.c */
	TL_LEAF_UP,    /* fat tree leaf index uplinks (aggregated) */
	TL_POD_UP,     /* fat tree pod index uplinks (aggregated) */
	TL_KINDS
};

/* One link of a path. dir: +1 "UP", -1 "DOWN" (full-duplex links: the
 * two directions do not share), 0 shared (FATPIPE switch). */
struct topo_hop {
	enum topo_link_kind kind;
	int node, index, index2;
	int dir;
};

/* Links of the path from GPU a to GPU b (global indices, a != b) into
 * hops (room for TOPO_MAX_HOPS). Returns the count. */
int topology_route(const struct topology *t, int a, int b, struct topo_hop *hops);
/* Links from local GPU g of node to its node's fabric gateway (through
 * its NIC), and between the gateways of nodes na != nb. Return the count. */
int topology_route_to_nic(const struct topology *t, int node, int g, struct topo_hop *hops);
int topology_route_fabric(const struct topology *t, int na, int nb, struct topo_hop *hops);

double topology_link_bw(const struct topology *t, const struct topo_hop *h);
double topology_link_latency(const struct topology *t, const struct topo_hop *h);
/* A name unique to the link (and direction, if any) of h, for tables. */
unsigned long long topology_link_key(const struct topology *t, const struct topo_hop *h);

/* One-way latency and bottleneck bandwidth of the uncontended path a -> b:
 * the sum and the minimum over topology_route(). */
double topology_path_latency(const struct topology *t, int a, int b);
double topology_path_bw(const struct topology *t, int a, int b);

/* Fat-tree shape for nodes: 0, or -1 after reporting why the fabric cannot
 * hold that many nodes into d. */
int topology_check_nodes(const struct topology *t, int nodes, struct diag *d);
/* The most nodes t holds (what topology_check_nodes() accepts). */
long topology_node_capacity(const struct topology *t);

/* Whether nodes nodes of t form a symmetric fabric: every node sees the
 * same switches, link capacities and sharing above it, so identical
 * replicas placed node-aligned see identical contention and can be folded
 * (engine.h). True for a non-blocking fabric; a fat tree of any
 * oversubscription whose nodes fill whole leaves (and, above one pod, whole
 * pods); a rail fabric whose rail switches are filled alike (radix 0, one
 * switch per rail, or a multiple of the radix). False for a partly filled
 * leaf or pod, which would give some replicas a less loaded uplink. */
bool topology_is_symmetric(const struct topology *t, int nodes);

/* Classes of links a group of GPUs crosses when its members talk to each
 * other, as a comma-separated list in a fixed order from "nvswitch",
 * "nvlink", "pcie", "host", "nic/fabric" (empty for one GPU). Writes into
 * out (size n) and returns out. */
const char *topology_group_links(const struct topology *t, const int *ranks, int n,
				 char *out, size_t size);

const char *intra_kind_name(enum intra_kind k);
const char *fabric_kind_name(enum fabric_kind k);

#endif
