#ifndef ACCOUNTS_CQRENCODE_SHIM_H
#define ACCOUNTS_CQRENCODE_SHIM_H

// libqrencode's header (libqrencode-dev, in /usr/include), for types and prototypes only: nothing
// links libqrencode. QREncoder opens it with dlopen the first time a QR code is shown
// (QRCode.swift), and calls through pointers of these types, taken from the prototypes, so a
// changed prototype fails to compile instead of calling with the wrong arguments.
#include <qrencode.h>

typedef __typeof__(&QRcode_encodeString) accounts_QRcode_encodeString_fn;
typedef __typeof__(&QRcode_free) accounts_QRcode_free_fn;

#endif
