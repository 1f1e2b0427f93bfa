/* engine: replays per-rank programs on SimGrid. The only module that
 * includes SimGrid.
 *
 * Every rank is a set of actors on its GPU's host, one per stream of its
 * program (see program.h); cross-stream dependencies are semaphores.
 * Compute tasks take their priced time; a collective is a barrier of the
 * group, its plan's flows (see coll.h) posted at once, a second barrier,
 * and the plan's extra step latency; pipeline sends and receives are
 * mailbox transfers between stage ranks. The network is pure alpha-beta
 * (CM02, no cross-traffic, no TCP gamma), so an uncontended transfer of S
 * bytes costs latency + S / bandwidth. Concurrent flows share links
 * max-min fairly with SimGrid's sharing penalty, which for CM02 is the
 * route's latency (TCP's RTT unfairness): where flows meet, one whose
 * route crosses more switches gets less of the link (a pipeline message
 * across pods against gradient flows inside a leaf: about 1 : 1.8). Plain
 * max-min, which credit-based InfiniBand is closer to, would give equal
 * shares; see docs/howto.md on folding for what it changes.
 *
 * Folding: when every (tp, dp) replica of a stage is identical and the
 * fabric is symmetric, only the ranks with tp = dp = 0 are simulated; their
 * flows to folded peers still cross the real links (a daemon receiver
 * stands in for the peer), so link sharing is kept (but not with the
 * folded ranks' own flows: where GPUs share a NIC, "auto" folds exactly,
 * simulate.c fold_decide), and each simulated
 * rank's statistics stand for the ranks it represents. A plan that loads
 * its members unequally (a tree) is timed by its busiest member, not the
 * representative: the folded members' flows to and from it and its peers
 * are posted too, host to host, and the representative is a replica of
 * the plan's most common member (fold_cheap.c, fold_majority_replica, which
 * says what a light member cost). Replicas made distinct (job.distinct) are simulated
 * whole. With fold_exact, whole groups and the mirror traffic that can
 * meet them are posted instead (fold_exact.c). Either way the
 * replicas run in lockstep, where unfolded ones whose members differ
 * (trees, rings over several leaves) drift apart through a deep pipeline:
 * simulate_fold.c says where "exact" simulates every rank instead. What
 * folding reads against every rank simulated has one home: the folding
 * tables of docs/howto.md ("Parameter servers, stragglers, degraded links").
 *
 * Interference: NCCL's kernels run on the SMs the compute would use (one
 * CTA, so one SM, per channel: src/device/common.h launches nChannels
 * blocks; src/enqueue.cc) and take their share of HBM. While at least one
 * communication stream of a rank is inside a collective (from the
 * group's meeting to its last step), the rank's compute runs slower by a
 * factor f, with C the CTAs of the collectives in flight
 * (coll_plan.sm_channels) and H the HBM bytes per second they move
 * (ENGINE_NCCL_HBM_PER_WIRE x their bytes on the wire per second,
 * coll_plan.bus_bytes / ideal_time_s, x 2 for LL's lines and 128 / 120
 * for LL128's: engine_coll.c):
 *   f = W(C) / r + m SMs / (SMs - C) B / max(B - H, B / 2)
 * W(C) the compute-bound kernels' time on SMs - C SMs over the whole
 * work's time on all of them (job.overlap.sm_work, simulate_overlap.c: GEMM waves
 * and flash attention's grid at that SM count; c = W(0) their share), r
 * the GPU's comm_overlap_clock_ratio (gpu.h; 1 where none), m = 1 - c
 * the memory-bound share, whose kernels lose the SMs' fluid share
 * (whether a kernel streaming HBM saturates it on fewer SMs depends on
 * its loads' width, not known per kernel) and share HBM max-min with the
 * collectives (the kernel would take all of B, the bandwidth it gets
 * alone: the collectives get H while H < B / 2, the kernel the rest).
 * Without sm_work, SMs / (SMs - C) x (c / r + m B / max(B - H, B / 2))
 * over the whole work. The measured factor of a
 * calib profile is a floor under f (interference_factor > 0,
 * calib/bench_interference.c: a GEMM alone and beside a copy kernel of
 * 16 blocks; a collective does at least what that copy does, and on the
 * H200 of calib/profiles the copy cost the GEMM 1.6 % at most at the
 * power cap, below the SM model's 132 / 116). It is event-driven: a
 * compute task sleeps in segments, and every collective start and end
 * wakes it (a semaphore it sleeps on with a timeout) to re-evaluate its
 * rate, so a task of T_alone that overlaps communication for a time o
 * (wall clock) takes T_alone + o (f - 1) / f.
 * Pipeline sends and receives (copy engines in NCCL's p2p over NVLink, or
 * few CTAs) do not slow compute.
 *
 * Parameter servers (job.ps): every all-reduce of a DP group becomes a
 * synchronous push and pull. The rank sends its bucket to the servers
 * (split evenly by bytes over all of them, or whole to one in turn), waits
 * for its pushes, meets its DP group (every server then holds the
 * group's gradients), and pulls the same bytes back. Transfers are real
 * flows between the GPU's host and the server's host (dedicated servers:
 * hosts "ps<k>" behind their own NIC on the fabric core, platform.h;
 * colocated: the host of member k of the group; a rank's own shard does
 * not move), so fan-in at a server's NIC is shared max-min. The servers'
 * summing and optimizer step are not priced (the workers run no
 * optimizer). PS transfers are RDMA/CPU copies: they do not slow
 * compute (no SMs). Closed forms on a star of P one-GPU nodes of NIC
 * bandwidth B, N bytes, S servers (latencies aside):
 *   dedicated:          2 max(N / B, P N / (S B_s))
 *   colocated, S = 1:   2 (P-1) N / B            (seed 002's single master)
 *   colocated, S = P:   2 (P-1)/P N / B          (seed 002's sharded servers)
 * With ps, folding is off (every rank simulated). Asynchronous servers
 * (ps.async) skip the meeting: each push is applied as it arrives and the
 * worker pulls right after its own; the job replays job.repeat iterations
 * back to back so workers drift apart, a rank's next iteration starts
 * after its pulls (its optimizer step waits for them), and with a
 * staleness bound s a rank starts iteration i only when every rank of its
 * DP group has finished iteration i - s - 1 (stale synchronous parallel,
 * Ho et al. 2013). The staleness of each update is recorded.
 *
 * Stragglers (job.compute_scale): a rank's compute-stream tasks take their
 * priced time x its factor (a slower or throttled GPU). Degraded links
 * (job.degraded): the platform's links of those names get their
 * bandwidth and latency scaled (platform.h); the transfers crossing them
 * see it, but a collective plan's per-step latency (steps x alpha) is
 * still computed from the topology (coll.h), so a latency factor counts
 * once per transfer, not once per ring step. Stragglers, throttled ranks
 * and the GPUs behind a degraded link (job.distinct) make their replicas
 * differ: folded, every data-parallel
 * replica holding one is simulated whole, its ranks standing for
 * themselves, and the others fold into the first replica without one;
 * the collectives' barriers among simulated members make the
 * representative wait for the slow replicas (tests/test-fold.c).
 *
 * Mixed GPUs (job.rank_prog): each rank replays its own program, priced
 * for its GPU (same tasks as its stage's template, other times). Folded,
 * the replicas fall into classes of one GPU signature
 * (job.replica_class): the representative stands for its class and the
 * first replica of every other class is simulated whole, standing for
 * the folded replicas of its class; the collectives' barriers among the
 * simulated members wait for the slowest class as the unfolded run's do.
 * The interference above is its GPU's too (job.group_overlap through
 * job.rank_group): SMs, clock ratio, memory-bound share, HBM and work
 * table of the node group's GPU, priced by its own cost source.
 * Throttling windows (job.throttle): while simulated time is inside a
 * window of a rank, its compute-stream tasks progress factor x slower; a
 * task straddling an edge runs piecewise (work at rate 1 / factor inside,
 * 1 outside), with the interference slowdown on top. Times are from the
 * start of the job (the iteration's start).
 *
 * SimGrid runs one simulation per process: engine_run() can be called once
 * per process (a sweep forks a process per simulation). */
