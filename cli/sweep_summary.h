/* sweep_summary: the summary `ddlsim sweep` prints at its end, from the
 * JSON lines of every point in its output (resumed ones too). */
#ifndef DDLSIM_SWEEP_SUMMARY_H
#define DDLSIM_SWEEP_SUMMARY_H

#include <stdbool.h>

/* Print to stdout the invalid points by reason (the 3 most common;
 * every reason with an example point with show_rejected), the best
 * point that fits (the fastest to train, else the shortest iteration)
 * of every record in the JSON lines at jsonl_path, then, with
 * show_rejected, the points that do not fit in GPU memory (else their
 * count). Reads the records one at a time (a sweep may have 10^6); a
 * file that cannot be opened prints nothing. */
void sweep_summary_print(const char *jsonl_path, bool show_rejected);

#endif
