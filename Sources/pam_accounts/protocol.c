// The line protocol of pam_accounts.so (described in pam_accounts.8): the helper's requests,
// answered through the application's conversation, with the helper's clock stopped while the
// application has the floor; every answer and reply line is wiped once sent.

#define _GNU_SOURCE
#include "pam_accounts.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>

#include <security/pam_ext.h>

static const struct {
  const char *name;
  int code;
} results[] = {
    {"success", PAM_SUCCESS},
    {"auth_err", PAM_AUTH_ERR},
    {"maxtries", PAM_MAXTRIES},
    {"user_unknown", PAM_USER_UNKNOWN},
    {"acct_expired", PAM_ACCT_EXPIRED},
    {"new_authtok_reqd", PAM_NEW_AUTHTOK_REQD},
    {"perm_denied", PAM_PERM_DENIED},
    {"authinfo_unavail", PAM_AUTHINFO_UNAVAIL},
    {"authtok_err", PAM_AUTHTOK_ERR},
    {"authtok_recovery_err", PAM_AUTHTOK_RECOVERY_ERR},
    {"cred_insufficient", PAM_CRED_INSUFFICIENT},
    {"system_err", PAM_SYSTEM_ERR},
};

// MARK: - Replies and the conversation

/// Sends "KEYWORD[ text]\n" whole, within the time left; the line is wiped afterwards.
static int reply(struct pa_run *r, const char *keyword, const char *text) {
  char line[PA_LINE_MAX + 16];
  size_t length = strlen(keyword);
  memcpy(line, keyword, length);
  if (text != NULL) {
    size_t text_length = strlen(text);
    line[length++] = ' ';
    memcpy(line + length, text, text_length);
    length += text_length;
  }
  line[length++] = '\n';
  size_t sent = 0;
  while (sent < length) {
    ssize_t n = send(r->fd, line + sent, length - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      struct pollfd room = {r->fd, POLLOUT, 0};
      int left = pa_time_left(r);
      if (left > 0 && poll(&room, 1, left) >= 0) {
        continue;
      }
      r->problem = left > 0 ? "writing a reply failed" : "no verdict within the time limit";
    } else {
      r->problem = "the helper stopped reading (writing a reply failed)";
    }
    break;
  }
  explicit_bzero(line, sizeof line);
  return sent == length ? 0 : -1;
}

/// One message through the application's conversation, with the helper's clock stopped.
/// Returns the answer (to be wiped and freed) or NULL when there is none.
static char *converse(struct pa_run *r, int style, const char *text) {
  const void *item = NULL;
  if (pam_get_item(r->pamh, PAM_CONV, &item) != PAM_SUCCESS || item == NULL) {
    return NULL;
  }
  const struct pam_conv *conv = item;
  if (conv->conv == NULL) {
    return NULL;
  }
  struct pam_message message = {style, text};
  const struct pam_message *messages = &message;
  struct pam_response *responses = NULL;
  r->remaining -= pa_now_ms() - r->since;
  int status = conv->conv(1, &messages, &responses, conv->appdata_ptr);
  r->since = pa_now_ms();
  char *answer = NULL;
  if (responses != NULL) {
    if (status == PAM_SUCCESS) {
      answer = responses[0].resp;
    } else {
      pa_wipe_free(responses[0].resp);
    }
    free(responses);
  }
  return answer;
}

/// An answer the helper can take: at most PA_LINE_MAX bytes, no line break.
static int usable(const char *answer) {
  return answer != NULL && strnlen(answer, PA_LINE_MAX + 1) <= PA_LINE_MAX &&
         strpbrk(answer, "\r\n") == NULL;
}

/// Asks the conversation and replies OK with the answer, or FAIL; the answer is stored as
/// `item` when it is not 0.
static int ask(struct pa_run *r, int style, const char *prompt, int item) {
  char *answer = converse(r, style, prompt);
  if (!usable(answer)) {
    pa_wipe_free(answer);
    return reply(r, "FAIL", NULL);
  }
  if (item != 0) {
    (void)pam_set_item(r->pamh, item, answer);
  }
  int status = reply(r, "OK", answer);
  pa_wipe_free(answer);
  return status;
}

