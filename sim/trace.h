/* trace: the replay of one iteration as a Chrome trace-event file
 * (JSON object format), which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open; gzip-compressed when the file's name ends in
 * ".gz" (both read it as it is).
 *
 *   process   one per recorded rank (pid = rank), named "rank R (stage
 *             S)"; its label says which ranks it stands for
 *   thread    one per stream (tid = enum stream): compute, tp, dp, param,
 *             send, recv_prev, recv_next, cp
 *   slice     one complete event ("X") per task; ts and dur in
 *             microseconds of simulated time with exactly three decimals,
 *             from times rounded once to the nanosecond, so the slices of
 *             a track never overlap (a task of no duration: dur 0.000);
 *             args: micro-batch and chunk (where the task has them),
 *             FLOPs (compute), bytes and merged calls (collectives),
 *             bytes and peer rank (sends, receives). Compute tasks carry
 *             no layer or kernel name: a program's task is a whole block
 *             pass (program.h), not one kernel
 *   flow      an arrow from each pipeline send to its receive (the k-th
 *             send from rank a in one direction is the k-th receive of
 *             its peer in that direction: mailboxes are FIFO), where both
 *             ranks are recorded
 *   counter   "memory in use (GB)" per rank: the stage's anatomy without
 *             activations, plus the activations of the (micro-batch,
 *             chunk) pairs alive (first forward task started, last
 *             backward task not ended), each 1 / peak of the anatomy's
 *             activations, so the counter peaks at the anatomy's total
 *   links     a process "busiest links": one counter per link, its usage
 *             in percent of its bandwidth, sampled every period (the
 *             engine's link sampler, engine.h); changes only are written;
 *             the 8 links that carried the most bytes. Sampling is
 *             instantaneous usage, so a flow shorter than the period can
 *             be missed: a finer --trace-link-period sees it (at least
 *             1 us; the period doubles after every 4096 samples, so the
 *             samples grow with the log of the run's length, never
 *             without bound: engine_observer.c).
 *
 * Ranks recorded (--trace-ranks): by default one per class of alike
 * ranks (engine_rank_stats.class_rank, fold_classes(): a folded run's
 * simulated ranks, an unfolded run's first rank of each stage and GPU
 * type, every rank of a replica holding a straggler, a throttled GPU or a
 * degraded link's GPU), labelled with the ranks of its class; "all":
 * every simulated rank, labelled with the folded ranks it stands for; a
 * list of ranges ("0-7,64"): those of them that are simulated.
 *
 * Events are written to the file as the engine reports them (nothing is
 * held but the memory steps and link samples) through a checked
 * streaming writer (util/outfile.h: every write's result kept, the first
 * failure reported with the file's path), into a temporary file that
 * trace_finish() stages and the caller publishes with the reports
 * (util/atomic_file.h): a failed run, a failed write, or a run whose
 * reports fail, leaves no trace. */
#ifndef DDLSIM_TRACE_H
#define DDLSIM_TRACE_H

#include "atomic_file.h"
#include "diag.h"
#include "engine.h"
#include "result.h"

struct trace;

/* Start a trace to path (gzip if it ends in ".gz") recording the ranks
 * in ranks (NULL: one per class; "all": every simulated rank; "0-7,64":
 * those), and every link_period_s of simulated time (0: not at all) the
 * usage of every link, of which the busiest TRACE_BUSIEST_LINKS (8, by
 * bytes carried) become counters. Returns NULL after reporting (a bad
 * selection, the file cannot be created). */
struct trace *trace_create(const char *path, const char *ranks, double link_period_s, struct diag *d);
/* Check a rank selection as trace_create() reads it and, with nranks > 0,
 * against the job's nranks ranks: a rank beyond them is an error naming
 * the option, the selection and the ranks (it would trace nothing).
 * Returns 0, or -1 after reporting. */
int trace_ranks_check(const char *ranks, long nranks, struct diag *d);
/* The observer to pass to simulate_run_observed() (borrowed from tr). */
const struct engine_observer *trace_observer(struct trace *tr);
/* Write the process names, labels and counters of the simulated result r
 * and stage the file into *out, for the caller to publish with its other
 * outputs (atomic_file_publish) or drop (atomic_file_abort). Frees tr.
 * Returns 0, or -1 after reporting "PATH: error: cannot write the trace:
 * WHY" for the first write that failed (*out zeroed, no file left
 * behind). */
int trace_finish(struct trace *tr, const struct result *r, struct atomic_file *out, struct diag *d);
/* Drop the trace (no file left behind); NULL is a no-op. */
void trace_destroy(struct trace *tr);
/* Events written so far (slices, flows). */
long trace_events(const struct trace *tr);

#endif
