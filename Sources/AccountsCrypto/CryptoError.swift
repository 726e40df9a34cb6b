/// Failures of the cryptographic primitives; rare, and never caused by user input alone.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
  /// OpenSSL reported a failure in the named operation.
  case openSSLFailure(String)
  /// OpenSSL's libcrypto could not be opened when first needed, or lacks a function accounts calls.
  case openSSLUnavailable(library: String, reason: String)
  /// Another system library the primitives use (libxcrypt) could not be opened.
  case libraryUnavailable(library: String, reason: String)
  /// A parameter is outside what the primitive accepts.
  case invalidParameter(String)
  /// Sealed data did not open: the key is not the one it was sealed with, or the data or its
  /// tag was changed.
  case authenticationFailed

  public var description: String {
    switch self {
    case .openSSLFailure(let operation):
      return "The system's OpenSSL library failed in \(operation)."
    case .openSSLUnavailable(let library, let reason):
      return
        "OpenSSL's \(library) is needed for passwords but could not be loaded (\(reason)); "
        + "install OpenSSL 3 (the libssl3 package on Debian and Ubuntu) and try again."
    case .libraryUnavailable(let library, let reason):
      return
        "The system's \(library) is needed to check this password hash but could not be loaded "
        + "(\(reason)); install it (the libcrypt1 package on Debian and Ubuntu) and try again."
    case .invalidParameter(let what):
      return "Invalid cryptographic parameter: \(what)."
    case .authenticationFailed:
      return "Sealed data could not be opened: wrong key, or the data was changed."
    }
  }
}
