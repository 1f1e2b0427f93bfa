/* band_cv: the band table from the suite's cases, cross-validated (the
 * construction of band.h: leave one family out, split conformal at
 * BAND_LEVEL).
 *
 * `ddlsim validation` hands every case that simulated (its family, its
 * plan's features, its signed and speed errors) to band_cv_build(); the
 * rows it returns are what --write-bands writes, --check-bands compares
 * and --cross-validate prints. Nothing here simulates. */
#ifndef DDLSIM_BAND_CV_H
#define DDLSIM_BAND_CV_H

#include "band.h"

/* One case of the suite that simulated. */
struct band_case {
	const char *family;         /* borrowed */
	struct band_features f;
	double err;                 /* the suite's signed error of its figure */
	double speed;               /* its speed error (band.h): > 0 optimistic */
};

/* The table of cases c[0 .. n - 1]: one row per family in name order, the
 * overall row last, every field of struct band filled as band.h says
 * (percent fields rounded as the bands file writes them: to 0.1, the
 * half-widths up). *nrows gets the row count. Returns the rows (caller
 * frees with band_cv_free); n must be at least 1. */
struct band *band_cv_build(const struct band_case *c, int n, int *nrows);

/* Free rows from band_cv_build (NULL is a no-op). */
void band_cv_free(struct band *rows, int nrows);

#endif
