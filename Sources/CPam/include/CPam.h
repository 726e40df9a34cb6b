#ifndef ACCOUNTS_CPAM_H
#define ACCOUNTS_CPAM_H

// What a password check run for PAM does to its own process before anything else, in C so that
// the PAM module that will run `accounts pam-auth` (pam_accounts.so) shares it: include this
// header and compile environment.c into the module.
//
// Such a check runs as root with an environment that is partly its caller's (pam_exec passes
// PAM's environment list, which pam_env and the application fill). Libraries read their own
// variables from it: libpq (HOME for ~/.pgpass, ~/.pg_service.conf and ~/.postgresql/, PG*),
// OpenSSL (OPENSSL_CONF, OPENSSL_MODULES, OPENSSL_ENGINES: a configuration that loads any shared
// object), Kerberos, LDAP. So none of it is kept but the PAM items the check reads.

#include <stddef.h>

/// The variables kept, NULL-terminated: PAM_USER, PAM_SERVICE, PAM_RHOST, PAM_TTY (the items
/// `accounts pam-auth` reads; pam_exec sets them from PAM's items).
extern const char *const accounts_pam_kept_variables[];

/// The number of names in `accounts_pam_kept_variables`.
#define ACCOUNTS_PAM_KEPT_COUNT 4

/// Puts into `kept` the entries ("NAME=value") of the NULL-terminated list `environment` whose
/// name is one of `accounts_pam_kept_variables`, the first entry of each name only (the one
/// getenv would find), followed by NULL; at most `capacity - 1` entries. Returns how many.
/// The entries are not copied: `kept` points into `environment`'s strings.
///
/// For a module that builds the environment of the program it runs: `kept` is execve's envp
/// (`const char *kept[ACCOUNTS_PAM_KEPT_COUNT + 1]` always has room).
size_t accounts_pam_environment_select(char *const *environment, const char **kept,
                                       size_t capacity);

/// Replaces this process's environment with its kept variables alone (`environ` then points at
/// a static list of the same strings, so nothing is allocated). Call first thing, before any
/// library that reads the environment is loaded; calling it again changes nothing.
void accounts_pam_environment_reset(void);

/// Ends this process by SIGALRM after `seconds`, whatever it inherited: SIGALRM's disposition is
/// set to the default (a caller may have left it ignored, which survives exec) and the signal
/// unblocked in this thread (a blocked mask survives exec too) before `alarm(seconds)`.
void accounts_pam_time_limit(unsigned int seconds);

#endif
