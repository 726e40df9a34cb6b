#ifndef ACCOUNTS_COPENSSL_SHIM_H
#define ACCOUNTS_COPENSSL_SHIM_H

// OpenSSL's headers, for types and prototypes only: nothing links libcrypto. AccountsCrypto opens
// it with dlopen the first time a hash or random number is needed (LibCrypto.swift), and calls
// through pointers of these types, taken from the prototypes, so a changed prototype fails to
// compile instead of calling with the wrong arguments.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

typedef __typeof__(&EVP_Digest) accounts_EVP_Digest_fn;
typedef __typeof__(&EVP_sha256) accounts_EVP_sha256_fn;
typedef __typeof__(&PKCS5_PBKDF2_HMAC) accounts_PKCS5_PBKDF2_HMAC_fn;
typedef __typeof__(&RAND_bytes) accounts_RAND_bytes_fn;
typedef __typeof__(&CRYPTO_memcmp) accounts_CRYPTO_memcmp_fn;
typedef __typeof__(&HMAC) accounts_HMAC_fn;
typedef __typeof__(&EVP_sha1) accounts_EVP_sha1_fn;
typedef __typeof__(&EVP_aes_256_gcm) accounts_EVP_aes_256_gcm_fn;
typedef __typeof__(&EVP_CIPHER_CTX_new) accounts_EVP_CIPHER_CTX_new_fn;
typedef __typeof__(&EVP_CIPHER_CTX_free) accounts_EVP_CIPHER_CTX_free_fn;
typedef __typeof__(&EVP_CIPHER_CTX_ctrl) accounts_EVP_CIPHER_CTX_ctrl_fn;
typedef __typeof__(&EVP_CipherInit_ex) accounts_EVP_CipherInit_ex_fn;
typedef __typeof__(&EVP_CipherUpdate) accounts_EVP_CipherUpdate_fn;
typedef __typeof__(&EVP_CipherFinal_ex) accounts_EVP_CipherFinal_ex_fn;

#endif
