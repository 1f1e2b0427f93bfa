/* nsys_host: how the host issued the kernels of an Nsight Systems export.
 *
 * A kernel's launch is the CUPTI_ACTIVITY_KIND_RUNTIME row with its
 * correlationId in its process (nsys.h); a thread issuing kernels back to
 * back leaves between one launch's start and the next's the time it
 * takes to issue one kernel (the framework's op dispatch, the launch
 * call), which is what a scenario's compute.host_issue_fwd_us (the main
 * thread) and host_issue_bwd_us (autograd's thread, "pt_autograd_N"
 * where PyTorch names it) mean (models/host.h). Gaps where the host
 * waits (a synchronization, the data loader) lengthen some; the median
 * of a thread's gaps is printed, as an upper bound on its issue time,
 * and nothing is written to the profile (schema ddlsim.profile 1.1 holds
 * kernels only). */
#include "nsys-private.h"
#include "xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct thread {
	long long gtid;
	double *gap_us;
	int n, c;               /* gaps (launches - 1) */
	long long last_ns;
};

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int tcmp(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;   /* most launches first, then by id */
	return x->n != y->n ? y->n - x->n : (x->gtid > y->gtid) - (x->gtid < y->gtid);
}

static void thread_name(sqlite3 *db, long long gtid, char *out, size_t n)
{
	sqlite3_stmt *st = NULL;
	snprintf(out, n, "?");
	if (sqlite3_prepare_v2(db, "SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
			       "WHERE t.globalTid = ? LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, gtid);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
}

/* Each launching thread's gaps, sorted by the number of launches. */
static struct thread *read_threads(sqlite3 *db, int *nt)
{
	sqlite3_stmt *st = NULL;
	struct thread *t = NULL;
	int ct = 0;
	*nt = 0;
	if (sqlite3_prepare_v2(db, "SELECT r.globalTid, MIN(r.start) AS s FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
			       "JOIN (SELECT DISTINCT correlationId, (globalPid >> 24) & 16777215 AS pid FROM "
			       "CUPTI_ACTIVITY_KIND_KERNEL) k ON k.correlationId = r.correlationId AND "
			       "k.pid = (r.globalTid >> 24) & 16777215 GROUP BY r.globalTid, r.correlationId "
			       "ORDER BY r.globalTid, s", -1, &st, NULL) != SQLITE_OK)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		long long g = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1);
		if (*nt == 0 || t[*nt - 1].gtid != g) {
			XGROW(t, ct, *nt + 1);
			t[(*nt)++] = (struct thread){ .gtid = g, .last_ns = s };
			continue;
		}
		struct thread *h = &t[*nt - 1];
		XGROW(h->gap_us, h->c, h->n + 1);
		h->gap_us[h->n++] = (double)(s - h->last_ns) * 1e-3;
		h->last_ns = s;
	}
	sqlite3_finalize(st);
	if (*nt > 1)
		qsort(t, (size_t)*nt, sizeof(*t), tcmp);
	return t;
}

void nsys_host_summary(sqlite3 *db, const char *path, FILE *f)
{
	int nt = 0;
	struct thread *t = read_threads(db, &nt);
	bool any = nt > 0 && t[0].n > 0;        /* a gap: the busiest thread launched twice */
	if (any)
		fprintf(f, "host issue (%s, CUPTI_ACTIVITY_KIND_RUNTIME): median gap between one kernel "
			"launch's start and the next's, the busiest threads:\n", path);
	for (int i = 0; i < nt && i < 3; i++) {
		char name[128];
		if (t[i].n < 1)
			continue;
		qsort(t[i].gap_us, (size_t)t[i].n, sizeof(double), dcmp);
		double med = t[i].n % 2 ? t[i].gap_us[t[i].n / 2]
					: 0.5 * (t[i].gap_us[t[i].n / 2 - 1] + t[i].gap_us[t[i].n / 2]);
		thread_name(db, t[i].gtid, name, sizeof(name));
		fprintf(f, "  thread %lld (%s): %d launches, median %.2f us apart\n", t[i].gtid & 0xFFFFFF,
			name, t[i].n + 1, med);
	}
	if (any)
		fprintf(f, "  (an upper bound on the issue time per kernel where the thread issues back to "
			"back: compute.host_issue_fwd_us for the main thread, host_issue_bwd_us for autograd's)\n");
	for (int i = 0; i < nt; i++)
		free(t[i].gap_us);
	free(t);
}
