/* samefile: no output of a command may be one of its inputs.
 *
 * A command that writes files notes every file it read (the scenario,
 * model, topology, GPU preset, profile, sweep, goal, samples, shards:
 * samefile_input() with its role, samefile_inputs_read() for the rest of
 * what util/infile.h opened) and every path it will write
 * (samefile_output()), then asks samefile_check() before any work starts.
 * An output that exists and is an input (the same st_dev and st_ino:
 * through the same name, another spelling, a symbolic or a hard link)
 * would be replaced by it, losing the input: that is a conflict. Two
 * outputs that name one file (atomic_file_same_target(): the same inode,
 * or the same resolved name when neither exists) are one too: the one
 * would replace the other.
 *
 * This module only finds the conflicts; the caller words them (cli/
 * prints "ddlsim: --trace 'S.json': error: is an input of this command
 * (the scenario 'S.json'); refusing to overwrite it" and exits 3). */
#ifndef DDLSIM_SAMEFILE_H
#define DDLSIM_SAMEFILE_H

#include <stdbool.h>
#include <stddef.h>

struct samefile;

/* One conflict: output out_path (out_what names it: "--trace", "the
 * report.json of the reports") is other_path, an input (other_is_input,
 * other_what its role: "the scenario") or another output. Borrowed. */
struct samefile_conflict {
	const char *out_what, *out_path;
	const char *other_what, *other_path;
	bool other_is_input;
};

/* A new, empty set (samefile_destroy()). */
struct samefile *samefile_create(void);
/* Free sf and the strings it copied; NULL is a no-op. */
void samefile_destroy(struct samefile *sf);

/* Note input path (role: "the scenario", "the model", ...; copied). A path
 * that cannot be stat'ed was not read and is left out; a file noted
 * before (the same inode) keeps its first role. NULL and "-" are
 * ignored. */
void samefile_input(struct samefile *sf, const char *role, const char *path);
/* Note every file util/infile.h has opened so far, from its from-th on
 * (infile_read_count() before a load: only what that load read; 0: all),
 * and sf does not hold yet, with role (e.g. "a file it read"). Call it
 * once the inputs are loaded and before the command reads any output back
 * (sweep --resume), or those would count as inputs. */
void samefile_inputs_read(struct samefile *sf, const char *role, size_t from);
/* Note output path (what names it for messages; copied). NULL and "-"
 * (stdout) are ignored. */
void samefile_output(struct samefile *sf, const char *what, const char *path);

/* Find every conflict (outputs against inputs first, then outputs against
 * each other, each pair once) and call report(ctx, c) for each. Returns
 * the number found. */
int samefile_check(const struct samefile *sf, void (*report)(void *ctx, const struct samefile_conflict *c),
		   void *ctx);

#endif
