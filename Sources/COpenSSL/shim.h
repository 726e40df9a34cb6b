#ifndef ACCOUNTS_COPENSSL_SHIM_H
#define ACCOUNTS_COPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#endif
