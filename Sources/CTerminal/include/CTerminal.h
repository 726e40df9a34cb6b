#ifndef ACCOUNTS_CTERMINAL_H
#define ACCOUNTS_CTERMINAL_H

#include <stddef.h>

/// Installs handlers that put the terminal back as it was on every signal that can be caught
/// and would end or stop the process: they exit 128 + the signal number (SEGV, BUS, FPE and
/// ILL die by the signal itself), or stop and turn echo off again on SIGCONT (TSTP, TTIN,
/// TTOU). Signals ignored at start stay ignored. Call once, early.
void accounts_terminal_install_signal_handlers(void);

/// Keeps secrets in memory from leaving the process: no core file (RLIMIT_CORE 0, soft and
/// hard) and not dumpable (no core even through a core_pattern pipe; no ptrace or
/// /proc/PID/mem by other processes of the same user). Call once, first thing in main.
void accounts_process_harden(void);

/// Sets `count` bytes at `bytes` to zero, with a write the compiler may not remove as dead
/// (`explicit_bzero`): for wiping copies of a secret before their memory is reused or freed.
void accounts_secure_zero(void *bytes, size_t count);

/// Turns echo off on `fd` (a terminal), remembering how it was and the prompt to show again
/// after a stop and continue. Returns 0 on success, -1 if `fd` is not a terminal.
int accounts_terminal_echo_off(int fd, const char *prompt);

/// Puts the terminal back as `accounts_terminal_echo_off` found it; harmless when nothing is saved.
void accounts_terminal_restore(void);

#endif
