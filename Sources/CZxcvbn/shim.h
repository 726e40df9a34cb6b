#ifndef ACCOUNTS_CZXCVBN_SHIM_H
#define ACCOUNTS_CZXCVBN_SHIM_H

// The C port of zxcvbn's header (libzxcvbn-dev, in /usr/include), for types and prototypes only:
// nothing links libzxcvbn. Zxcvbn opens it with dlopen the first time a new password is
// checked (PasswordEstimate.swift), and calls through pointers of these types, taken from the
// prototypes, so a changed prototype fails to compile instead of calling with the wrong
// arguments. Debian builds it with the dictionaries compiled in (no USE_DICT_FILE), so
// ZxcvbnInit is a macro that does nothing and is not needed.
#include <zxcvbn.h>

typedef __typeof__(&ZxcvbnMatch) accounts_ZxcvbnMatch_fn;
typedef __typeof__(&ZxcvbnFreeInfo) accounts_ZxcvbnFreeInfo_fn;

#endif
