#ifndef ACCOUNTS_CLIBPQ_SHIM_H
#define ACCOUNTS_CLIBPQ_SHIM_H

// libpq's header (libpq-dev, in /usr/include/postgresql), for types, constants and prototypes
// only: nothing links libpq. It and the 24 libraries it needs (Kerberos, LDAP, GnuTLS…) are
// opened with dlopen only when a PostgreSQL store is named (AccountsPostgres's LibPQ.swift),
// and called through pointers of these types, taken from the prototypes.
#include <postgresql/libpq-fe.h>

typedef __typeof__(&PQconnectdbParams) accounts_PQconnectdbParams_fn;
typedef __typeof__(&PQstatus) accounts_PQstatus_fn;
typedef __typeof__(&PQerrorMessage) accounts_PQerrorMessage_fn;
typedef __typeof__(&PQfinish) accounts_PQfinish_fn;
typedef __typeof__(&PQexec) accounts_PQexec_fn;
typedef __typeof__(&PQexecParams) accounts_PQexecParams_fn;
typedef __typeof__(&PQresultStatus) accounts_PQresultStatus_fn;
typedef __typeof__(&PQresultErrorField) accounts_PQresultErrorField_fn;
typedef __typeof__(&PQresultErrorMessage) accounts_PQresultErrorMessage_fn;
typedef __typeof__(&PQntuples) accounts_PQntuples_fn;
typedef __typeof__(&PQgetvalue) accounts_PQgetvalue_fn;
typedef __typeof__(&PQgetlength) accounts_PQgetlength_fn;
typedef __typeof__(&PQgetisnull) accounts_PQgetisnull_fn;
typedef __typeof__(&PQclear) accounts_PQclear_fn;
typedef __typeof__(&PQcmdTuples) accounts_PQcmdTuples_fn;
typedef __typeof__(&PQhost) accounts_PQhost_fn;
typedef __typeof__(&PQport) accounts_PQport_fn;
typedef __typeof__(&PQdb) accounts_PQdb_fn;
typedef __typeof__(&PQuser) accounts_PQuser_fn;
typedef __typeof__(&PQsetNoticeProcessor) accounts_PQsetNoticeProcessor_fn;
typedef __typeof__(&PQtransactionStatus) accounts_PQtransactionStatus_fn;
typedef __typeof__(&PQprepare) accounts_PQprepare_fn;
typedef __typeof__(&PQexecPrepared) accounts_PQexecPrepared_fn;
typedef __typeof__(&PQsendQuery) accounts_PQsendQuery_fn;
typedef __typeof__(&PQsendQueryParams) accounts_PQsendQueryParams_fn;
typedef __typeof__(&PQconsumeInput) accounts_PQconsumeInput_fn;
typedef __typeof__(&PQisBusy) accounts_PQisBusy_fn;
typedef __typeof__(&PQgetResult) accounts_PQgetResult_fn;
typedef __typeof__(&PQsocket) accounts_PQsocket_fn;

#endif