/// AUTHTOK and OLDAUTHTOK: the stack's token (use_first_pass, try_first_pass) or the person's.
static int token(struct pa_run *r, int item, int *asked, const char *prompt) {
  int first = (*asked)++ == 0;
  if (r->options->use_first_pass || (r->options->try_first_pass && first)) {
    const void *stacked = NULL;
    if (pam_get_item(r->pamh, item, &stacked) == PAM_SUCCESS && stacked != NULL) {
      return usable(stacked) ? reply(r, "STACKED", stacked) : reply(r, "FAIL", NULL);
    }
    if (r->options->use_first_pass) {
      return reply(r, "FAIL", NULL);
    }
  }
  return ask(r, PAM_PROMPT_ECHO_OFF, prompt, item);
}

// MARK: - Requests

/// Shows INFO or ERROR text; the application's answer, if any, is dropped.
static int show(struct pa_run *r, int style, const char *text) {
  pa_wipe_free(converse(r, style, text));
  return 0;
}

static int result(struct pa_run *r, const char *name) {
  for (size_t i = 0; i < sizeof results / sizeof results[0]; i++) {
    if (strcmp(name, results[i].name) == 0) {
      r->verdict = results[i].code;
      return 0;
    }
  }
  r->problem = "RESULT names no known verdict";
  return -1;
}

/// One request line (its newline replaced by NUL). 0, or -1 with `r->problem` set.
static int handle(struct pa_run *r, char *line) {
  if (r->verdict >= 0) {
    r->problem = "wrote after its RESULT";
    return -1;
  }
  char *text = strchr(line, ' ');
  if (text != NULL) {
    *text++ = '\0';
  } else {
    text = line + strlen(line);
  }
  if (strcmp(line, "AUTHTOK") == 0) {
    return token(r, PAM_AUTHTOK, &r->authtok_asked, text);
  } else if (strcmp(line, "OLDAUTHTOK") == 0) {
    return token(r, PAM_OLDAUTHTOK, &r->oldauthtok_asked, text);
  } else if (strcmp(line, "SECRET") == 0) {
    return ask(r, PAM_PROMPT_ECHO_OFF, text, 0);
  } else if (strcmp(line, "TEXT") == 0) {
    return ask(r, PAM_PROMPT_ECHO_ON, text, 0);
  } else if (strcmp(line, "INFO") == 0) {
    return r->options->silent ? 0 : show(r, PAM_TEXT_INFO, text);
  } else if (strcmp(line, "ERROR") == 0) {
    return show(r, PAM_ERROR_MSG, text);
  } else if (strcmp(line, "LOG") == 0) {
    pam_syslog(r->pamh, LOG_ERR, "%s", text);
    return 0;
  } else if (strcmp(line, "RESULT") == 0) {
    return result(r, text);
  }
  r->problem = "sent a line that is not a request";
  return -1;
}

/// Reads and answers requests until the helper closes its end. 0 after a RESULT and the end
/// of the stream; -1 with `r->problem` set otherwise (`*ended` tells whether the stream ended).
int pa_serve(struct pa_run *r, int *ended) {
  *ended = 0;
  for (;;) {
    char *newline;
    while ((newline = memchr(r->in, '\n', r->used)) != NULL) {
      size_t length = (size_t)(newline - r->in);
      if (memchr(r->in, '\0', length) != NULL) {
        r->problem = "sent a NUL byte";
        return -1;
      }
      *newline = '\0';
      if (handle(r, r->in) != 0) {
        return -1;
      }
      r->used -= length + 1;
      memmove(r->in, newline + 1, r->used);
    }
    if (r->used == sizeof r->in) {
      r->problem = "sent a line longer than 4096 bytes";
      return -1;
    }
    int left = pa_time_left(r);
    struct pollfd readable = {r->fd, POLLIN, 0};
    if (left == 0 || (poll(&readable, 1, left) == 0 && pa_time_left(r) == 0)) {
      r->problem = "no verdict within the time limit";
      return -1;
    }
    ssize_t n = recv(r->fd, r->in + r->used, sizeof r->in - r->used, MSG_DONTWAIT);
    if (n > 0) {
      if (r->verdict >= 0) {
        r->problem = "wrote after its RESULT";
        return -1;
      }
      r->used += (size_t)n;
    } else if (n == 0) {
      *ended = 1;
      if (r->used > 0) {
        r->problem = "ended in the middle of a line";
        return -1;
      }
      if (r->verdict < 0) {
        r->problem = "ended without a RESULT";
        return -1;
      }
      return 0;
    } else if (errno != EAGAIN && errno != EINTR) {
      r->problem = "reading from the helper failed";
      return -1;
    }
  }
}
