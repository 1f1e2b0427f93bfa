/* engine-private.h: the engine's internal structures, shared by its files
 * and by no one else (SQLite's vdbeInt.h).
 *
 * The engine is the one module that talks to SimGrid. It is split by
 * concept, each file with its part of a run:
 *   engine.c           the adapter: SimGrid set up once per process, the
 *                      platform, engine_run as phases, the result
 *   engine_stream.c    one actor per (simulated rank, used stream): its
 *                      tasks in order, cross-stream waits, compute with
 *                      interference and throttling; it dispatches each
 *                      task to its kind's file; streams the compute
 *                      stream only waits through, and its sends, run on
 *                      its actor
 *   engine_recv.c      both pipeline receive lanes of a rank on one
 *                      actor, at the instants an actor per lane gives
 *   engine_coll.c      collectives: the flows a member posts
 *                      (folded: for its mirrors too), daemon sinks
 *   engine_p2p.c       pipeline messages between stages (and their
 *                      mirrors when folded exactly)
 *   engine_ps.c        data-parallel all-reduces through parameter
 *                      servers, synchronous or with a staleness bound
 *   engine_observer.c  the progress count and the link sampler
 *   engine_sweep.c     the collective sweep (ddlsim collective)
 *   engine_replay.c    private collectives (links nothing else uses)
 *                      posted as one member's flows after the first
 *   engine_classes.c   a rail-aligned all-to-all as one flow per NIC while
 *                      nothing else crosses its NICs, split back into
 *                      pairs when anything does
 *   engine_links.c     per-link traffic: bytes by category, busy time,
 *                      peak utilisation
 *   engine_rank.c      below every task kind: a rank's host, starting an
 *                      actor, group barriers, the SM-busy count
 * Calls run one way: engine.c -> engine_recv.c -> engine_stream.c -> the
 * task kinds -> engine_rank.c (no circle among the engine's files).
 * The folding planner (fold.h) and the plan cache (cplan.h) hold no
 * SimGrid object; struct sim embeds the planner's state. */
#ifndef DDLSIM_ENGINE_PRIVATE_H
#define DDLSIM_ENGINE_PRIVATE_H

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

#include "engine.h"
#include "fold.h"

/* A run's progress report (engine_observer.c, engine_set_progress). */
struct progress {
	bool on;
	long base;              /* the count found when the run started */
};

struct platform_extra;
struct rank_inst;
struct cls_inst;

/* A per-pair plan of the plan cache and its class plan (NULL: none, why). */
struct cls_map {
	const struct coll_plan *pairs;
	struct coll_plan *cls;
	const char *why;
};

/* The class plans of the run's all-to-alls (engine_classes.c). */
struct engine_cls {
	bool on;                /* posted where provable: unfolded, no degraded link */
	const char *off_why;    /* static: why not on, NULL if on or nothing to fold */
	int nkeys;              /* NICs of the platform: node x nics + index */
	struct cls_inst **occ;  /* [nkeys] the class plan holding the NIC, or NULL */
	double *stamp_s;        /* [nkeys] when a flow across it was last posted (-1) */
	void **link[2];         /* [nkeys] its outgoing and incoming SimGrid links, found lazily */
	long posted, split;     /* all-to-alls posted as classes, of them split */
	const char *why;        /* static: the first reason one stayed per pair */
	struct cls_map *map;    /* [mapcap] open addressing on the per-pair plan */
	size_t nmap, mapcap;
};

/* A group instance's barrier, where its simulated members meet before
 * a collective's flows and after them, and what they tell each other in
 * between (engine_coll.c). */
struct group_bar {
	sg_bar_t bar;
	int members;            /* the simulated ones: the barrier's count */
	int arrived, ended;     /* members at the first meeting, members whose flows ended */
	double latency_s;       /* the collective's latency, as the first to arrive has it */
	bool same_latency;      /* every member's latency is latency_s */
	struct cls_inst *cls;   /* the collective's class plan's holder, or NULL (engine_cls_join) */
	const struct coll_plan *cls_plan; /* that class plan */
	int cls_posters;        /* members that asked for it so far */
};

