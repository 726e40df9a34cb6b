// Echo-off password input that always gives the terminal back, modelled on OpenSSH's
// readpassphrase.c: every exit path (return, every signal that would end the process, a stop
// and continue) restores the saved termios. Written in C because signal handlers must be
// async-signal-safe.

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

static void give_terminal_back(int signo) {
  int was_secret = saved_fd >= 0;
  restore_now();
  saved_fd = -1;
  if (was_secret || signo == SIGINT) {
    (void)!write(STDERR_FILENO, "\n", 1);
  }
}

static void on_terminating_signal(int signo) {
  give_terminal_back(signo);
  _exit(128 + signo);
}

// SEGV, BUS, FPE and ILL mean a bug in this process (Swift's traps end in SIGILL on x86-64).
// After giving the terminal back we die by the signal itself, with its default action, rather
// than exit 128 + signo: the parent (a shell printing "Segmentation fault", a supervisor, a
// test) sees a crash for what it is. That writes no core file, so no copy of a typed password:
// accounts_process_harden made the process non-dumpable, and the kernel dumps no such process
// whatever RLIMIT_CORE or core_pattern say. It also replaces the Swift runtime's backtracer for
// these signals, which would keep the terminal silent while it waits for a key.
static void on_fault_signal(int signo) {
  give_terminal_back(signo);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, NULL);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, signo);
  sigprocmask(SIG_UNBLOCK, &unblock, NULL);
  // A real fault would recur on return; one sent with kill(2) would not, so raise it.
  raise(signo);
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

/// What a caught signal does, besides putting the terminal back.
enum signal_kind {
  /// `_exit(128 + signo)`, the status a shell shows for a death by that signal.
  SIGNAL_EXITS,
  /// Dies by the signal with its default action (see on_fault_signal).
  SIGNAL_FAULT,
  /// Stops for real; on SIGCONT turns echo off again and shows the prompt again.
  SIGNAL_STOPS,
};

// Every signal that can be caught and whose default action ends or stops the process
// (signal(7)), in one place; the real-time signals, whose range glibc decides at run time, are
// added by the loop below. Signals whose default is to be ignored (CHLD, WINCH, URG, CONT) are
// left alone: they cannot leave the terminal behind. SIGKILL and SIGSTOP cannot be caught.
static const struct {
  int signo;
  enum signal_kind kind;
} handled_signals[] = {
    {SIGHUP, SIGNAL_EXITS},    {SIGINT, SIGNAL_EXITS},    {SIGQUIT, SIGNAL_EXITS},
    {SIGTERM, SIGNAL_EXITS},   {SIGUSR1, SIGNAL_EXITS},   {SIGUSR2, SIGNAL_EXITS},
    {SIGALRM, SIGNAL_EXITS},   {SIGPIPE, SIGNAL_EXITS},   {SIGXCPU, SIGNAL_EXITS},
    {SIGXFSZ, SIGNAL_EXITS},   {SIGVTALRM, SIGNAL_EXITS}, {SIGPROF, SIGNAL_EXITS},
    {SIGABRT, SIGNAL_EXITS},   {SIGTRAP, SIGNAL_EXITS},   {SIGSYS, SIGNAL_EXITS},
#ifdef __linux__
    {SIGSTKFLT, SIGNAL_EXITS}, {SIGPWR, SIGNAL_EXITS},    {SIGIO, SIGNAL_EXITS},
#endif
    {SIGSEGV, SIGNAL_FAULT},   {SIGBUS, SIGNAL_FAULT},    {SIGFPE, SIGNAL_FAULT},
    {SIGILL, SIGNAL_FAULT},    {SIGTSTP, SIGNAL_STOPS},   {SIGTTIN, SIGNAL_STOPS},
    {SIGTTOU, SIGNAL_STOPS},
};

// A stack overflow is a SIGSEGV with no stack left to run a handler on, so the main thread
// gets an alternate signal stack unless it has one already.
static char alternate_stack[64 * 1024];

static void ensure_alternate_stack(void) {
  stack_t current;
  if (sigaltstack(NULL, &current) == 0 && !(current.ss_flags & SS_DISABLE)) {
    return;
  }
  stack_t stack;
  memset(&stack, 0, sizeof stack);
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof alternate_stack;
  (void)sigaltstack(&stack, NULL);
}

static void install(int signo, enum signal_kind kind) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  switch (kind) {
  case SIGNAL_EXITS:
    action.sa_handler = on_terminating_signal;
    sigfillset(&action.sa_mask);
    break;
  case SIGNAL_FAULT:
    action.sa_handler = on_fault_signal;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_ONSTACK;
    break;
  case SIGNAL_STOPS:
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    break;
  }
  // A signal ignored when the program starts (nohup, a parent that ignores SIGPIPE) stays
  // ignored: it cannot end the process, so it cannot leave the terminal behind either. Setting
  // and then, rarely, undoing costs one system call per signal where asking first costs two.
  struct sigaction previous;
  if (sigaction(signo, &action, &previous) == 0 && previous.sa_handler == SIG_IGN) {
    (void)sigaction(signo, &previous, NULL);
  }
}

void accounts_terminal_install_signal_handlers(void) {
  ensure_alternate_stack();
  // Blocked meanwhile, so a signal ignored at start that arrives before its disposition is put
  // back stays pending and is then ignored, not handled.
  sigset_t all, before;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &before);
  for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++) {
    install(handled_signals[i].signo, handled_signals[i].kind);
  }
  for (int signo = SIGRTMIN; signo <= SIGRTMAX; signo++) {
    install(signo, SIGNAL_EXITS);
  }
  sigprocmask(SIG_SETMASK, &before, NULL);
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
