/* runner: fork a child per simulation, collect fixed-size rows (see runner.h).
 *
 * The parent polls the children's pipes; each child writes exactly one
 * struct result_row (a few KB: a pipe write of up to PIPE_BUF is atomic,
 * larger ones are read in a loop until the row is whole or the pipe
 * closes). When a pipe closes, waitpid() says how the child ended, and a
 * short row becomes an error row naming the signal, the exit status, the
 * time limit or the memory limit. */
#include "runner.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bug.h"
#include "cleanup.h"
#include "engine.h"
#include "xalloc.h"

struct slot {
	pid_t pid;                  /* 0 = free */
	int fd;
	int index;
	double deadline_s;          /* 0 = none */
	bool timed_out;
	size_t got;
	struct result_row row;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(120);
		p += w;
		n -= (size_t)w;
	}
}

atomic_long *runner_board_create(int n)
{
	size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(atomic_long);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "ddlsim: out of memory (a progress board of %d counters: %s)\n", n,
			strerror(errno));
		exit(1);
	}
	atomic_long *b = m;
	for (int i = 0; i < n; i++)
		atomic_init(&b[i], 0);
	return b;
}

void runner_board_destroy(atomic_long *board, int n)
{
	if (board)
		munmap(board, (size_t)(n > 0 ? n : 1) * sizeof(atomic_long));
}

static void child(const struct runner_opts *o, int fd, int i, runner_job_fn job, void *ctx,
		  atomic_long *board)
{
	struct result_row row;

	if (board)      /* this job's engine runs count into its slot */
		engine_set_progress(&(struct engine_progress){ .tasks = &board[i] });

	if (o->mem_limit_bytes > 0) {
		struct rlimit rl = { (rlim_t)o->mem_limit_bytes, (rlim_t)o->mem_limit_bytes };
		setrlimit(RLIMIT_AS, &rl);
	}
	memset(&row, 0, sizeof(row));
	row.index = i;
	row.status = RESULT_FAILED;
	snprintf(row.reason, sizeof(row.reason), "the job set no result");
	job(ctx, i, &row);
	row.index = i;
	write_all(fd, &row, sizeof(row));
	fflush(NULL);
	_exit(0);
}

