#ifndef ACCOUNTS_CUTF8PROC_SHIM_H
#define ACCOUNTS_CUTF8PROC_SHIM_H

// utf8proc's header (libutf8proc-dev, in /usr/include), for types and prototypes only: nothing
// links libutf8proc. AccountsCore opens it with dlopen the first time a name or a password
// beyond ASCII is normalized (UnicodeForms.swift), and calls through a pointer of this type,
// taken from the prototype. In place of Foundation's `precomposedString…Mapping`, which needs
// ICU and its data.
#include <utf8proc.h>

typedef __typeof__(&utf8proc_map) accounts_utf8proc_map_fn;

#endif