#ifndef DDLSIM_ENGINE_H
#define DDLSIM_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "diag.h"
#include "placement.h"
#include "coll.h"
#include "program.h"
#include "topology.h"

struct platform_degrade;

struct engine_rank_stats {
	double finish_s;            /* when the rank's last stream finished */
	double compute_s[CAT_N];    /* compute-stream busy time, by category */
	double comm_s[CAT_N];       /* communication-stream busy time, by category */
	double exposed_s[CAT_N];    /* compute stream waiting for communication */
	double bubble_s;            /* compute stream waiting for a pipeline peer's work */
	double interference_s;      /* compute slowed by concurrent communication (in compute_s) */
	double throttle_s;          /* compute slowed by throttling windows (in compute_s) */
	double sent_bytes[CAT_N];   /* bytes this rank put on the wire */
	int collectives[CAT_N];     /* collectives this rank took part in */
	int representative;         /* rank whose simulation these numbers are */
	int class_rank;             /* the simulated rank that stands for the rank's class of
				       alike ranks in a summary (fold_classes(), fold.h) */
	int stage;                  /* pipeline stage of the rank */
};

struct engine_result;

/* What the compute stream waited for (engine_observer.compute_wait): a
 * pipeline peer's work or its message still to be sent (the bubble), else
 * the task_cat of the communication it waited on (exposed). */