/* A route's traffic so far (engine_links.c): the bytes posted from one
 * host to another, by task category. */
#define ROUTE_INLINE_LINKS 10
struct route_rec {
	sg_host_t src, dst;     /* src NULL: an empty slot */
	unsigned gen;           /* link_traffic.idled + 1 (mod 2^32) when its links
				 * were last all made active (0: never) */
	int n;
	int ids[ROUTE_INLINE_LINKS]; /* its links (engine_platform_route_ids()), the
				 * first ten in the record's first cache line */
	const int *all;         /* all n of them */
	double bytes[CAT_N];
};

/* A link's state in the run (engine_links.c): what a step of the clock
 * reads and writes of it in one record, 40 bytes. */
struct link_rec {
	sg_link_t link;
	double busy_s;          /* simulated time it carried a flow (while
				 * active: link_traffic.abusy_s[pos]) */
	double peak_Bps;        /* most usage over a step */
	unsigned char state;    /* LINK_IDLE, LINK_ACTIVE or LINK_FATPIPE */
	int pos;                /* its index in link_traffic.active, while active */
	unsigned long long read_at; /* the step it was last read again at */
};

/* Every link's traffic of the run (engine_links.c): the routes' bytes,
 * and per link id (engine_platform_route_ids()) its state, busy time and
 * peak usage. */
struct link_traffic {
	enum engine_links mode; /* what is measured (engine.h) */
	unsigned idled;         /* links that left the active list so far (mod 2^32) */
	struct route_rec *routes; /* [rcap] open addressing on the host pair */
	size_t nroutes, rcap;
	struct link_rec *lk;    /* [n] by link id */
	int n;
	size_t cap;
	int *active;            /* the links in use (engine_links.c) */
	double *abusy_s;        /* [i] the busy time of active[i] */
	int nactive;
	size_t active_cap;
	/* active[0..nread) were read at a step before, each with a usage
	 * > 0; a step reads one of them again only if its usage may have
	 * changed (engine_changed.h), or, where SimGrid cannot say which
	 * (the lazy update), all of them if the network changed since the
	 * last step that read them (the stamp it saw,
	 * engine_platform_net_stamp) */
	int nread;
	unsigned long long steps; /* steps of the clock so far */
	unsigned long seen[4];
	/* the steps of the clock since the oldest open mark
	 * (engine_links_mark): step[i] is step base + i */
	double *step;
	long long base;
	size_t nstep, step_cap;
	long long *open;        /* [nopen] the marks not yet closed */
	int nopen;
	size_t open_cap;
};

/* A program's pipeline messages numbered (engine_p2p_slots): each
 * send's and receive's slot, so a rank keeps their times in an array of
 * n, not of one per task. */
struct p2p_slots {
	const struct program *prog;
	int *slot;              /* [prog->n] the task's slot, -1 if no send or receive */
	int n;                  /* slots */
};

/* One run of engine_run(). */
struct sim {
	const struct engine_job *job;
	struct fold fold;       /* which ranks are simulated, plan cache, mirrors */
	struct engine_cls cls;  /* all-to-alls posted one flow per NIC (engine_classes.c) */
	struct link_traffic traffic; /* per-link bytes, busy time, peak (engine_links.c) */
	struct rank_inst *ri;   /* [nranks], NULL prog for folded ranks */
	struct group_bar **bars;/* [nranks * GROUP_N * STREAM_N], lazily made */
	struct stream_arg *args;/* [nargs] one per actor */
	int nargs;
	int **stream_tasks;     /* [pp * STREAM_N] task index lists */
	int *stream_ntasks;
	bool *recv_one;         /* [pp] both receive lanes on one actor (engine_recv.c) */
	int nactors, finished;
	long flows, collectives, tasks;
	long nprivate, replayed;/* private plans, collectives replayed (engine_replay.c) */
	bool failed;
	struct progress progress;
	sg_link_t *links;       /* the link sampler's list (freed after the run) */
	sg_host_t *host;        /* [nranks] hosts of the GPUs on the platform */
	int base;               /* the job's first rank among the jobs of one
				   fabric (engine_run_many; 0 alone): what keeps
				   its mailboxes apart from theirs */
	sg_comm_t *loose;       /* mirror pipeline transfers nobody waits for */
	size_t nloose, loose_cap;
	struct p2p_slots *slots;/* [nslots] one per program the ranks replay */
	int nslots;
	sg_host_t *ps_hosts;    /* [job->ps->servers] dedicated parameter servers */
	int *clock;             /* [nranks] iterations a rank's compute stream finished */
	int ps_nb;              /* most DP buckets of a stage's program */
	double *ps_upd;         /* async: [leader * ps_nb + bucket] updates applied */
	double *stale;          /* async: staleness of every update */
	size_t nstale, stale_cap;
};

