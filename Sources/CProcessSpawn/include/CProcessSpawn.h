#ifndef C_PROCESS_SPAWN_H
#define C_PROCESS_SPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated) in a new process group, with stdin from
/// /dev/null, stdout and stderr to new close-on-exec pipes whose read ends are returned, SIGINT,
/// SIGTERM, SIGPIPE, SIGHUP and SIGQUIT reset to their defaults and no signal blocked, in `cwd` when it
/// is not NULL. Returns 0, or an errno value (nothing is left open then).
int cps_spawn(const char *path, char *const argv[], char *const envp[], const char *cwd, pid_t *pid,
              int *stdout_fd, int *stderr_fd);

#endif