#define ENGINE_WAIT_BUBBLE (-1)

/* An observer of the replay (the trace export, sim/trace.h; the report's
 * timeline, sim/timeline.h): told when a task of a simulated rank starts
 * and ends, in simulated seconds. Task ti is prog->t[ti] of the rank's
 * stage program. For a receive, start_s is when the transfer began (the
 * sender's post or the receive, whichever is later); peer is the pipeline
 * peer of a send or receive, else -1. Any callback may be NULL. A job
 * without an observer (NULL) pays one pointer test per task and records
 * nothing. Callbacks run inside SimGrid actors: they must not block or
 * call the engine. */
struct engine_observer {
	void *ctx;
	/* Once, before the first task: every rank's stage, the simulated rank
	 * whose figures it takes (representative; itself if simulated) and
	 * the simulated rank of its class of alike ranks (class_rank), in
	 * out->rank[0..out->nranks) (borrowed for the call). */
	void (*begin)(void *ctx, const struct engine_result *out);
	void (*task_start)(void *ctx, int rank, const struct program *prog, int ti, double now_s);
	void (*task_end)(void *ctx, int rank, const struct program *prog, int ti, double start_s,
			 double end_s, int peer);
	/* Every link_sample_s of simulated time (0: never), the bytes per
	 * second crossing each link of the platform (link: its index, stable
	 * over the run; name borrowed for the call), from a daemon that stops
	 * with the simulation. */
	double link_sample_s;
	void (*link_sample)(void *ctx, int link, const char *name, double t_s, double used_Bps,
			    double bw_Bps);
	/* The compute stream of simulated rank was blocked over [from_s, to_s)
	 * waiting for `what` (ENGINE_WAIT_BUBBLE or a task_cat, above): the
	 * intervals its bubble_s and exposed_s sum, each iteration replayed,
	 * and at the end the communication still running after the last
	 * compute (told after the replay, not from an actor). */
	void (*compute_wait)(void *ctx, int rank, double from_s, double to_s, int what);
};

/* What the engine measures of the links (engine_links.c): bytes, busy
 * time and peak utilisation (exact, the default), bytes only (no usage
 * read at the clock's steps), or nothing. */
enum engine_links { ENGINE_LINKS_EXACT, ENGINE_LINKS_BYTES, ENGINE_LINKS_OFF };

/* Parameter servers of a job (see above). */
struct engine_ps {
	int servers;
	bool colocated;                      /* server k on member k of each DP group */
	bool round_robin;                    /* bucket i whole to server i mod servers */
	bool async;                          /* no meeting: each push applied as it comes */
	int staleness;                       /* async: SSP bound in iterations, < 0: none */
	double nic_bw_Bps, nic_latency_s;    /* dedicated servers' NIC */
};

/* What a collective costs the compute beside it on one GPU (the
 * interference above): the job's (job.overlap), or a node group's
 * (job.group_overlap). */
struct engine_gpu_overlap {
	int sm_count;                /* SMs of a GPU (0: no interference) */
	double interference_factor;  /* > 0: measured slowdown, a floor under the SM model */
	double comm_clock_ratio;     /* (0, 1): the clock of compute-bound kernels beside a
					collective (gpu.h comm_overlap_clock_ratio); 0 or 1: none */
	double membound_share;       /* share of the compute time in memory-bound kernels
					(simulate_overlap.c), which a collective's HBM
					traffic slows; 0: none */
	double hbm_Bps;              /* HBM bandwidth a memory-bound kernel gets alone
					(peak x mem_max); 0: no HBM sharing */
	const double *sm_work;       /* [sm_count] with C SMs running collectives, the
					compute-bound kernels' time on the other SMs over the
					whole work's time on all (simulate_overlap.c); NULL:
					SMs / (SMs - C) on all of the work */
};

