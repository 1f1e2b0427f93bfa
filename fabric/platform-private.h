/* platform-private: what platform.c and platform_links.c share (not for
 * callers outside fabric/). */
#ifndef DDLSIM_PLATFORM_PRIVATE_H
#define DDLSIM_PLATFORM_PRIVATE_H

/* Nodes a non-blocking or rail fabric holds directly under its root; more
 * go in groups of this many ("grp<k>"), each behind a switch zone. */
#define GROUP_NODES 64

#endif
