/* cleanup: signal-safe removal of temporaries and children (see cleanup.h).
 *
 * Fixed tables, no allocation after start-up: a slot is claimed by
 * copying the path into it and publishing it with a flag; the handler only
 * reads published slots. */
#include "cleanup.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILES 64
#define MAX_CHILDREN 1024
#define PATH_MAX_BYTES 4096

static char files[MAX_FILES][PATH_MAX_BYTES];
static volatile sig_atomic_t file_used[MAX_FILES];
static volatile pid_t children[MAX_CHILDREN];
static const char *volatile phase;
static volatile sig_atomic_t quiet;  /* a runner child: the parent speaks */
static volatile sig_atomic_t line;   /* a progress line stands on stderr */

static void say(const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static volatile sig_atomic_t *volatile deferred;  /* cleanup_defer() */

static void handler(int sig)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
	if (deferred && sig != SIGXFSZ && !*deferred) {
		*deferred = sig;        /* the command ends itself (cleanup.h) */
		return;
	}
	for (int i = 0; i < MAX_FILES; i++)
		if (file_used[i])
			unlink(files[i]);
	if (quiet)
		_exit(128 + sig);
	say(line ? "\r\033[K" : "\n");
	say("ddlsim: interrupted by ");
	say(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM"
	    : "SIGXFSZ (a file reached the size limit, ulimit -f)");
	if (phase) {
		say(" while ");
		say(phase);
	}
	say("; no partial report was left behind\n");
	_exit(128 + sig);
}

void cleanup_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGXFSZ, &sa, NULL);
}

void cleanup_line_shown(int shown)
{
	line = shown;
}

void cleanup_phase(const char *s)
{
	phase = s;
}

int cleanup_remember(const char *path)
{
	size_t n = strlen(path);
	if (n >= PATH_MAX_BYTES)
		return -1;
	for (int i = 0; i < MAX_FILES; i++)
		if (!file_used[i]) {
			memcpy(files[i], path, n + 1);
			file_used[i] = 1;
			return 0;
		}
	return -1;
}

void cleanup_forget(const char *path)
{
	for (int i = 0; i < MAX_FILES; i++)
		if (file_used[i] && strcmp(files[i], path) == 0) {
			file_used[i] = 0;
			return;
		}
}

int cleanup_remember_child(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == 0) {
			children[i] = pid;
			return 0;
		}
	return -1;
}

void cleanup_forget_child(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == pid) {
			children[i] = 0;
			return;
		}
}

void cleanup_reset_in_child(void)
{
	for (int i = 0; i < MAX_FILES; i++)
		file_used[i] = 0;
	for (int i = 0; i < MAX_CHILDREN; i++)
		children[i] = 0;
	quiet = 1;
}

void cleanup_defer(volatile sig_atomic_t *flag)
{
	if (flag)
		*flag = 0;
	deferred = flag;
}