/* A throttling window of one rank: compute x factor in [start_s, end_s). */
struct engine_throttle {
	int rank;
	double start_s, end_s, factor;
};

struct engine_job {
	const struct topology *topo;
	int nodes;
	const struct placement *pl;
	struct program *const *stage_prog;  /* [pp], one template per stage */
	const char *coll_algo;               /* "auto", "ring", ... */
	bool fold;
	bool fold_exact;        /* folded exactly: whole groups and mirror traffic (fold_exact.c) */
	bool fold_partial_tree; /* folded on a fat tree with a partly filled leaf or pod: the
				   replicas whose ranks or traffic touch it are simulated whole
				   (fold_partial.c) */
	struct engine_gpu_overlap overlap;   /* the topology's GPU's interference figures */
	const struct engine_gpu_overlap *group_overlap; /* [node groups] each group's GPU's
						interference figures (mixed GPUs), NULL:
						overlap for every rank */
	const int *rank_group;               /* [nranks] each rank's index into group_overlap */
	const struct engine_observer *obs;   /* NULL: none */
	const struct engine_ps *ps;          /* NULL: DP all-reduces are collectives */
	const double *compute_scale;         /* [nranks] compute-time factors, NULL: all 1 */
	struct program *const *rank_prog;    /* [nranks] each rank's program (the structure of
						its stage's stage_prog), NULL: stage_prog */
	const struct engine_throttle *throttle; /* [nthrottle] */
	int nthrottle;
	const unsigned char *distinct;       /* [nranks] ranks unlike their replicas (stragglers,
						throttled, behind a degraded link), NULL: none;
						folded, the data-parallel
						replicas holding one are simulated whole */
	const int *replica_class;            /* [size[DIM_DP] x size[DIM_EP]] the class of each
						data-parallel replica (mixed GPUs: the GPUs of
						its ranks in rank order), NULL: one class;
						folded, the first replica of each class other
						than the representative's is simulated whole and
						stands for its class (fold.c) */
	const struct platform_degrade *degraded; /* [ndegraded] (platform.h) */
	int ndegraded;
	/* Switches for checks (the figures are the same either way): post a
	 * multi-node all-to-all pair by pair, never as one flow per NIC
	 * (engine_classes.c); give each communication stream its own actor,
	 * never the compute stream's (engine_stream_merge). Set from the
	 * scenario's simulation keys, never from the environment. */
	bool collective_pairs;
	bool separate_streams;
	/* post every collective's flows, never replay a private one's
	 * first instance (engine_replay.c) */
	bool collective_flows;
	const int *gpu;                      /* [nranks] the platform's GPU each rank runs on
						(engine_run_many: jobs sharing one fabric), NULL:
						rank r on GPU r */
	enum engine_links links;             /* the links' traffic measured (scenario key
						simulation.link_traffic) */
	int repeat;                          /* iterations replayed back to back (<= 1: one);
					        the rank statistics are their mean and the
					        iteration the inverse of the ranks' mean rate */
};

/* A link of the platform the run's flows crossed (engine_links.c): a
 * split-duplex link is two, "<name>_UP" and "<name>_DOWN" (SimGrid's
 * names; platform.c names the links). Per iteration (the mean of the
 * replayed ones), folded runs counting what they simulated. */
struct engine_link_stats {
	char name[72];
	double bytes[CAT_N];        /* posted across it, by category of the posting task */
	double busy_s;              /* simulated time with a flow on it */
	double peak_util;           /* most of its bandwidth its flows used at once */
	double bw_Bps;              /* its bandwidth (degraded links' factor applied) */
	bool fatpipe;               /* a switch's crossbar (FATPIPE): never timed */
	bool timed;                 /* busy_s and peak_util measured (ENGINE_LINKS_EXACT,
				       not a crossbar); else 0 */
};


struct engine_result {
	double iteration_s;
	int nranks, nsimulated;
	struct engine_rank_stats *rank;      /* [nranks] */
	long flows, collectives, tasks;
	int actors;             /* the ranks' actors: one per (simulated rank, stream
				   not merged into its compute stream's, engine_stream_merge) */
	long replayed;          /* collectives of private plans replayed from their
				   first instance's record (engine_replay.c); their
				   flows are in flows */
	/* multi-node rail-aligned all-to-alls posted one flow per NIC while
	 * alone (engine_classes.c), those of them split back into pairs, and
	 * why some stayed per pair (static, NULL if none) */
	long cls_posted, cls_split;
	const char *cls_why;
	double platform_s;      /* wall seconds building the SimGrid platform */
	/* asynchronous parameter servers: each push's staleness, the updates
	 * of other workers the servers applied to its bucket since the worker
	 * pulled the weights it computed on */
	long ps_updates;
	double staleness_mean, staleness_p50, staleness_p95, staleness_max;
	struct engine_link_stats *links;     /* [nlinks] links with bytes, most bytes first */
	int nlinks;
};

