// One run of the helper, `accounts pam-helper STAGE ...`, on a socketpair: started, given its
// time, killed when it is up, always reaped (the requests it sends are protocol.c's).
//
// The module runs inside sshd, login, su, sudo and screen lockers, so: argv and envp are built
// before fork (nothing is allocated between fork and exec); the child gets the socket on fds 0
// and 1, /dev/null on 2, no other fd, default signals, an empty mask and resource limits of its
// own; writes never raise SIGPIPE in the host; the helper is always reaped (a host that reaps it
// first is not an error); and it is killed when its own time is up (the clock stops while a
// person answers).

#define _GNU_SOURCE
#include "pam_accounts.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>

// MARK: - Secrets and the clock

void pa_wipe_free(char *secret) {
  if (secret != NULL) {
    explicit_bzero(secret, strlen(secret));
    free(secret);
  }
}

long long pa_now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Milliseconds of the helper's time left (0 when it is up).
int pa_time_left(const struct pa_run *r) {
  long long left = r->remaining - (pa_now_ms() - r->since);
  return left > 0 ? (int)left : 0;
}

// MARK: - Starting the helper

/// Adds "NAME=value" for a PAM item that is set; -1 when memory ran out.
static int add_item(pam_handle_t *pamh, int item, const char *name, char **envp, size_t *count) {
  const void *value = NULL;
  if (pam_get_item(pamh, item, &value) != PAM_SUCCESS || value == NULL) {
    return 0;
  }
  size_t name_length = strlen(name), value_length = strlen(value);
  char *entry = malloc(name_length + value_length + 2);
  if (entry == NULL) {
    return -1;
  }
  memcpy(entry, name, name_length);
  entry[name_length] = '=';
  memcpy(entry + name_length + 1, value, value_length + 1);
  envp[(*count)++] = entry;
  return 0;
}

/// The soft resource limits the helper runs under, whatever its caller's were (a hard limit below
/// one is raised to it). Whoever runs a setuid host (su) chooses the limits the module inherits,
/// and a limit the helper meets after a password was asked would leave that attempt uncounted: a
/// file-size limit stops the store's write of the failure (SIGXFSZ), a CPU, real-time CPU or
/// address-space limit kills the helper in the middle of its check, too few open files fail its
/// store. No core file of a process that held secrets. The others (processes, locked memory,
/// signals queued, message queues, nice, real-time priority) are never met by the helper, which
/// starts no thread or process of its own (and a fork that RLIMIT_NPROC refuses starts no helper:
/// nothing is asked). A host with CAP_SYS_RESOURCE (root: su, sshd, login, sudo) may raise a hard
/// limit; a caller without it whose hard limit is lower gets no helper, so nothing is asked.
static const struct {
  int resource;
  rlim_t value;
  const char *refusal;  ///< a LOG request line for the module, written when it cannot be set
} helper_limits[] = {
#define PA_REFUSAL(name, value)                                                                 \
  "LOG the helper was not started: its " name " cannot be set to " value                        \
  " (the caller's hard limit is lower, and raising it needs CAP_SYS_RESOURCE)\n"
    {RLIMIT_FSIZE, RLIM_INFINITY, PA_REFUSAL("RLIMIT_FSIZE", "unlimited")},
    {RLIMIT_CPU, RLIM_INFINITY, PA_REFUSAL("RLIMIT_CPU", "unlimited")},
    {RLIMIT_RTTIME, RLIM_INFINITY, PA_REFUSAL("RLIMIT_RTTIME", "unlimited")},
    {RLIMIT_AS, RLIM_INFINITY, PA_REFUSAL("RLIMIT_AS", "unlimited")},
    {RLIMIT_DATA, RLIM_INFINITY, PA_REFUSAL("RLIMIT_DATA", "unlimited")},
    {RLIMIT_STACK, 8 << 20, PA_REFUSAL("RLIMIT_STACK", "8 MiB")},
    {RLIMIT_NOFILE, 1024, PA_REFUSAL("RLIMIT_NOFILE", "1024")},
    {RLIMIT_CORE, 0, PA_REFUSAL("RLIMIT_CORE", "0")},
#undef PA_REFUSAL
};

