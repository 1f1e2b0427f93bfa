/* cleanup: what an interrupted ddlsim must undo, and how it says so.
 *
 * Temporary files (the atomic writers' temporaries) register here while
 * they exist; runner children register their pids. On SIGINT, SIGTERM or
 * SIGXFSZ (a write past `ulimit -f`, which would otherwise kill silently)
 * the handler (installed by cleanup_install()) removes every registered
 * file, kills every registered child, prints what was interrupted (the
 * phase the command last set) and exits with 128 + the signal (130 for
 * SIGINT, 153 for SIGXFSZ), so an interrupted run leaves no temporary file, no orphan and
 * no half report. Everything the handler does is async-signal-safe: fixed
 * tables, unlink(), kill(), write(), _exit(). */
#ifndef DDLSIM_CLEANUP_H
#define DDLSIM_CLEANUP_H

#include <signal.h>
#include <sys/types.h>

/* Install the SIGINT/SIGTERM/SIGXFSZ handler (once, in main). */
void cleanup_install(void);

/* What the command is doing, for the interruption message ("loading
 * scenarios", "simulating quickstart", ...). s must stay valid (a string
 * literal or a string that outlives the phase); NULL clears it. */
void cleanup_phase(const char *s);

/* Whether a progress line stands unfinished on stderr (a terminal): the
 * interruption message then erases it ("\r\033[K") instead of starting
 * a new line below it. */
void cleanup_line_shown(int shown);

/* Remember path (copied) until cleanup_forget(path). Returns 0, or -1 when
 * the table is full (the file is then not removed on a signal). */
int cleanup_remember(const char *path);
void cleanup_forget(const char *path);

/* The same for a child process to kill on a signal. */
int cleanup_remember_child(pid_t pid);
void cleanup_forget_child(pid_t pid);

/* With flag set (non-NULL), the first SIGINT or SIGTERM kills every
 * registered child and stores the signal in *flag instead of exiting: the
 * command then ends itself, keeping what finished (compare prints the
 * scenarios that finished and exits 128 + *flag), and says so. Temporary
 * files stay registered (the atomic writers remove their own). A second
 * signal, or SIGXFSZ, ends the process as without it. NULL: back to
 * exiting at once. *flag is cleared when set. */
void cleanup_defer(volatile sig_atomic_t *flag);

/* In a forked child: forget the parent's files and children (they are the
 * parent's to clean up); on a signal the child removes its own files and
 * exits without a message (the parent reports the interruption). */
void cleanup_reset_in_child(void);

#endif
