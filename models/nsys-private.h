/* nsys-private: what nsys.c and nsys_host.c share. */
#ifndef DDLSIM_NSYS_PRIVATE_H
#define DDLSIM_NSYS_PRIVATE_H

#include <sqlite3.h>
#include <stdio.h>

/* How the export's threads issued their kernel launches, for people
 * (nsys_host.c): the busiest threads by launches, each with the median
 * gap between one launch's start and the next's. Prints nothing when the
 * export's tables cannot be read so (nsys.c has said why). */
void nsys_host_summary(sqlite3 *db, const char *path, FILE *f);

#endif
