/// Failures of the cryptographic primitives; rare, and never caused by user input alone.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
  /// OpenSSL reported a failure in the named operation.
  case openSSLFailure(String)
  /// A parameter is outside what the primitive accepts.
  case invalidParameter(String)

  public var description: String {
    switch self {
    case .openSSLFailure(let operation):
      return "The system's OpenSSL library failed in \(operation)."
    case .invalidParameter(let what):
      return "Invalid cryptographic parameter: \(what)."
    }
  }
}
