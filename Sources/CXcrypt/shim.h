#ifndef ACCOUNTS_CXCRYPT_SHIM_H
#define ACCOUNTS_CXCRYPT_SHIM_H

// libxcrypt's header (libcrypt-dev, in /usr/include), for types and prototypes only: nothing links
// libcrypt. AccountsCrypto opens it with dlopen the first time a crypt(3) hash is checked
// (CryptHash.swift), and calls through a pointer of this type, taken from the prototype.
#include <crypt.h>

typedef __typeof__(&crypt_rn) accounts_crypt_rn_fn;

#endif
