// The clean start of a password check run for PAM (see CPam.h). Plain C with no allocation, so
// that a PAM module can run it between fork and exec as well.

#include "CPam.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

const char *const accounts_pam_kept_variables[ACCOUNTS_PAM_KEPT_COUNT + 1] = {
    "PAM_USER", "PAM_SERVICE", "PAM_RHOST", "PAM_TTY", NULL};

/// The index in accounts_pam_kept_variables of the name `entry` ("NAME=value") has, or -1.
static int kept_index(const char *entry) {
  for (int i = 0; accounts_pam_kept_variables[i] != NULL; i++) {
    size_t length = strlen(accounts_pam_kept_variables[i]);
    if (strncmp(entry, accounts_pam_kept_variables[i], length) == 0 && entry[length] == '=') {
      return i;
    }
  }
  return -1;
}

size_t accounts_pam_environment_select(char *const *environment, const char **kept,
                                       size_t capacity) {
  if (kept == NULL || capacity == 0) {
    return 0;
  }
  size_t count = 0;
  int seen[ACCOUNTS_PAM_KEPT_COUNT] = {0};
  for (size_t i = 0; environment != NULL && environment[i] != NULL; i++) {
    if (count + 1 >= capacity) {
      break;
    }
    int index = kept_index(environment[i]);
    if (index < 0 || seen[index]) {
      continue;
    }
    seen[index] = 1;
    kept[count++] = environment[i];
  }
  kept[count] = NULL;
  return count;
}

void accounts_pam_environment_reset(void) {
  static char *clean[ACCOUNTS_PAM_KEPT_COUNT + 1];
  if (environ == clean) {
    return;
  }
  const char *kept[ACCOUNTS_PAM_KEPT_COUNT + 1];
  size_t count = accounts_pam_environment_select(environ, kept, ACCOUNTS_PAM_KEPT_COUNT + 1);
  for (size_t i = 0; i <= count; i++) {
    clean[i] = (char *)kept[i];
  }
  // The strings stay where they were (the process's initial environment block, or memory that
  // setenv never frees), so pointing at them is safe for the rest of the process's life.
  environ = clean;
}

void accounts_pam_time_limit(unsigned int seconds) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  (void)sigaction(SIGALRM, &action, NULL);
  sigset_t alarm_only;
  sigemptyset(&alarm_only);
  sigaddset(&alarm_only, SIGALRM);
  (void)sigprocmask(SIG_UNBLOCK, &alarm_only, NULL);
  (void)alarm(seconds);
}