/* A simulated rank (prog != NULL) or a folded one. */
struct rank_inst {
	int rank, stage;
	const struct program *prog;
	int *done;              /* [prog->n] times the task finished (one per
				 * replayed iteration) */
	double *done_at;        /* [prog->n] when it last finished */
	int waiting[STREAM_N];  /* task the stream is blocked on, or -1 */
	sg_sem_t wake[STREAM_N];/* one per stream, not per task: a stream waits
				 * for one dependency at a time */
	const int *p2p_slot;    /* [prog->n] a send's or receive's slot in
				 * p2p_s (engine_p2p_slots), -1 other tasks */
	double *p2p_s;          /* [slots] a receive's transfer start, a send's
				 * post time (the message's payload: nothing
				 * to free) */
	unsigned char *p2p_got; /* [slots] a send's message was received */
	struct engine_rank_stats *st;
	sg_sem_t rate;          /* interference: wakes the compute stream to re-rate */
	bool computing;         /* the compute stream sleeps on `rate` */
	int coll_active, coll_sms;
	double coll_hbm_Bps;    /* HBM bytes per second the collectives in flight move */
	struct engine_gpu_overlap ov; /* its GPU's interference figures (engine.h) */
	sg_host_t host;
	const int *grp[GROUP_N];/* this rank's groups (into fold.gmem), resolved once */
	int ngrp[GROUP_N];
	double compute_end;     /* when the compute stream finished */
	double comm_end;        /* when the last communication stream finished */
	int comm_end_cat;       /* what that stream carried last */
	int nsent[4], nrecv[4]; /* pipeline messages posted, per p2p_dir + 2 rev */
	int *mp2p[2];           /* folded: mirror (src, dst) pairs of a send, per dir */
	int nmp2p[2];
	int ps_bucket;          /* parameter-server rounds so far (round robin) */
	double speed;           /* compute-time factor (stragglers) */
	int ps_nb;              /* DP buckets per iteration of this rank's program */
	double *ps_seen;        /* async: [bucket] updates applied when it last pulled */
	sg_sem_t ssp;           /* async: wakes a rank held by the staleness bound */
	bool ssp_blocked;
};

/* Owned by struct sim (freed after the run, also when a deadlock killed
 * the actor), as are the actor's buffers. */
struct stream_arg {
	struct sim *sim;
	struct rank_inst *ri;
	enum stream s;
	sg_comm_t *comms;       /* engine_coll_task's pending transfers */
	size_t ncomms_cap;
	sg_comm_t *sends;       /* posted pipeline sends */
	int *send_slot;         /* on the compute stream: each send's slot (p2p_got) */
	int nwaited;            /* sends[0..nwaited) waited for */
	int inbox_held;         /* flows to its inbox since it was last cleared
				 * (engine_coll.c, inbox_drain) */
};

/* ---- engine.c: the adapter ---- */

/* Claim this process for one simulation: 0, or -1 (reported) if SimGrid
 * already ran in it. */
int engine_claim_process(struct diag *d);
/* Initialise SimGrid as a pure alpha-beta network and build the platform
 * of nodes nodes of t (used: the GPUs to hold, NULL all; x: servers and
 * degraded links, NULL none). full_update: the network model's full
 * update (order-independent, folding relies on it). Returns 0 or -1
 * (reported). */
