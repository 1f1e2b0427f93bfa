/* report: the report files of one simulation (see report.h): every format
 * asked for rendered in memory first (report_json.c, report_csv.c, plot.c,
 * html.c), then written atomically under a lock on the directory. */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "html.h"
#include "plot.h"
#include "xalloc.h"

int report_mkdirs(const char *dir)
{
	char *buf = xstrdup(dir);
	int rc = 0;
	for (char *p = buf + 1; *p && !rc; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			rc = -1;
		*p = '/';
	}
	if (!rc && mkdir(buf, 0777) && errno != EEXIST)
		rc = -1;
	free(buf);
	return rc;
}

int report_write_atomic(const char *path, const char *data, size_t len, struct diag *d)
{
	int rc = atomic_file_write(path, data, len);
	if (rc)
		return diag_err(d, path, "", "cannot write report: %s", atomic_file_strerror(-rc));
	return 0;
}

const char *const report_format_names[5] = { "json", "csv", "svg", "html", "kineto" };

enum { OUT_JSON, OUT_CSV, OUT_BREAKDOWN, OUT_SCHEDULE, OUT_MEMORY, OUT_HTML, OUT_KINETO, OUT_N };
static const char *const out_files[OUT_N] = {
	"report.json", "report.csv", "breakdown.svg", "schedule.svg", "memory.svg", "report.html",
	"kineto.pt.trace.json"
};

int report_paths(const char *dir, unsigned formats, char *names[7])
{
	static const unsigned need[OUT_N] = { REPORT_JSON, REPORT_CSV, REPORT_SVG, REPORT_SVG, REPORT_SVG,
					      REPORT_HTML, REPORT_KINETO };
	int n = 0;
	for (int i = 0; i < OUT_N; i++)
		if (formats & need[i])
			names[n++] = xasprintf("%s/%s", dir, out_files[i]);
	return n;
}

/* Render every format asked for into text[] (len[] for the CSV, which
 * may hold no NUL). Returns 0 or -1 after reporting. */
static int render(const struct result *r, unsigned formats, char *text[OUT_N], size_t len[OUT_N],
		  struct diag *d)
{
	if (formats & REPORT_JSON) {
		const char *bad = NULL;
		json_t *j = report_to_json(r, formats & REPORT_PER_RANK, &bad);
		if (!j)
			return diag_errf(d, "cannot serialise the report's '%s' section: a value is not "
				   "finite or a string is not valid UTF-8; no report written", bad);
		char *t = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		json_decref(j);
		if (!t)
			return diag_errf(d, "cannot render the JSON report");
		text[OUT_JSON] = xasprintf("%s\n", t);
		free(t);
	}
	if (formats & REPORT_CSV) {
		FILE *m = open_memstream(&text[OUT_CSV], &len[OUT_CSV]);
		if (!m || report_write_csv_stream(r, m, true)) {
			if (m)
				fclose(m);
			return diag_errf(d, "cannot render the CSV report");
		}
		fclose(m);
	}
	if (formats & REPORT_SVG) {
		text[OUT_BREAKDOWN] = plot_breakdown_svg(r);
		text[OUT_SCHEDULE] = plot_gantt_svg(r);
		text[OUT_MEMORY] = plot_memory_svg(r);
		if (!text[OUT_BREAKDOWN] || !text[OUT_SCHEDULE] || !text[OUT_MEMORY])
			return diag_errf(d, "cannot render the SVG plots");
	}
	if ((formats & REPORT_HTML) && !(text[OUT_HTML] = html_render(r)))
		return diag_errf(d, "cannot render the HTML report");
	if ((formats & REPORT_KINETO) && !(text[OUT_KINETO] = report_kineto_render(r)))
		return diag_errf(d, "cannot render the Kineto trace of the per-kernel table");
	return 0;
}

/* Stage text[i] into af[i] (util/atomic_file.h). Returns 0 or -1 after
 * reporting. */
static int stage(const char *dir, char *text[OUT_N], const size_t len[OUT_N],
		 struct atomic_file af[OUT_N], struct diag *d)
{
	for (int i = 0; i < OUT_N; i++) {
		if (!text[i])
			continue;
		char *path = xasprintf("%s/%s", dir, out_files[i]);
		size_t n = i == OUT_CSV ? len[i] : strlen(text[i]);
		int e = atomic_file_open(&af[i], path);
		if (!e && n && fwrite(text[i], 1, n, af[i].f) != n)
			e = -(errno ? errno : EIO);
		if (!e)
			e = atomic_file_stage(&af[i]);
		if (e)
			diag_err(d, path, "", "cannot write report: %s", atomic_file_strerror(-e));
		free(path);
		if (e)
			return -1;
	}
	return 0;
}

int report_write(const struct result *r, const char *dir, unsigned formats, struct atomic_file *also,
		 struct diag *d)
{
	char *text[OUT_N] = { 0 };
	size_t len[OUT_N] = { 0 };
	struct atomic_file af[OUT_N + 1] = { 0 };
	int rc = -1, lock_fd = -1;

	if (also) {
		af[OUT_N] = *also;  /* consumed: published or removed below */
		memset(also, 0, sizeof(*also));
	}
	/* render everything before creating anything */
	if (render(r, formats, text, len, d))
		goto out;
	if (report_mkdirs(dir)) {
		diag_err(d, dir, "", "cannot create report directory: %s", strerror(errno));
		goto out;
	}
	/* runs writing the same directory publish their files in turn (a lock
	 * on the directory itself), so all the files always come from the
	 * same run */
	lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock_fd >= 0)
		while (flock(lock_fd, LOCK_EX) < 0 && errno == EINTR)
			;
	if (stage(dir, text, len, af, d))
		goto out;
	int e = atomic_file_publish(af, OUT_N + 1);
	if (e) {
		diag_err(d, dir, "", "cannot publish the reports: %s (the earlier files were kept)",
			 strerror(-e));
		goto out;
	}
	rc = 0;
out:
	for (int i = 0; i <= OUT_N; i++)
		atomic_file_abort(&af[i]);  /* a no-op on published files */
	if (lock_fd >= 0)
		close(lock_fd);  /* releases the lock */
	for (int i = 0; i < OUT_N; i++)
		free(text[i]);
	return rc;
}
