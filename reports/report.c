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
		return diag_err(d, path, "", "cannot write report: %s", strerror(-rc));
	return 0;
}

const char *const report_format_names[4] = { "json", "csv", "svg", "html" };

enum { OUT_JSON, OUT_CSV, OUT_BREAKDOWN, OUT_SCHEDULE, OUT_MEMORY, OUT_HTML, OUT_N };
static const char *const out_files[OUT_N] = {
	"report.json", "report.csv", "breakdown.svg", "schedule.svg", "memory.svg", "report.html"
};

int report_write(const struct result *r, const char *dir, unsigned formats, struct diag *d)
{
	char *text[OUT_N] = { 0 };
	size_t len[OUT_N] = { 0 };
	int rc = -1, written = 0, lock_fd = -1;

	/* render everything before creating anything */
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
			diag_errf(d, "cannot render the CSV report");
			goto out;
		}
		fclose(m);
	}
	if (formats & REPORT_SVG) {
		text[OUT_BREAKDOWN] = plot_breakdown_svg(r);
		text[OUT_SCHEDULE] = plot_gantt_svg(r);
		text[OUT_MEMORY] = plot_memory_svg(r);
		if (!text[OUT_BREAKDOWN] || !text[OUT_SCHEDULE] || !text[OUT_MEMORY]) {
			diag_errf(d, "cannot render the SVG plots");
			goto out;
		}
	}
	if ((formats & REPORT_HTML) && !(text[OUT_HTML] = html_render(r))) {
		diag_errf(d, "cannot render the HTML report");
		goto out;
	}
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
	for (; written < OUT_N; written++) {
		if (!text[written])
			continue;
		char *path = xasprintf("%s/%s", dir, out_files[written]);
		size_t n = written == OUT_CSV ? len[written] : strlen(text[written]);
		int e = report_write_atomic(path, text[written], n, d);
		free(path);
		if (e)
			goto out_unlink;
	}
	rc = 0;
	goto out;
out_unlink:
	for (int i = 0; i < written; i++)
		if (text[i]) {
			char *path = xasprintf("%s/%s", dir, out_files[i]);
			unlink(path);
			free(path);
		}
out:
	if (lock_fd >= 0)
		close(lock_fd);  /* releases the lock */
	for (int i = 0; i < OUT_N; i++)
		free(text[i]);
	return rc;
}
