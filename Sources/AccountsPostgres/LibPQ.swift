import CLibPQ
import DynamicLibrary

/// The functions of the system's libpq that accounts calls, opened the first time a PostgreSQL
/// store is named.
///
/// Opened through `DynamicLibrary` (why: there): libpq pulls in some 24 shared libraries
/// (Kerberos, LDAP, GnuTLS…), which a command on an SQLite store must never pay for. The
/// function types come from libpq's header (CLibPQ's shim.h).
struct LibPQ: Sendable {
  /// The library opened, as Debian's libpq5 package installs it.
  static let soname = "libpq.so.5"

  let connect: accounts_PQconnectdbParams_fn
  let status: accounts_PQstatus_fn
  let errorMessage: accounts_PQerrorMessage_fn
  let finish: accounts_PQfinish_fn
  let exec: accounts_PQexec_fn
  let execParams: accounts_PQexecParams_fn
  let resultStatus: accounts_PQresultStatus_fn
  let resultErrorField: accounts_PQresultErrorField_fn
  let resultErrorMessage: accounts_PQresultErrorMessage_fn
  let tupleCount: accounts_PQntuples_fn
  let value: accounts_PQgetvalue_fn
  let length: accounts_PQgetlength_fn
  let isNull: accounts_PQgetisnull_fn
  let clear: accounts_PQclear_fn
  let affectedRows: accounts_PQcmdTuples_fn
  let host: accounts_PQhost_fn
  let port: accounts_PQport_fn
  let setNoticeProcessor: accounts_PQsetNoticeProcessor_fn
  let transactionStatus: accounts_PQtransactionStatus_fn
  let prepare: accounts_PQprepare_fn
  let execPrepared: accounts_PQexecPrepared_fn
  let sendQuery: accounts_PQsendQuery_fn
  let sendQueryParams: accounts_PQsendQueryParams_fn
  let consumeInput: accounts_PQconsumeInput_fn
  let isBusy: accounts_PQisBusy_fn
  let getResult: accounts_PQgetResult_fn
  let socket: accounts_PQsocket_fn

  private static let library = LazyLibrary(sonames: [soname]) {
    library throws(DynamicLibrary.Failure) in try LibPQ(library)
  }

  /// The loaded library; throws when it cannot be opened or lacks a function.
  static func shared() throws(DynamicLibrary.Failure) -> LibPQ { try library.functions() }

  private init(_ library: DynamicLibrary) throws(DynamicLibrary.Failure) {
    connect = try library.function("PQconnectdbParams", as: accounts_PQconnectdbParams_fn.self)
    status = try library.function("PQstatus", as: accounts_PQstatus_fn.self)
    errorMessage = try library.function("PQerrorMessage", as: accounts_PQerrorMessage_fn.self)
    finish = try library.function("PQfinish", as: accounts_PQfinish_fn.self)
    exec = try library.function("PQexec", as: accounts_PQexec_fn.self)
    execParams = try library.function("PQexecParams", as: accounts_PQexecParams_fn.self)
    resultStatus = try library.function("PQresultStatus", as: accounts_PQresultStatus_fn.self)
    resultErrorField = try library.function(
      "PQresultErrorField", as: accounts_PQresultErrorField_fn.self)
    resultErrorMessage = try library.function(
      "PQresultErrorMessage", as: accounts_PQresultErrorMessage_fn.self)
    tupleCount = try library.function("PQntuples", as: accounts_PQntuples_fn.self)
    value = try library.function("PQgetvalue", as: accounts_PQgetvalue_fn.self)
    length = try library.function("PQgetlength", as: accounts_PQgetlength_fn.self)
    isNull = try library.function("PQgetisnull", as: accounts_PQgetisnull_fn.self)
    clear = try library.function("PQclear", as: accounts_PQclear_fn.self)
    affectedRows = try library.function("PQcmdTuples", as: accounts_PQcmdTuples_fn.self)
    host = try library.function("PQhost", as: accounts_PQhost_fn.self)
    port = try library.function("PQport", as: accounts_PQport_fn.self)
    setNoticeProcessor = try library.function(
      "PQsetNoticeProcessor", as: accounts_PQsetNoticeProcessor_fn.self)
    transactionStatus = try library.function(
      "PQtransactionStatus", as: accounts_PQtransactionStatus_fn.self)
    prepare = try library.function("PQprepare", as: accounts_PQprepare_fn.self)
    execPrepared = try library.function("PQexecPrepared", as: accounts_PQexecPrepared_fn.self)
    sendQuery = try library.function("PQsendQuery", as: accounts_PQsendQuery_fn.self)
    sendQueryParams = try library.function(
      "PQsendQueryParams", as: accounts_PQsendQueryParams_fn.self)
    consumeInput = try library.function("PQconsumeInput", as: accounts_PQconsumeInput_fn.self)
    isBusy = try library.function("PQisBusy", as: accounts_PQisBusy_fn.self)
    getResult = try library.function("PQgetResult", as: accounts_PQgetResult_fn.self)
    socket = try library.function("PQsocket", as: accounts_PQsocket_fn.self)
  }
}