/* The error row of a child that ended without a whole row. */
static void lost_row(const struct runner_opts *o, struct slot *s, int wstatus)
{
	struct result_row *r = &s->row;
	memset(r, 0, sizeof(*r));
	r->index = s->index;
	if (s->timed_out) {
		r->status = RESULT_TIMEOUT;
		snprintf(r->reason, sizeof(r->reason), "killed after the time limit of %g s", o->timeout_s);
	} else if (WIFSIGNALED(wstatus)) {
		r->status = RESULT_CRASHED;
		snprintf(r->reason, sizeof(r->reason), "the simulation crashed: signal %d (%s)",
			 WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
	} else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 1 && o->mem_limit_bytes > 0) {
		r->status = RESULT_FAILED;
		snprintf(r->reason, sizeof(r->reason), "the simulation failed (exit status 1), most likely "
			 "out of memory under the limit of %.3g GB", o->mem_limit_bytes / 1e9);
	} else {
		r->status = RESULT_FAILED;
		snprintf(r->reason, sizeof(r->reason), "the simulation ended without a result (exit status %d)",
			 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
	}
}

/* Start job i in slot s. Returns 0, 1 when *o->stop was set (nothing
 * started), or -1 after reporting. */
static int start(const struct runner_opts *o, struct slot *s, int i, runner_job_fn job, void *ctx,
		 atomic_long *board, struct diag *d)
{
	int fds[2];
	if (pipe(fds))
		return diag_errf(d, "runner: cannot create a pipe: %s", strerror(errno));
	fflush(NULL);
	/* SIGINT and SIGTERM wait until the child is registered: a stop
	 * (cleanup_defer) then either comes before it and starts nothing,
	 * or after and kills it; never a child started and left running */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (o->stop && *o->stop) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(fds[0]);
		close(fds[1]);
		return 1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(fds[0]);
		close(fds[1]);
		return diag_errf(d, "runner: cannot fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* dies with the parent: a runner killed outright (kill -9, a
		 * test framework's time-out) leaves no child behind computing
		 * and holding its parent's stdout open */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(121);
		close(fds[0]);
		cleanup_reset_in_child();
		sigprocmask(SIG_SETMASK, &old, NULL);
		child(o, fds[1], i, job, ctx, board);
	}
	cleanup_remember_child(pid);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->fd = fds[0];
	s->index = i;
	s->deadline_s = o->timeout_s > 0 ? now_s() + o->timeout_s : 0;
	return 0;
}

/* The pipe of s is readable or closed: read; at EOF reap the child and
 * deliver its row. Returns true when the slot was freed. */
static bool drain(const struct runner_opts *o, struct slot *s, runner_done_fn done, void *ctx)
{
	char *buf = (char *)&s->row;
	ssize_t r = read(s->fd, buf + s->got, sizeof(s->row) - s->got);
	if (r < 0 && errno == EINTR)
		return false;
	if (r > 0) {
		s->got += (size_t)r;
		return false;
	}
	int wstatus = 0;
	close(s->fd);
	while (waitpid(s->pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	cleanup_forget_child(s->pid);
	if (s->got != sizeof(s->row) || s->timed_out)
		lost_row(o, s, wstatus);
	BUG_ON(s->row.index != s->index, "child for job %d sent the row of job %d", s->index, s->row.index);
	done(ctx, s->index, &s->row);
	s->pid = 0;
	return true;
}

/* The pollfds of the running children into pfd (their slots in map);
 * returns their count, *wait_s the time to the nearest deadline (-1:
 * none). */
static int poll_set(struct slot *slots, int jobs, struct pollfd *pfd, int *map, double t,
		    double *wait_s)
{
	int np = 0;
	*wait_s = -1;
	for (int k = 0; k < jobs; k++) {
		if (!slots[k].pid)
			continue;
		pfd[np] = (struct pollfd){ .fd = slots[k].fd, .events = POLLIN };
		map[np++] = k;
		if (slots[k].deadline_s > 0 && !slots[k].timed_out) {
			double left = slots[k].deadline_s - t;
			if (left < 0)
				left = 0;
			if (*wait_s < 0 || left < *wait_s)
				*wait_s = left;
		}
	}
	return np;
}

/* The jobs' progress (runner_opts.tick): the board the children count
 * into, and when the caller hears of it next. */
struct ticker {
	atomic_long *board;     /* NULL: no progress */
	long *tasks;            /* [n] the board read */
	int n;
	double next_s;
};

static void ticker_init(struct ticker *tk, const struct runner_opts *o, int n)
{
	*tk = (struct ticker){ .n = n, .next_s = now_s() + RUNNER_TICK_S };
	if (o->tick) {
		tk->board = runner_board_create(n);
		tk->tasks = xcalloc((size_t)n + 1, sizeof(*tk->tasks));
	}
}

/* *wait_s no longer than the time to the next tick at t. */
static void ticker_wait(const struct ticker *tk, double t, double *wait_s)
{
	double left = tk->next_s - t > 0 ? tk->next_s - t : 0;
	if (tk->board && (*wait_s < 0 || left < *wait_s))
		*wait_s = left;
}

/* At t, tell the caller the tasks each job has replayed, when due. */
static void ticker_tick(struct ticker *tk, const struct runner_opts *o, void *ctx, double t)
{
	if (!tk->board || t < tk->next_s)
		return;
	for (int i = 0; i < tk->n; i++)
		tk->tasks[i] = atomic_load_explicit(&tk->board[i], memory_order_relaxed);
	o->tick(ctx, tk->tasks);
	tk->next_s = t + RUNNER_TICK_S;
}

static void ticker_finish(struct ticker *tk)
{
	free(tk->tasks);
	runner_board_destroy(tk->board, tk->n);
}

/* Starts the next jobs in the free slots (*next and *running count them; a
 * stop leaves the rest unstarted); -1 on a runner error. */
static int fill_slots(const struct runner_opts *o, struct slot *slots, int jobs, int n, int *next,
		      int *running, runner_job_fn job, void *ctx, atomic_long *board, struct diag *d)
{
	for (int k = 0; k < jobs && *next < n; k++)
		if (!slots[k].pid) {
			int st = start(o, &slots[k], *next, job, ctx, board, d);
			if (st > 0)
				*next = n;       /* stopped: the running ones drain below */
			else if (st < 0)
				return -1;
			else {
				(*next)++;
				(*running)++;
			}
		}
	return 0;
}

/* At t, kills the children past their deadline and, when poll said some are
 * (ready), drains the readable pipes; returns how many slots it freed. */
static int serve_slots(const struct runner_opts *o, struct slot *slots, const struct pollfd *pfd,
		       const int *map, int np, bool ready, double t, runner_done_fn done, void *ctx,
		       struct ticker *tk)
{
	int freed = 0;
	for (int j = 0; j < np; j++) {
		struct slot *s = &slots[map[j]];
		if (s->deadline_s > 0 && t >= s->deadline_s && !s->timed_out) {
			s->timed_out = true;
			kill(s->pid, SIGKILL);  /* its pipe closes: drained below */
		}
		if (ready && (pfd[j].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    drain(o, s, done, ctx)) {
			freed++;
			tk->next_s = t;  /* say at once that it ended */
		}
	}
	return freed;
}

int runner_run(const struct runner_opts *o, int n, runner_job_fn job, runner_done_fn done,
	       void *ctx, struct diag *d)
{
	int jobs = o->jobs < 1 ? 1 : o->jobs;
	if (jobs > n)
		jobs = n;
	struct slot *slots = xcalloc((size_t)(jobs ? jobs : 1), sizeof(*slots));
	struct pollfd *pfd = xcalloc((size_t)(jobs ? jobs : 1), sizeof(*pfd));
	int *map = xcalloc((size_t)(jobs ? jobs : 1), sizeof(*map));
	int next = 0, running = 0, rc = 0;
	struct ticker tk;
	ticker_init(&tk, o, n);

	while (next < n || running > 0) {
		if (rc == 0)
			rc = fill_slots(o, slots, jobs, n, &next, &running, job, ctx, tk.board, d);
		if (running == 0)
			break;
		double wait_s, t = now_s();
		int np = poll_set(slots, jobs, pfd, map, t, &wait_s);
		ticker_wait(&tk, t, &wait_s);
		int pr = poll(pfd, (nfds_t)np, wait_s < 0 ? -1 : (int)(wait_s * 1000) + 1);
		if (pr < 0 && errno != EINTR) {
			rc = diag_errf(d, "runner: poll failed: %s", strerror(errno));
			break;
		}
		t = now_s();
		running -= serve_slots(o, slots, pfd, map, np, pr > 0, t, done, ctx, &tk);
		ticker_tick(&tk, o, ctx, t);
	}
	/* after a runner error: reap what still runs, delivering its rows */
	for (int k = 0; k < jobs; k++)
		while (slots[k].pid)
			drain(o, &slots[k], done, ctx);
	ticker_finish(&tk);
	free(map);
	free(pfd);
	free(slots);
	return rc;
}
