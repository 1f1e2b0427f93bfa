/* infile: the one rule for the files ddlsim reads.
 *
 * Every input (a scenario, model, topology, GPU preset, profile, sweep,
 * goal, straggler samples file, merge shard, a sweep's output read back by
 * --resume) is opened here: only a regular file is read, so a FIFO never
 * blocks the run, a device such as /dev/zero never feeds it forever and a
 * directory is named as such; a file larger than INFILE_MAX_BYTES is
 * refused before it is read. The open uses O_NONBLOCK (opening a FIFO
 * does not wait for a writer) and the kind is taken from fstat() of the
 * opened file, so a rename between a check and the open changes nothing.
 *
 * Line-oriented readers (CSV through csvfile.h, JSON lines) check each
 * line with infile_line_check(): a NUL byte (a binary file) or a line
 * longer than INFILE_MAX_LINE is an error with its line number, never a
 * number cut at the NUL or split across two reads.
 *
 * Messages name the file quoted and say what it is instead, so a loader
 * can prefix the referring file and key:
 *
 *     scenario.json: /simulation/stragglers/samples_file: error: 'x' is a FIFO, expected a regular file
 *
 * Every regular file opened here is remembered (once per device and
 * inode, with the first name it was opened by): the list of what this
 * process read, which util/samefile.h holds against the command's outputs
 * so that no output replaces an input it did not name (a GPU preset, a
 * samples file, a base scenario). */
#ifndef DDLSIM_INFILE_H
#define DDLSIM_INFILE_H

#include <stddef.h>
#include <stdio.h>

/* The largest input file (a scenario, model, topology or profile is a few
 * KB to a few MB; a sweep's points file a few tens of MB). */
#define INFILE_MAX_BYTES (64L << 20)
/* The largest profiler trace (models/kineto.h): a log of a job's kernels,
 * not a description; a few steps of a large model with shapes recorded
 * run to hundreds of MB. Parsed whole, it takes about ten times its size
 * in memory. */
#define INFILE_MAX_TRACE_BYTES (1L << 30)
/* The longest line of a line-oriented input, its line break included. */
#define INFILE_MAX_LINE (1L << 20)

/* Open path for reading (blocking reads, close-on-exec). Returns the
 * stream (caller fcloses), or NULL with errno (ENOENT for a missing file,
 * EINVAL for the wrong kind or size) and why[] set: "cannot open 'p': No
 * such file or directory", "'p' is a FIFO, expected a regular file",
 * "'p' is a directory, ...", "'p' is a device, ...", "'p' has N bytes,
 * more than the 64 MB an input file may have". */
FILE *infile_open(const char *path, char *why, size_t n);
/* The same with a size limit of max_bytes (the message says it). */
FILE *infile_open_max(const char *path, long max_bytes, char *why, size_t n);

/* The same check without keeping the file open (a loader that names a
 * referenced file checks it before handing the path on). Returns 0, or
 * -1 with why[] set as above. */
int infile_check(const char *path, char *why, size_t n);

/* The regular files opened so far by infile_open() and infile_check(),
 * each once, in the order first opened: infile_read_path(i) for i below
 * infile_read_count() (borrowed; valid to the process's end). */
size_t infile_read_count(void);
const char *infile_read_path(size_t i);

/* What st_mode is, for messages: "a FIFO", "a directory", "a device",
 * "a socket", "a special file" (never "a regular file"). */
const char *infile_kind(unsigned mode);

/* Check one line of len bytes as read by getline(). Returns 0, or -1 with
 * why[] set ("holds a NUL byte (a binary file?)", "is longer than the
 * 1048576 bytes a line may have"). */
int infile_line_check(const char *line, size_t len, char *why, size_t n);

#endif
