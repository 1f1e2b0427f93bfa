/* sweep_depends: whether a loader's message about a sweep's point can
 * depend on the point (the rest holds for every point). */
#ifndef DDLSIM_SWEEP_DEPENDS_H
#define DDLSIM_SWEEP_DEPENDS_H

#include <stdbool.h>

struct sweep;

/* Whether the loader's message text about point docs can depend on the
 * point: it names a path an axis or derived value may change (or none, or
 * another file's), unless it is an unknown key (a key the sweep sets at
 * every point). NULL text: true (nothing known). */
bool sweep_message_depends(const struct sweep *s, const char *text);

#endif
