#define _GNU_SOURCE
#include <unistd.h>

#include "CFolderSync.h"

int accounts_syncfs(int fd) { return syncfs(fd); }
