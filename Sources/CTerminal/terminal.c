// Echo-off password input that always gives the terminal back, modelled on OpenSSH's
// readpassphrase.c: every exit path (return, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP)
// restores the saved termios. Written in C because signal handlers must be async-signal-safe.

#include "CTerminal.h"

#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved_termios;
static volatile sig_atomic_t saved_fd = -1;
static char saved_prompt[256];
static size_t saved_prompt_length = 0;

static void restore_now(void) {
  int fd = saved_fd;
  if (fd >= 0) {
    (void)tcsetattr(fd, TCSAFLUSH, &saved_termios);
  }
}

static void on_terminating_signal(int signo) {
  int was_secret = saved_fd >= 0;
  restore_now();
  saved_fd = -1;
  if (was_secret || signo == SIGINT) {
    (void)!write(STDERR_FILENO, "\n", 1);
  }
  _exit(128 + signo);
}

static void on_stop_signal(int signo) {
  int fd = saved_fd;
  struct termios secret;
  int had_secret = 0;
  if (fd >= 0 && tcgetattr(fd, &secret) == 0) {
    had_secret = 1;
    restore_now();
  }
  // Stop for real with the default action, then come back here on SIGCONT.
  struct sigaction dfl, previous;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, &previous);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signo);
  sigprocmask(SIG_UNBLOCK, &unblock, NULL);
  raise(signo);
  sigaction(signo, &previous, NULL);
  if (had_secret && saved_fd == fd) {
    (void)tcsetattr(fd, TCSAFLUSH, &secret);
    if (saved_prompt_length > 0) {
      (void)!write(STDERR_FILENO, saved_prompt, saved_prompt_length);
    }
  }
}

void accounts_terminal_install_signal_handlers(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  sigemptyset(&action.sa_mask);
  action.sa_handler = on_terminating_signal;
  sigaction(SIGINT, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
  sigaction(SIGHUP, &action, NULL);
  sigaction(SIGQUIT, &action, NULL);

  struct sigaction stop;
  memset(&stop, 0, sizeof stop);
  sigemptyset(&stop.sa_mask);
  stop.sa_handler = on_stop_signal;
  stop.sa_flags = SA_RESTART;
  sigaction(SIGTSTP, &stop, NULL);
  sigaction(SIGTTIN, &stop, NULL);
  sigaction(SIGTTOU, &stop, NULL);
}

int accounts_terminal_echo_off(int fd, const char *prompt) {
  struct termios current;
  if (!isatty(fd) || tcgetattr(fd, &current) != 0) {
    return -1;
  }
  size_t length = prompt ? strlen(prompt) : 0;
  if (length >= sizeof saved_prompt) {
    length = sizeof saved_prompt - 1;
  }
  if (length > 0) {
    memcpy(saved_prompt, prompt, length);
  }
  saved_prompt_length = length;
  saved_termios = current;
  saved_fd = fd;
  struct termios quiet = current;
  quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL);
  if (tcsetattr(fd, TCSAFLUSH, &quiet) != 0) {
    saved_fd = -1;
    return -1;
  }
  return 0;
}

void accounts_terminal_restore(void) {
  restore_now();
  saved_fd = -1;
}
