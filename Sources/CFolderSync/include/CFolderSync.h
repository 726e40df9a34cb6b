#ifndef ACCOUNTS_CFOLDERSYNC_H
#define ACCOUNTS_CFOLDERSYNC_H

/// Writes to disk every change of the filesystem that holds `fd` (syncfs(2), which glibc
/// declares only under _GNU_SOURCE and so Swift does not see). Returns 0, or -1 with errno.
int accounts_syncfs(int fd);

#endif
