import Synchronization
import Testing

@testable import DynamicLibrary

/// The one lazy loader every wrapper opens its library through.
@Suite("Lazy library")
struct LazyLibraryTests {
  typealias Length = @convention(c) (UnsafePointer<CChar>?) -> Int

  /// Nothing is opened until the functions are asked for, and then once, whatever the threads.
  @Test func opensOnceOnFirstUse() async throws {
    let opened = Atomic<Int>(0)
    let library = LazyLibrary(sonames: ["libc.so.6"]) {
      library throws(DynamicLibrary.Failure) in
      opened.add(1, ordering: .relaxed)
      return try library.function("strlen", as: Length.self)
    }
    #expect(opened.load(ordering: .relaxed) == 0)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<8 { group.addTask { _ = try? library.functions() } }
    }
    let strlen = try library.functions()
    #expect(strlen("four") == 4)
    #expect(opened.load(ordering: .relaxed) == 1)
  }

  /// A library that cannot be opened fails with its soname and the loader's reason, and the
  /// failure is kept: the later calls report it without trying again.
  @Test func keepsTheFailure() {
    let tries = Atomic<Int>(0)
    let library = LazyLibrary(sonames: ["libnot-a-library.so.0"]) {
      _ throws(DynamicLibrary.Failure) in tries.add(1, ordering: .relaxed)
    }
    for _ in 0..<2 {
      #expect {
        try library.functions()
      } throws: { error in
        let failure = error as? DynamicLibrary.Failure
        return failure?.library == "libnot-a-library.so.0"
          && failure?.reason.contains("libnot-a-library.so.0") == true
      }
    }
    #expect(tries.load(ordering: .relaxed) == 0)
  }

  /// The first soname that opens is used; a missing function names itself.
  @Test func firstSonameThatOpensAndMissingFunction() {
    #expect(throws: DynamicLibrary.Failure(library: "libc.so.6", reason: "it has no function nope"))
    {
      let library = try DynamicLibrary(sonames: ["libnot-a-library.so.0", "libc.so.6"])
      #expect(library.soname == "libc.so.6")
      _ = try library.function("nope", as: Length.self)
    }
  }
}
