/* cost_profile: cost source backed by a measured calib profile.
 *
 * Reading and interpolating profiles arrives with the calibration work;
 * until then a scenario that names a profile is rejected with a clear
 * message rather than silently priced by the roofline. */
#include "cost-private.h"

struct cost *cost_profile_create(const char *profile_path,
				 const struct gpu_spec *gpu, struct diag *d)
{
	(void)gpu;
	diag_err(d, profile_path, "", "measured profiles are not supported yet by this ddlsim");
	return NULL;
}