/// In the child: the helper's limits, or its LOG line on `sock` and the end of the child.
static void set_limits(int sock) {
  for (size_t i = 0; i < sizeof helper_limits / sizeof helper_limits[0]; i++) {
    rlim_t value = helper_limits[i].value;
    struct rlimit limit;
    if (getrlimit(helper_limits[i].resource, &limit) == 0) {
      // A hard limit above the value stays (Valgrind, for one, refuses to have its own
      // RLIMIT_NOFILE lowered); one below it is raised.
      if (value == RLIM_INFINITY || (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < value)) {
        limit.rlim_max = value;
      }
      limit.rlim_cur = value;
      if (setrlimit(helper_limits[i].resource, &limit) == 0) {
        continue;
      }
    }
    const char *line = helper_limits[i].refusal;
    (void)!write(sock, line, strlen(line));
    _exit(127);
  }
}

/// In the child: default signals, the helper's limits, fds 0 and 1 the socket, 2 /dev/null, no
/// other fd, an empty mask. Only async-signal-safe calls and no allocation.
__attribute__((noreturn)) static void exec_child(int sock, const char **argv, char **envp,
                                                 int fd_limit) {
  struct sigaction fallback;
  memset(&fallback, 0, sizeof fallback);
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  for (int sig = 1; sig < NSIG; sig++) {
    (void)sigaction(sig, &fallback, NULL);  // SIGKILL, SIGSTOP and glibc's own refuse: fine
  }
  set_limits(sock);
  if (sock < 3 && (sock = fcntl(sock, F_DUPFD_CLOEXEC, 3)) < 0) {
    _exit(127);
  }
  if (dup2(sock, 0) < 0 || dup2(sock, 1) < 0) {
    _exit(127);
  }
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0 || (null == 2 ? fcntl(2, F_SETFD, 0) : dup2(null, 2)) < 0) {
    _exit(127);
  }
  if (close_range(3, ~0U, 0) != 0) {
    for (int fd = 3; fd < fd_limit; fd++) {
      (void)close(fd);
    }
  }
  sigset_t none;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
  execve(ACCOUNTS_HELPER, (char *const *)argv, envp);
  _exit(127);
}

/// Forks and executes the helper with `argv` and `envp`; 0, or -1 with `r->problem` set.
static int start(struct pa_run *r, const char **argv, char **envp) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    r->problem = strerror(errno);
    return -1;
  }
  struct rlimit files;
  int fd_limit = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < (1 << 20)
                     ? (int)files.rlim_cur
                     : (1 << 20);
  // Every signal blocked across fork: none of the host's handlers runs in the child.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pid_t pid = fork();
  if (pid == 0) {
    exec_child(pair[1], argv, envp, fd_limit);
  }
  if (pid < 0) {
    r->problem = strerror(errno);
  }
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  close(pair[1]);
  if (pid < 0) {
    close(pair[0]);
    return -1;
  }
  r->fd = pair[0];
  r->pid = pid;
  r->pidfd = pidfd_open(pid, 0);
  // ESRCH: the host reaped it already (its pid may be another process's now); ENOSYS: an old
  // kernel, where the pid is used.
  r->gone = r->pidfd < 0 && errno == ESRCH;
  return 0;
}

// MARK: - Ending the helper

static void kill_child(struct pa_run *r) {
  if (r->gone) {
    return;
  }
  if (r->pidfd >= 0) {
    (void)pidfd_send_signal(r->pidfd, SIGKILL, NULL, 0);
  } else {
    (void)kill(r->pid, SIGKILL);
  }
}