/* Where engine_run() tells how far its replay has gone (issue 27: never
 * a silent long run). *tasks counts the tasks replayed: a run adds its
 * own to what it finds there, so the sampled iterations and sensitivity
 * runs of a what-if (runner children of the run, whatif.h) add theirs
 * when tasks lives in memory shared across fork (runner_board_create()).
 * It is written every ENGINE_PROGRESS_TASKS tasks, from the task loop's
 * existing count, and when the run ends; tick, if not NULL, is then
 * called in the process that replays (it must not call the engine).
 * Reading the count changes nothing the engine computes. */
#define ENGINE_PROGRESS_TASKS 1024    /* a power of two (the count is masked) */
struct engine_progress {
	atomic_long *tasks;     /* NULL: no progress (the default) */
	void (*tick)(void *ctx);
	void *ctx;
};

/* Set (a copy of *p) or clear (NULL) where every later engine_run() of
 * this process and of its forked children reports its progress. */
void engine_set_progress(const struct engine_progress *p);

/* Build the SimGrid platform of nodes nodes of t with every GPU (what an
 * unfolded run builds) and simulate nothing: *platform_s is the time it
 * took, *hosts the GPUs made. `ddlsim validate --platform`, the benchmark
 * of platform load. Returns 0, or -1 after reporting into d (too many
 * nodes, SimGrid rejected it, second call in a process). */
int engine_platform_load(const struct topology *t, int nodes, double *platform_s, long *hosts,
			 struct diag *d);

/* Simulate one iteration of job. Returns 0, or -1 after reporting into d
 * (second call in a process, platform error, deadlock). */
int engine_run(const struct engine_job *job, struct engine_result *out, struct diag *d);
void engine_result_finish(struct engine_result *r);

/* Simulate one iteration of each of the n jobs together on one fabric:
 * their flows share its links (max-min, as one job's do). Every job names
 * the same topology and node count (the fabric's) and the GPUs its ranks
 * run on (engine_job.gpu), disjoint from the other jobs'; none is folded,
 * observed, served by parameter servers or behind a degraded link (each
 * assumes its ranks alone stand for the rest, or a fabric of its own).
 * A job's multi-node all-to-alls go pair by pair: one flow per NIC is
 * exact only while nothing else crosses the fabric (engine_classes.c).
 * out[i] is job i's result, finished with engine_result_finish() whatever
 * is returned. Returns 0, or -1 after reporting into d (the rules above,
 * second call in a process, platform error, deadlock). */
int engine_run_many(const struct engine_job *const *jobs, int n, struct engine_result *out,
		    struct diag *d);

/* One point of a collective sweep: bytes in; the rest out. */
struct engine_coll_point {
	enum coll_op op;            /* engine_collective_run(): the collective of this point */
	double bytes;               /* N, as in coll.h */
	double time_s;              /* simulated time of the collective */
	double ideal_s;             /* the plan's closed form */
	double nccl_s;              /* NCCL's predicted time (0: not an NCCL algorithm) */
	const char *algo, *proto;   /* what ran (static strings) */
};

/* Simulate op over ranks (global GPU indices on nodes nodes of t) once
 * per point, one after another on one platform, with algorithm algo (as
 * for coll_plan_create()), and fill in pts. Counts as this process's one
 * simulation. Returns 0, or -1 after reporting into d (too many nodes for
 * the fabric, a rank outside the platform, an algorithm that cannot run
 * op on the group, a deadlock). */
int engine_collective_sweep(const struct topology *t, int nodes, const int *ranks, int n,
			    enum coll_op op, const char *algo, struct engine_coll_point *pts,
			    int npts, struct diag *d);

/* As engine_collective_sweep(), but each point runs its own pts[i].op
 * (several collectives in the one simulation of this process; `ddlsim
 * collective --ops`). A point of 0 bytes is not simulated: NCCL returns
 * without launching anything for a count of 0, so its time is 0. */
int engine_collective_run(const struct topology *t, int nodes, const int *ranks, int n,
			  const char *algo, struct engine_coll_point *pts, int npts,
			  struct diag *d);

#endif
