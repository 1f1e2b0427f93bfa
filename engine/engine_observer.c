/* engine_observer: what the engine tells while it runs, apart from its
 * result: how many tasks it has replayed (engine_set_progress: the
 * caller draws a progress line from it, cli/progress.c), and the link
 * sampler that feeds an engine_observer's link_sample (the trace export,
 * trace.h) every period. */
#include "engine-private.h"

#include <time.h>

#include "engine_platform.h"

static struct engine_progress g_progress;      /* engine_set_progress() */

void engine_set_progress(const struct engine_progress *p)
{
	g_progress = p ? *p : (struct engine_progress){ 0 };
}

double engine_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void engine_progress_tick(struct progress *pg, long done)
{
	atomic_store_explicit(g_progress.tasks, pg->base + done, memory_order_relaxed);
	if (g_progress.tick)
		g_progress.tick(g_progress.ctx);
}

void engine_progress_start(struct sim *S)
{
	if (!g_progress.tasks)
		return;
	S->progress = (struct progress){
		.on = true, .base = atomic_load_explicit(g_progress.tasks, memory_order_relaxed) };
}

/* The link sampler (engine_observer.link_sample): a daemon that reads every
 * link's usage each period. It gives up once no task has ended for
 * SAMPLER_IDLE_S of simulated time, so a deadlocked replay still ends
 * (the daemon alone would keep the clock running). */
#define SAMPLER_IDLE_S 100.0
/* The period doubles after every SAMPLER_DOUBLE_AFTER samples: however
 * fine the period asked for, a run of length T takes at most about
 * SAMPLER_DOUBLE_AFTER x log2(T / period) samples per link, so the work is
 * bounded by the run's length. */
#define SAMPLER_DOUBLE_AFTER 4096
void engine_sampler_main(int argc, char **argv)
{
	struct sim *S = sg_actor_self_get_data();
	const struct engine_observer *obs = S->job->obs;
	size_t n = sg_link_count();
	sg_link_t *l = sg_link_list();
	long last_tasks = -1;
	double last_progress = 0, period = obs->link_sample_s;
	(void)argc, (void)argv;
	S->links = l;
	for (long k = 1;; k++) {
		sg_actor_sleep_for(period);
		if (k % SAMPLER_DOUBLE_AFTER == 0)
			period *= 2;
		double now = simgrid_get_clock();
		if (S->tasks != last_tasks) {
			last_tasks = S->tasks;
			last_progress = now;
		} else if (now - last_progress > SAMPLER_IDLE_S)
			return;
		for (size_t i = 0; i < n; i++)
			obs->link_sample(obs->ctx, (int)i, sg_link_get_name(l[i]), now,
					 engine_platform_link_usage(l[i]), sg_link_get_bandwidth(l[i]));
	}
}