int engine_start_simgrid(const struct topology *t, int nodes, const unsigned char *used,
			 const struct platform_extra *x, bool full_update, double *platform_s,
			 struct diag *d);

/* ---- engine_rank.c: below every task kind ---- */

/* Start an actor running fn(data) on h; a daemon ends with the run. */
void engine_start_actor(const char *name, sg_host_t h, xbt_main_func_t fn, void *data,
			bool daemon);
/* The host of GPU rank on the platform, NULL if it is not there. */
sg_host_t engine_host_of(int rank);
/* The barrier of the group instance (leader, kind) on stream, made on
 * first use for its simulated members. */
struct group_bar *engine_group_barrier(struct sim *S, int leader, int kind, int stream,
				       const int *members, int n);
/* A collective of sms CTAs starts (dir +1) or ends (-1) on ri: the
 * compute stream re-evaluates its rate. */
void engine_comm_busy(struct rank_inst *ri, int sms, double hbm_Bps, int dir);

/* Mailboxes of messages: a collective's flow (channel: the stream), a
 * pipeline message (channel: the direction), or a simulated rank's inbox
 * (channel: the stream of the actor that receives; source 0:
 * engine_inbox). */
enum engine_mbox { MBOX_COLL, MBOX_P2P, MBOX_INBOX };
/* The mailbox of kind on channel chan from src to dst, made on first use
 * (ranks below 2^29, channels below 16). */
sg_mailbox_t engine_mailbox(enum engine_mbox kind, int chan, int src, int dst);

/* ---- engine_stream.c ---- */

/* An actor's main: the tasks of one stream of one rank (stream_arg),
 * on the compute stream with those of the streams merged into it. */
void engine_stream_main(int argc, char **argv);

/* Task ti of ri ended now: count it, wake the stream waiting for it. */
void engine_task_done(struct sim *S, struct rank_inst *ri, int ti);

/* Before the actors start: merge into each stage's compute stream the
 * streams whose tasks it would wait through one by one (collectives
 * chained between compute tasks, as tensor-parallel ones are), and the
 * pipeline sends each posted right after its compute-list task (Megatron's
 * non-blocking sends), to run on its actor with the same instants and
 * charges; a merged stream gets no actor of its own. */
void engine_stream_merge(struct sim *S);

/* ---- engine_recv.c ---- */

/* Before the actors start, after engine_stream_merge: the stages whose
 * ranks receive from both neighbours, receives that wait for no task,
 * run both lanes on one actor (S->recv_one; not with repeated iterations
 * or simulation.separate_streams). */
void engine_recv_merge(struct sim *S);
/* That actor's main: RECV_PREV's and RECV_NEXT's tasks of a's rank. */
void engine_recv_main(int argc, char **argv);

/* ---- engine_coll.c ---- */

/* Run collective task t on a's rank: barrier, flows, barrier, latency.
 * Sets S->failed if no plan. */
void engine_coll_task(struct sim *S, struct stream_arg *a, const struct task *t);
/* The HBM bytes per second a rank's kernels of collective p move while
 * it runs (engine_comm_busy's hbm_Bps). */
double engine_coll_hbm_Bps(const struct coll_plan *p);
/* The mailbox of a collective flow src -> dst on stream. */
sg_mailbox_t engine_coll_mailbox(int stream, int src, int dst);
/* Cheap folding: a daemon sink for every mailbox a simulated rank sends
 * collective flows on to a folded rank. Returns 0 or -1 (no plan). */
int engine_make_sinks(struct sim *S);
/* The inbox of rank's actor that runs stream's collectives: a flow put
 * there from the source rank's actor starts at once (engine_coll.c says
 * why); engine_stream_main makes the actor its receiver. */
sg_mailbox_t engine_inbox(const struct sim *S, int rank, int stream);
/* flows_in more ended flows in a's inbox: clear it once enough gathered. */
void engine_inbox_drain(struct stream_arg *a, int flows_in);
/* At the end of a's actor: take the ended flows out of its inbox. */
void engine_inbox_finish(struct stream_arg *a);
/* The ended flows an inbox gathers before its actor clears them (one
 * simcall: engine_coll.c, inbox_drain). */
