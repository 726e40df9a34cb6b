// What the parts of pam_accounts.so share: the options of a service line (pam_accounts.c), one
// run of the helper (helper.c) and the line protocol spoken with it (protocol.c).

#ifndef PAM_ACCOUNTS_H
#define PAM_ACCOUNTS_H

#include <stddef.h>
#include <sys/types.h>

#include <security/pam_modules.h>

#ifndef ACCOUNTS_HELPER
#error "build with -DACCOUNTS_HELPER='\"/absolute/path/to/accounts\"' (Scripts/build-pam does)"
#endif

/// The longest request line the helper may write, its newline included, and the longest answer
/// the module passes on (a reply line is its keyword, a space, the answer and a newline).
#define PA_LINE_MAX 4096

/// A service line's options; the strings point into PAM's argv, valid for the call.
struct pa_options {
  const char *database;     ///< database=PATH|URI (required)
  const char *key_file;     ///< key_file=PATH, or NULL
  const char *login_cache;  ///< login_cache=PATH, or NULL (the helper's default)
  const char *allow_groups; ///< allow_groups=G1,G2, or NULL
  unsigned int timeout;     ///< timeout=SECONDS, 1 to 300 (default 10)
  int use_first_pass;       ///< AUTHTOK/OLDAUTHTOK only from the stack
  int try_first_pass;       ///< the stack's token first, then the conversation
  int silent;               ///< PAM_SILENT: INFO lines are not shown
};

/// What one stage asks of the helper.
struct pa_stage {
  const char *name;  ///< auth, account, password, open-session, close-session
  int expired_only;  ///< password: --expired-only (PAM_CHANGE_EXPIRED_AUTHTOK)
  int authenticated; ///< password: --authenticated (this handle's auth accepted PAM_USER)
  int failure;       ///< the code returned when there is no usable verdict
  const char *session_login; ///< open-session: --session-login (a login auth did not log), or NULL
};

/// One run: the parent's end of the socket, the child, its clock and what it has said so far.
struct pa_run {
  pam_handle_t *pamh;
  const struct pa_options *options;
  int fd;
  pid_t pid;
  int pidfd;             ///< -1 when the kernel has none (the pid is used then)
  int gone;              ///< reaped by the host before the pidfd was opened: never signalled
  long long remaining;   ///< milliseconds of the helper's own time left when `since` was taken
  long long since;       ///< when the clock last started (CLOCK_MONOTONIC, ms)
  int authtok_asked;     ///< AUTHTOK requests so far
  int oldauthtok_asked;  ///< OLDAUTHTOK requests so far
  int verdict;           ///< the PAM code of the RESULT, or -1 before it
  const char *problem;   ///< why there is no usable verdict (no secret), or NULL
  size_t used;
  char in[PA_LINE_MAX];
};

/// Wipes a secret string, then frees it (NULL is fine).
void pa_wipe_free(char *secret);

/// CLOCK_MONOTONIC in milliseconds.
long long pa_now_ms(void);

/// Milliseconds of the helper's own time left (0 when it is up).
int pa_time_left(const struct pa_run *r);

/// Reads and answers the helper's requests (protocol.c) until it closes its end: 0 after a
/// RESULT and the end of the stream; -1 with `r->problem` set otherwise, `*ended` telling
/// whether the stream ended.
int pa_serve(struct pa_run *r, int *ended);

/// Runs `accounts pam-helper STAGE ...`, answers its requests through the conversation and
/// returns the PAM code of its RESULT, or `stage->failure` (logged) when there is none.
int pa_run_helper(pam_handle_t *pamh, const struct pa_options *options,
                  const struct pa_stage *stage);

#endif
