// swift-tools-version:6.1
import PackageDescription

/// The two start-up floors the bench measures `accounts` against (Tests/bench/test_startup.py):
/// programs that do the least `accounts status` must do (read the state's row through libsqlite3
/// and print it), one importing Glibc alone, one FoundationEssentials as well.
///
/// Linked as the release is: these flags are `releaseLinkerSettings` and `releaseSwiftSettings` of
/// the root Package.swift (why each one is there: that file), and the bench checks that the two
/// lists still match before it measures. Offline: no dependencies, only the system's libsqlite3.
let linker = Context.packageDirectory + "/../../../Linker"

let releaseSwiftSettings: [SwiftSetting] = [
  .unsafeFlags(["-static-stdlib"], .when(configuration: .release))
]
let releaseLinkerSettings: [LinkerSetting] = [
  .unsafeFlags(
    [
      "-static-stdlib", "-L", linker,
      "-Xlinker", "--no-export-dynamic",
      "-use-ld=bfd", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    ],
    .when(configuration: .release))
]

let package = Package(
  name: "floors",
  targets: [
    .systemLibrary(name: "CSQLiteFloor"),
    .executableTarget(
      name: "GlibcFloor", dependencies: ["CSQLiteFloor"],
      swiftSettings: releaseSwiftSettings, linkerSettings: releaseLinkerSettings),
    .executableTarget(
      name: "EssentialsFloor", dependencies: ["CSQLiteFloor"],
      swiftSettings: releaseSwiftSettings, linkerSettings: releaseLinkerSettings),
  ]
)
