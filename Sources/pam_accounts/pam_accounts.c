// pam_accounts.so: the PAM entry points and the service line's options. The checking itself is
// the `accounts` program's (`accounts pam-helper STAGE`), run by helper.c; this module loads no
// Swift, reads nothing from the caller's environment, and from PAM's only the SSH_AUTH_INFO_0
// that sshd sets before the session (session_login).

#define _GNU_SOURCE
#include "pam_accounts.h"

#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_ext.h>

#define PA_EXPORT __attribute__((visibility("default")))

/// The value of `argument` if it is `name` followed by `=`, else NULL.
static const char *option_value(const char *argument, const char *name) {
  size_t length = strlen(name);
  if (strncmp(argument, name, length) == 0 && argument[length] == '=') {
    return argument + length + 1;
  }
  return NULL;
}

/// A whole number from 1 to 300, or 0.
static unsigned int parse_timeout(const char *text) {
  unsigned int value = 0;
  if (*text == '\0' || strlen(text) > 3) {
    return 0;
  }
  for (const char *c = text; *c != '\0'; c++) {
    if (*c < '0' || *c > '9') {
      return 0;
    }
    value = value * 10 + (unsigned int)(*c - '0');
  }
  return value >= 1 && value <= 300 ? value : 0;
}

static int is_database(const char *value) {
  return value[0] == '/' || strncmp(value, "postgresql://", 13) == 0 ||
         strncmp(value, "postgres://", 11) == 0;
}

/// Reads the service line's options; PAM_SERVICE_ERR (logged) when they cannot be used.
static int parse_options(pam_handle_t *pamh, int flags, int argc, const char **argv,
                         struct pa_options *options) {
  memset(options, 0, sizeof *options);
  options->timeout = 10;
  options->silent = (flags & PAM_SILENT) != 0;
  for (int i = 0; i < argc; i++) {
    const char *value;
    if ((value = option_value(argv[i], "database")) != NULL) {
      if (!is_database(value)) {
        pam_syslog(pamh, LOG_ERR,
                   "database= must be an absolute path or a postgresql:// URI");
        return PAM_SERVICE_ERR;
      }
      options->database = value;
    } else if ((value = option_value(argv[i], "key_file")) != NULL) {
      if (value[0] != '/') {
        pam_syslog(pamh, LOG_ERR, "key_file= must be an absolute path");
        return PAM_SERVICE_ERR;
      }
      options->key_file = value;
    } else if ((value = option_value(argv[i], "login_cache")) != NULL) {
      if (value[0] != '/') {
        pam_syslog(pamh, LOG_ERR, "login_cache= must be an absolute path");
        return PAM_SERVICE_ERR;
      }
      options->login_cache = value;
    } else if ((value = option_value(argv[i], "allow_groups")) != NULL) {
      if (value[0] == '\0') {
        pam_syslog(pamh, LOG_ERR, "allow_groups= needs at least one group");
        return PAM_SERVICE_ERR;
      }
      options->allow_groups = value;
    } else if ((value = option_value(argv[i], "timeout")) != NULL) {
      options->timeout = parse_timeout(value);
      if (options->timeout == 0) {
        pam_syslog(pamh, LOG_ERR, "timeout= must be a whole number of seconds from 1 to 300");
        return PAM_SERVICE_ERR;
      }
    } else if (strcmp(argv[i], "use_first_pass") == 0) {
      options->use_first_pass = 1;
    } else if (strcmp(argv[i], "try_first_pass") == 0) {
      options->try_first_pass = 1;
    } else {
      pam_syslog(pamh, LOG_ERR, "unknown option: %s", argv[i]);
    }
  }
  if (options->database == NULL) {
    pam_syslog(pamh, LOG_ERR, "database= is required");
    return PAM_SERVICE_ERR;
  }
  return PAM_SUCCESS;
}

/// The user name, asked of the application if no module set it yet (as pam_unix does).
static int require_user(pam_handle_t *pamh) {
  const char *user = NULL;
  int status = pam_get_user(pamh, &user, NULL);
  if (status == PAM_CONV_AGAIN) {
    return PAM_INCOMPLETE;
  }
  if (status != PAM_SUCCESS) {
    return status;
  }
  return user == NULL || user[0] == '\0' ? PAM_USER_UNKNOWN : PAM_SUCCESS;
}

/// Options, then the user, then the helper's verdict on `stage`.
static int run_stage(pam_handle_t *pamh, int flags, int argc, const char **argv,
                     const struct pa_stage *stage) {
  struct pa_options options;
  int status = parse_options(pamh, flags, argc, argv, &options);
  if (status != PAM_SUCCESS) {
    return status;
  }
  status = require_user(pamh);
  if (status != PAM_SUCCESS) {
    return status;
  }
  return pa_run_helper(pamh, &options, stage);
}