#define ENGINE_INBOX_CLEAR_FLOWS 64

/* ---- engine_replay.c: private collectives replayed ---- */

/* Before the replay, after the ranks are made: mark the plans whose flows
 * cross only links no other flow of the run can use (cplan.priv); none if
 * a plan cannot be made (the replay says). */
void engine_replay_init(struct sim *S);
/* Whether private plan c's collectives are replayed: its first instance,
 * which posts every flow, has ended. */
bool engine_replay_ready(const struct cplan *c);
/* A member of group mem[n] (barrier gb) reaching a collective of private
 * plan c (latency lat) that engine_replay_ready() says is replayed, in
 * place of both meetings (engine_coll.c): it counts its own payload, and
 * the last to arrive posts the replay's flows, sleeps the latency and
 * holds the members' SMs for them; every member returns at the instant
 * the posted collective would end. */
void engine_replay_coll(struct sim *S, struct stream_arg *a, const struct task *t, struct cplan *c,
			struct group_bar *gb, const int *mem, int n, double lat);
/* After the replay: the replayed instances' flows' bytes on their routes
 * (engine_links.c), as each member would have counted them. */
void engine_replay_flush(struct sim *S);
/* A member posting private plan c's flows: the first instance's record
 * (the first caller starts it), or NULL. */
struct cplan_replay *engine_replay_begin(struct cplan *c);
/* The last member whose flows ended: close rec (NULL: none). */
void engine_replay_end(struct cplan_replay *rec);

/* ---- engine_p2p.c ---- */

/* Post the pipeline send task ti (t) of a's rank into sends[*nsends]. */
void engine_p2p_send(struct sim *S, struct stream_arg *a, int ti, const struct task *t,
		     double start, int *nsends, int *peer);
/* The slots of pr's pipeline messages, numbered on first use and kept
 * in S (one table per program, whatever ranks replay it). */
const struct p2p_slots *engine_p2p_slots(struct sim *S, const struct program *pr);
/* Receive pipeline message task ti (t) of a's rank. */
void engine_p2p_recv(struct sim *S, struct stream_arg *a, int ti, const struct task *t,
		     double start, int *peer);

/* The receive of engine_p2p_recv() in three steps, for an actor that
 * waits for several (engine_recv.c): post task t's get (the transfer,
 * an sg_comm_t; the sender's post time lands in *post when it ends);
 * once it ended, the route latency to wait (0: none); once waited,
 * account receive ti, posted at start. */
void *engine_p2p_recv_post(struct sim *S, struct stream_arg *a, const struct task *t, int *peer,
			   void **post);
double engine_p2p_recv_arrived(struct sim *S, const struct stream_arg *a, int peer, const void *post);
void engine_p2p_recv_done(struct stream_arg *a, int ti, const struct task *t, double start,
			  const void *post);

/* ---- engine_ps.c ---- */

/* A DP all-reduce through the parameter servers (engine.h). */
void engine_ps_task(struct sim *S, struct stream_arg *a, const struct task *t);
/* Before iteration it of ri's compute stream: the staleness bound. */
void engine_ssp_wait(struct sim *S, struct rank_inst *ri, int it);
/* ri's compute stream finished an iteration. */
void engine_ssp_tick(struct sim *S, struct rank_inst *ri);
/* The staleness of the asynchronous updates into out. */
void engine_ps_summary(struct sim *S, struct engine_result *out);

/* ---- engine_alloc.cpp ---- */

/* Back the heap with transparent huge pages from now on (the process's
 * allocator): once per process, before SimGrid starts. */
void engine_alloc_huge_pages(void);

/* ---- engine_observer.c ---- */

/* Wall-clock seconds (monotonic). */
double engine_wall_s(void);
/* Start reporting progress if asked (engine_set_progress). */
void engine_progress_start(struct sim *S);
/* Called every ENGINE_PROGRESS_TASKS tasks and at the end: report done. */
void engine_progress_tick(struct progress *pg, long done);
/* The link sampler daemon's main (engine_observer.link_sample). */
void engine_sampler_main(int argc, char **argv);

