// Keeping typed secrets out of core files, other processes and freed memory.

#include "CTerminal.h"

#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

void accounts_process_harden(void) {
  // A hard limit of 0 cannot be raised again by this process or its children.
  struct rlimit none = {0, 0};
  (void)setrlimit(RLIMIT_CORE, &none);
  // Non-dumpable: the kernel writes no core file at all (even to a core_pattern pipe), and
  // ptrace and /proc/PID/mem, environ and the like are closed to other processes of the user.
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

void accounts_secure_zero(void *bytes, size_t count) {
  if (bytes != NULL && count > 0) {
    explicit_bzero(bytes, count);
  }
}
