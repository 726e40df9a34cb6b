// libFuzzer target for the module's reader of the helper's requests (protocol.c's pa_serve):
// the input's first byte picks the service line's options (use_first_pass, try_first_pass,
// PAM_SILENT), the rest is what a helper writes on the socket. PAM is replaced by a stub
// handle whose conversation answers in turn with a password, a failure, an answer with a line
// break and one longer than a line. Besides the sanitizers, it checks what pa_serve promises:
// 0 only after a RESULT, and -1 always with a reason.

#define _GNU_SOURCE
#include "pam_accounts.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <security/pam_appl.h>

// MARK: - A stub PAM handle

static char stub_handle;
#define STUB_HANDLE ((pam_handle_t *)&stub_handle)
static char *stub_items[PAM_OLDAUTHTOK + 1];
static unsigned int stub_turn;

static int stub_conversation(int count, const struct pam_message **messages,
                             struct pam_response **responses, void *data) {
  (void)messages, (void)data;
  static char long_answer[PA_LINE_MAX + 2];
  memset(long_answer, 'x', sizeof long_answer - 1);
  const char *answers[] = {"correct horse", NULL, "two\nlines", long_answer, ""};
  const char *answer = answers[stub_turn++ % (sizeof answers / sizeof answers[0])];
  if (count != 1 || answer == NULL) {
    return PAM_CONV_ERR;
  }
  *responses = calloc(1, sizeof **responses);
  if (*responses == NULL) {
    return PAM_BUF_ERR;
  }
  (*responses)[0].resp = strdup(answer);
  return PAM_SUCCESS;
}

static const struct pam_conv stub_conv = {stub_conversation, NULL};

int pam_get_item(const pam_handle_t *pamh, int item, const void **value) {
  (void)pamh;
  if (item == PAM_CONV) {
    *value = &stub_conv;
  } else if (item >= 0 && item <= PAM_OLDAUTHTOK) {
    *value = stub_items[item];
  } else {
    *value = NULL;
  }
  return PAM_SUCCESS;
}

int pam_set_item(pam_handle_t *pamh, int item, const void *value) {
  (void)pamh;
  if (item < 0 || item > PAM_OLDAUTHTOK) {
    return PAM_BAD_ITEM;
  }
  free(stub_items[item]);
  stub_items[item] = value != NULL ? strdup(value) : NULL;
  return PAM_SUCCESS;
}

void pam_syslog(const pam_handle_t *pamh, int priority, const char *format, ...) {
  (void)pamh, (void)priority;
  char line[PA_LINE_MAX * 2];
  va_list arguments;
  va_start(arguments, format);
  (void)vsnprintf(line, sizeof line, format, arguments);
  va_end(arguments);
}

// MARK: - One run

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0 || size > 64 * 1024) {
    return 0;
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    abort();
  }
  // Room for the whole input and every reply, so neither side waits on the other.
  int room = 1 << 20;
  (void)setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &room, sizeof room);
  (void)setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &room, sizeof room);
  (void)setsockopt(pair[1], SOL_SOCKET, SO_RCVBUF, &room, sizeof room);
  (void)setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &room, sizeof room);
  size_t written = 0;
  while (written < size - 1) {
    ssize_t n = write(pair[1], data + 1 + written, size - 1 - written);
    if (n <= 0) {
      abort();
    }
    written += (size_t)n;
  }
  (void)shutdown(pair[1], SHUT_WR);

  struct pa_options options = {.database = "/db", .timeout = 10};
  options.use_first_pass = data[0] & 1;
  options.try_first_pass = (data[0] >> 1) & 1;
  options.silent = (data[0] >> 2) & 1;
  if (data[0] & 8) {
    (void)pam_set_item(STUB_HANDLE, PAM_AUTHTOK, "stacked token");
  }
  struct pa_run *r = calloc(1, sizeof *r);
  if (r == NULL) {
    abort();
  }
  r->pamh = STUB_HANDLE;
  r->options = &options;
  r->fd = pair[0];
  r->pid = -1;
  r->pidfd = -1;
  r->verdict = -1;
  r->remaining = 10 * 1000;
  r->since = pa_now_ms();
  stub_turn = data[0] >> 4;

  int ended = 0;
  int served = pa_serve(r, &ended);
  if (served == 0 && (r->verdict < 0 || !ended)) {
    abort();  // success only after a RESULT and the end of the stream
  }
  if (served != 0 && r->problem == NULL) {
    abort();  // every failure has its reason for the log
  }
  if (r->used > sizeof r->in) {
    abort();
  }
  close(pair[0]);
  close(pair[1]);
  free(r);
  for (int i = 0; i <= PAM_OLDAUTHTOK; i++) {
    free(stub_items[i]);
    stub_items[i] = NULL;
  }
  return 0;
}