/* ---- engine_links.c: per-link traffic ---- */

/* Start charging the clock's steps to S's links (after the platform is
 * built, before the replay). */
void engine_links_init(struct sim *S);
/* A flow of bytes from host src to host dst (either NULL or both the
 * same: nothing to count) was posted by a task of category cat: count
 * them on every link of its route. Every flow the engine posts calls it
 * once (a class flow: once per pair it stands for, engine_classes.c). */
void engine_links_count(struct sim *S, sg_host_t src, sg_host_t dst, double bytes, int cat);
/* A flow from src to dst counted earlier starts now (a mailbox transfer
 * its receiver matched later): its links' usage is read again. */
void engine_links_touch(struct sim *S, sg_host_t src, sg_host_t dst);
/* A flow replayed, not posted (engine_replay.c): its bytes on its route,
 * as engine_links_count, no link read. */
void engine_links_bytes(struct sim *S, sg_host_t src, sg_host_t dst, double bytes, int cat);
/* A replayed collective starts now: its mark, from which the clock's
 * steps are kept until engine_links_add_steps() closes it. */
long long engine_links_mark(struct sim *S);
/* Add every step since mark, one by one, to the busy time of links
 * ids[0..n) (as a flow on them from the mark until now would have),
 * and close the mark. */
void engine_links_add_steps(struct sim *S, long long mark, const int *ids, int n);
/* The links with bytes into out->links, most bytes first, divided by the
 * iterations replayed (the peak is not); the clock is no longer charged. */
void engine_links_collect(struct sim *S, struct engine_result *out, double iterations);
void engine_links_finish(struct sim *S);

/* ---- engine_classes.c: all-to-alls as one flow per NIC while alone ---- */

/* Set up and free S->cls for S's job (engine_classes.c says when it is on). */
void engine_cls_init(struct sim *S);
void engine_cls_finish(struct sim *S);
/* Every simulated member of a collective of plan c on group mem (barrier
 * gb) calls this between the two meetings, before posting: the class
 * plan it posts its flows from (*cls, and a reference to the holder it
 * returns) where the collective is a multi-node all-to-all whose class
 * plan exists and whose NICs are all idle now; else NULL (*cls NULL:
 * post the plan's pairs), the reason noted. */
struct cls_inst *engine_cls_join(struct sim *S, struct group_bar *gb, struct cplan *c,
				 const int *mem, int n, const struct coll_plan **cls);
/* Post flow f of the class plan for owner (a member of ci), a task of
 * category cat: a pair's flow inside a node as it is, a class flow
 * carrying the bytes of its pairs. Returns the transfer, for
 * engine_cls_wait(). */
void *engine_cls_post(struct sim *S, struct cls_inst *ci, int owner, const struct coll_flow *f,
		      int cat);
/* A flow from GPU a to GPU b (either -1: a server's host) starts now:
 * splits the class plans holding a NIC it crosses into their pairs.
 * Every flow the engine posts outside engine_cls_post() calls it first. */
void engine_cls_touch(struct sim *S, int a, int b);
/* Folded exactly: owner (the posting member) posts every flow of plan p
 * (a group's or a mirror group's) as p's class plan (*cls) into
 * comms[*nc...] (room for p->nflows) and returns its holder, where p is
 * a multi-node all-to-all whose class plan exists and whose NICs are
 * all idle now; else NULL (*cls NULL: post p's pairs), the reason noted. */
struct cls_inst *engine_cls_post_plan(struct sim *S, const struct coll_plan *p, int owner,
				      sg_comm_t *comms, int *nc, const struct coll_plan **cls, int cat);
/* owner waits for its transfers comms[0..nc) (released here) and, for
 * each holder cis[0..ncis) split meanwhile, for its pairs; then drops its
 * references to them. */
void engine_cls_wait(struct sim *S, struct cls_inst **cis, int ncis, int owner, sg_comm_t *comms,
		     int nc);

#endif
