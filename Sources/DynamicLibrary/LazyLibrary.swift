import Synchronization

/// A system library's functions, opened and looked up the first time they are asked for.
///
/// The one way the wrappers open their library: each keeps one in a `static let` with the
/// function that looks its functions up, and asks `functions()` where it needs them. The first
/// call opens the library (the first of `sonames` that opens) and looks the functions up, under a
/// lock, so two threads never open it twice; the outcome, the functions or the failure, is kept,
/// and every later call returns it without trying again.
public final class LazyLibrary<Functions: Sendable>: Sendable {
  /// What resolving gives: the library's functions, or why they cannot be had.
  public typealias Outcome = Result<Functions, DynamicLibrary.Failure>

  private let sonames: [String]
  private let resolve: @Sendable (DynamicLibrary) throws(DynamicLibrary.Failure) -> Functions
  private let outcome = Mutex<Outcome?>(nil)

  /// A library opened by the first of `sonames` that opens, its functions looked up by `resolve`;
  /// nothing is opened until `functions()` is first called.
  public init(
    sonames: [String],
    resolve: @escaping @Sendable (DynamicLibrary) throws(DynamicLibrary.Failure) -> Functions
  ) {
    self.sonames = sonames
    self.resolve = resolve
  }

  /// The functions, the library opened on the first call; throws the first call's failure.
  public func functions() throws(DynamicLibrary.Failure) -> Functions {
    try outcome.withLock { outcome -> Outcome in
      if let outcome { return outcome }
      let opened = Outcome { () throws(DynamicLibrary.Failure) in
        try resolve(DynamicLibrary(sonames: sonames))
      }
      outcome = opened
      return opened
    }.get()
  }
}
