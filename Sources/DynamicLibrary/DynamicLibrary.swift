#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A system library opened with `dlopen` when first needed, and the functions looked up in it.
///
/// Written by hand because nothing else gives this: a library linked in the usual way is opened
/// and its symbols bound before `main` in every run, also for the commands that never use it
/// (`status`, `log`, `--version`); no package or linker flag defers a whole library, and `dlopen`
/// is the mechanism. The library stays the system's shared one (its security updates need no
/// rebuild), found by its soname (the name without a version comes only with the -dev package).
/// Wrappers do not open one themselves but through `LazyLibrary`, which opens it once, on first
/// use, thread-safely.
public struct DynamicLibrary: @unchecked Sendable {
  /// Why a library cannot be used: its soname and the loader's reason.
  public struct Failure: Error, Equatable, Sendable {
    /// The soname asked for.
    public let library: String
    /// What the loader said, or which function is missing.
    public let reason: String

    /// Why `library` cannot be used: `reason`.
    public init(library: String, reason: String) {
      self.library = library
      self.reason = reason
    }
  }

  /// The soname it was opened by.
  public let soname: String
  // Never closed: the functions are used until the process ends. Only read after `init`, so
  // sharing it between threads is safe.
  private let handle: UnsafeMutableRawPointer

  /// Opens `soname` (`RTLD_NOW | RTLD_LOCAL`: every function bound now, none shown to others).
  public init(soname: String) throws(Failure) {
    try self.init(sonames: [soname])
  }

  /// Opens the first of `sonames` that opens, as `init(soname:)` does; when none does, the
  /// failure names the first (the one preferred) and why it did not open.
  public init(sonames: [String]) throws(Failure) {
    var first: Failure?
    for soname in sonames {
      if let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) {
        self.soname = soname
        self.handle = handle
        return
      }
      let failure = Failure(library: soname, reason: Self.lastError())
      first = first ?? failure
    }
    throw first ?? Failure(library: "", reason: "no library was named")
  }

  /// The function `name`, typed as `type` (the C function pointer type made from its header's
  /// prototype, so a changed prototype fails to compile).
  public func function<Function>(_ name: String, as type: Function.Type) throws(Failure)
    -> Function
  {
    guard let address = dlsym(handle, name) else {
      throw Failure(library: soname, reason: "it has no function \(name)")
    }
    return unsafeBitCast(address, to: type)
  }

  private static func lastError() -> String {
    guard let message = dlerror() else { return "no reason given" }
    return String(cString: message)
  }
}