/// Reaps the child, waiting at most the time left (then killing it). Returns 0 when it exited
/// with status 0 or the host reaped it (ECHILD); otherwise -1 with `how` describing the end.
static int reap(struct pa_run *r, int kill_now, char *how, size_t how_size) {
  if (kill_now) {
    kill_child(r);
  }
  int killed_late = 0;
  for (;;) {
    int status = 0;
    pid_t done = waitpid(r->pid, &status, kill_now ? 0 : WNOHANG);
    if (done == r->pid) {
      if (killed_late) {
        snprintf(how, how_size, "still running at the time limit, killed");
      } else if (WIFEXITED(status)) {
        snprintf(how, how_size, "exit status %d", WEXITSTATUS(status));
        return WEXITSTATUS(status) == 0 ? 0 : -1;
      } else {
        snprintf(how, how_size, "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      }
      return -1;
    }
    if (done < 0 && errno == ECHILD) {
      snprintf(how, how_size, "reaped by the application");
      return killed_late ? -1 : 0;
    }
    if (done < 0 && errno == EINTR) {
      continue;
    }
    if (done < 0) {
      snprintf(how, how_size, "waitpid failed: %s", strerror(errno));
      return -1;
    }
    int left = pa_time_left(r);
    if (left == 0) {
      kill_child(r);
      kill_now = killed_late = 1;
    } else if (r->pidfd >= 0) {
      struct pollfd exited = {r->pidfd, POLLIN, 0};
      (void)poll(&exited, 1, left);
    } else {
      struct timespec pause = {0, 10 * 1000 * 1000};
      (void)nanosleep(&pause, NULL);
    }
  }
}
// MARK: - One run

int pa_run_helper(pam_handle_t *pamh, const struct pa_options *options,
                  const struct pa_stage *stage) {
  char limit[8];
  snprintf(limit, sizeof limit, "%u", options->timeout);
  const char *argv[20];
  size_t argc = 0;
  argv[argc++] = "accounts";
  argv[argc++] = "pam-helper";
  argv[argc++] = stage->name;
  argv[argc++] = "--database";
  argv[argc++] = options->database;
  if (options->key_file != NULL) {
    argv[argc++] = "--key-file";
    argv[argc++] = options->key_file;
  }
  if (options->login_cache != NULL) {
    argv[argc++] = "--login-cache";
    argv[argc++] = options->login_cache;
  }
  argv[argc++] = "--time-limit";
  argv[argc++] = limit;
  if (options->allow_groups != NULL && strcmp(stage->name, "account") == 0) {
    argv[argc++] = "--allow-groups";
    argv[argc++] = options->allow_groups;
  }
  if (stage->expired_only) {
    argv[argc++] = "--expired-only";
  }
  if (stage->authenticated) {
    argv[argc++] = "--authenticated";
  }
  if (stage->session_login != NULL) {
    argv[argc++] = "--session-login";
    argv[argc++] = stage->session_login;
  }
  argv[argc] = NULL;

  char *envp[5] = {NULL};
  size_t envc = 0;
  struct pa_run *r = calloc(1, sizeof *r);
  if (r == NULL || add_item(pamh, PAM_USER, "PAM_USER", envp, &envc) != 0 ||
      add_item(pamh, PAM_SERVICE, "PAM_SERVICE", envp, &envc) != 0 ||
      add_item(pamh, PAM_RHOST, "PAM_RHOST", envp, &envc) != 0 ||
      add_item(pamh, PAM_TTY, "PAM_TTY", envp, &envc) != 0) {
    pam_syslog(pamh, LOG_CRIT, "cannot run the helper %s: out of memory", ACCOUNTS_HELPER);
    for (size_t i = 0; i < envc; i++) {
      free(envp[i]);
    }
    free(r);
    return stage->failure;
  }
  r->pamh = pamh;
  r->options = options;
  r->verdict = -1;
  r->remaining = (long long)options->timeout * 1000;
  r->since = pa_now_ms();

  int code = stage->failure;
  if (start(r, argv, envp) != 0) {
    pam_syslog(pamh, LOG_ERR, "cannot start the helper %s: %s", ACCOUNTS_HELPER, r->problem);
  } else {
    int ended = 0;
    int served = pa_serve(r, &ended);
    close(r->fd);
    char how[96] = "";
    // A helper that broke the protocol is killed at once; one that closed its end is given
    // the rest of its time to exit.
    int exited = reap(r, served != 0 && !ended, how, sizeof how);
    if (served == 0 && exited == 0) {
      code = r->verdict;
    } else {
      pam_syslog(pamh, LOG_ERR, "helper %s (%s): %s; %s", ACCOUNTS_HELPER, stage->name,
                 served != 0 ? r->problem : "RESULT not honoured", how);
    }
    if (r->pidfd >= 0) {
      close(r->pidfd);
    }
  }
  for (size_t i = 0; i < envc; i++) {
    free(envp[i]);
  }
  explicit_bzero(r->in, sizeof r->in);
  free(r);
  return code;
}
