#ifndef ACCOUNTS_CUTF8PROC_SHIM_H
#define ACCOUNTS_CUTF8PROC_SHIM_H

// utf8proc's header (libutf8proc-dev, in /usr/include): Unicode normalization (NFC, NFKC) for
// RFC 8265's forms of user names and passwords, in place of Foundation's
// `precomposedString…Mapping`, which needs ICU and its data. Linked like libsqlite3 (the module
// map's `link`): normalizing never fails for want of a library.
#include <utf8proc.h>

#endif