/// The PAM data that says which user this handle's auth stage accepted: a forced password
/// change right after it need not ask the code again, one after a key login (sshd runs no auth)
/// must.
#define PA_AUTHENTICATED_DATA "pam_accounts_authenticated_user"

static void free_data(pam_handle_t *pamh, void *data, int error_status) {
  (void)pamh, (void)error_status;
  free(data);
}

/// True when this handle's auth stage accepted the current PAM_USER.
static int authenticated_here(pam_handle_t *pamh) {
  const void *accepted = NULL;
  const char *user = NULL;
  if (pam_get_data(pamh, PA_AUTHENTICATED_DATA, &accepted) != PAM_SUCCESS || accepted == NULL) {
    return 0;
  }
  if (pam_get_item(pamh, PAM_USER, (const void **)&user) != PAM_SUCCESS || user == NULL) {
    return 0;
  }
  return strcmp((const char *)accepted, user) == 0;
}

/// True when `info`, sshd's SSH_AUTH_INFO_0 (one method a line, its details after a space),
/// names `method`, alone or with a submethod (`keyboard-interactive/pam`).
static int names_method(const char *info, const char *method) {
  size_t length = strlen(method);
  for (const char *line = info; line != NULL && *line != '\0';) {
    if (strncmp(line, method, length) == 0 &&
        (line[length] == '\0' || line[length] == '\n' || line[length] == ' ' ||
         line[length] == '/')) {
      return 1;
    }
    line = strchr(line, '\n');
    line = line == NULL ? NULL : line + 1;
  }
  return 0;
}

/// How the session about to open let the person in when this module's auth did not log it as
/// a login: "ssh-key" or "pam-session"; NULL when it did.
///
/// sshd (OpenSSH's auth-pam.c) calls no pam_authenticate for a key, only the account stage and
/// the session; and it runs keyboard-interactive's pam_authenticate in a process of its own, so
/// the PAM data set there never reaches the handle the session opens in. What tells them apart
/// is SSH_AUTH_INFO_0 in the PAM environment, which root's sshd sets from its own record of the
/// methods that succeeded just before pam_open_session (over any earlier value): nothing of the
/// user's environment is read.
static const char *session_login(pam_handle_t *pamh) {
  if (authenticated_here(pamh)) {
    return NULL;
  }
  const char *info = pam_getenv(pamh, "SSH_AUTH_INFO_0");
  if (info != NULL && names_method(info, "keyboard-interactive")) {
    return NULL;
  }
  return info != NULL && names_method(info, "publickey") ? "ssh-key" : "pam-session";
}

PA_EXPORT PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc,
                                             const char **argv) {
  const struct pa_stage stage = {"auth", 0, 0, PAM_AUTH_ERR, NULL};
  int status = run_stage(pamh, flags, argc, argv, &stage);
  if (status == PAM_SUCCESS) {
    const char *user = NULL;
    if (pam_get_item(pamh, PAM_USER, (const void **)&user) == PAM_SUCCESS && user != NULL) {
      char *copy = strdup(user);
      if (copy != NULL &&
          pam_set_data(pamh, PA_AUTHENTICATED_DATA, copy, free_data) != PAM_SUCCESS) {
        free(copy);
      }
    }
  }
  return status;
}

PA_EXPORT PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc,
                                        const char **argv) {
  (void)pamh, (void)flags, (void)argc, (void)argv;
  return PAM_SUCCESS;
}

PA_EXPORT PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc,
                                          const char **argv) {
  const struct pa_stage stage = {"account", 0, 0, PAM_SYSTEM_ERR, NULL};
  return run_stage(pamh, flags, argc, argv, &stage);
}

PA_EXPORT PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc,
                                          const char **argv) {
  if (flags & PAM_PRELIM_CHECK) {
    return PAM_SUCCESS;
  }
  if (!(flags & PAM_UPDATE_AUTHTOK)) {
    return PAM_SERVICE_ERR;
  }
  int expired_only = (flags & PAM_CHANGE_EXPIRED_AUTHTOK) != 0;
  const struct pa_stage stage = {"password", expired_only,
                                 expired_only && authenticated_here(pamh), PAM_SYSTEM_ERR, NULL};
  return run_stage(pamh, flags, argc, argv, &stage);
}

PA_EXPORT PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc,
                                             const char **argv) {
  const struct pa_stage stage = {"open-session", 0, 0, PAM_SYSTEM_ERR, session_login(pamh)};
  return run_stage(pamh, flags, argc, argv, &stage);
}

PA_EXPORT PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc,
                                              const char **argv) {
  const struct pa_stage stage = {"close-session", 0, 0, PAM_SYSTEM_ERR, NULL};
  return run_stage(pamh, flags, argc, argv, &stage);
}
