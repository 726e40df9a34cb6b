// swift-tools-version:6.1
import PackageDescription

/// How the released program is linked, in one place.
///
/// `swift build -c release` (what Scripts/run, Scripts/bench and the tests' timing checks use)
/// gives the fast-starting program with no extra flag. The Swift runtime and FoundationEssentials
/// are linked in statically (a program with the shared Swift libraries takes twice as long to
/// start); the system's libsqlite3 is linked shared, libcrypto, libzxcvbn and libutf8proc
/// opened at first use (through the DynamicLibrary target), so their security updates need no
/// rebuild. No module links Foundation, and so no ICU. The flag goes to the compiler as well as
/// the linker: compiled with it, FoundationEssentials' autolink entries name the static
/// libraries it needs.
let releaseSwiftSettings: [SwiftSetting] = [
  .unsafeFlags(["-static-stdlib"], .when(configuration: .release))
]
/// See `releaseSwiftSettings`. At link time, also:
/// - `-L Linker`: the Swift runtime's C++ library (libstdc++) is linked in statically too, through
///   the linker script `Linker/libstdc++.so` (why and how: in that file). The toolchain's
///   `-static-libstdc++` cannot do it, as the `-lstdc++` comes from the toolchain's own list.
/// - `--no-export-dynamic` undoes the `-export-dynamic` of that list: the static libraries' symbols
///   are hidden anyway (`--exclude-libs ALL`), so it only exported ours and the argument
///   parser's, which nothing looks up, and which the runtime's start-up `dladdr` (finding its own
///   path) scans one by one.
///
/// - `-use-ld=bfd -z pack-relative-relocs`: the 85,000 relative relocations of the binary stored
///   packed (RELR, 16 KB instead of 2 MB of records to read at every start: about 130 page faults
///   fewer). GNU ld does it, gold (the toolchain's default) cannot. The program then needs glibc
///   2.36 or newer where it runs (Debian 12 has it; an older glibc refuses to start it, with a
///   message naming GLIBC_ABI_DT_RELR). It is built where it runs (Scripts/run), so that holds.
///
/// Measured and left out (issue 9): `-z now` (no gain; lazy binding is the default and stays),
/// `-Bsymbolic-functions` (changes nothing in an executable), lld instead of GNU ld (within the
/// noise).
let releaseLinkerSettings: [LinkerSetting] = [
  .unsafeFlags(
    [
      "-static-stdlib", "-L", Context.packageDirectory + "/Linker",
      "-Xlinker", "--no-export-dynamic",
      "-use-ld=bfd", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    ],
    .when(configuration: .release))
]

let package = Package(
  name: "accounts",
  products: [
    .executable(name: "accounts", targets: ["AccountsCLI"]),
    .library(name: "AccountsCore", targets: ["AccountsCore"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
  ],
  targets: [
    // OpenSSL's headers only (from libssl-dev, in /usr/include): libcrypto is not linked but
    // opened at first use (AccountsCrypto's LibCrypto.swift). No `pkgConfig: "libcrypto"`, as
    // SwiftPM would add libcrypto.pc's `-lcrypto` to the link.
    .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
    // libxcrypt's header only (from libcrypt-dev): crypt(3) hashes of imported users are checked
    // through it, opened at first use (AccountsCrypto's CryptHash.swift).
    .systemLibrary(name: "CXcrypt", providers: [.apt(["libcrypt-dev"])]),
    .target(name: "DynamicLibrary"),
    .target(name: "AccountsCrypto", dependencies: ["COpenSSL", "CXcrypt", "DynamicLibrary"]),
    .target(name: "CTerminal"),
    // What a password check run for PAM does first (a clean environment, its own time limit), in
    // C so that the PAM module that runs `accounts pam-auth` can compile the same file.
    .target(name: "CPam"),
    // The table and column names both stores' schemas share (what `store copy` moves).
    .target(name: "AccountsSchema", dependencies: ["AccountsCore"]),
    // libsqlite3's header (from libsqlite3-dev), linked: the SQLite store's one door to it is
    // AccountsStore's small layer (Sources/AccountsStore/SQLite).
    .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
    // syncfs(2) for the user records folders: one flush for a batch of files.
    .target(name: "CFolderSync"),
    .target(
      name: "AccountsStore",
      dependencies: ["AccountsCore", "AccountsSchema", "CSQLite", "CFolderSync"]),
    // zxcvbn's C header only (from libzxcvbn-dev): libzxcvbn is not linked but opened the first
    // time a new password is checked (Zxcvbn's PasswordEstimate.swift), so no `link` in its
    // module map and no pkgConfig.
    .systemLibrary(name: "CZxcvbn", providers: [.apt(["libzxcvbn-dev"])]),
    .target(name: "Zxcvbn", dependencies: ["CZxcvbn", "DynamicLibrary"]),
    // libqrencode's header only (from libqrencode-dev): opened the first time a QR code is shown
    // (QREncoder's QRCode.swift), as zxcvbn is.
    .systemLibrary(name: "CQRencode", providers: [.apt(["libqrencode-dev"])]),
    .target(name: "QREncoder", dependencies: ["CQRencode", "DynamicLibrary"]),
    // utf8proc's header only (libutf8proc-dev): RFC 8265's normalization forms (AccountsCore's
    // UnicodeForms.swift), in place of Foundation's, which need ICU; opened the first time a
    // name or password beyond ASCII is normalized, so no `link` in its module map.
    .systemLibrary(name: "CUTF8Proc", providers: [.apt(["libutf8proc-dev"])]),
    .target(
      name: "AccountsCore",
      dependencies: ["AccountsCrypto", "CUTF8Proc", "DynamicLibrary", "QREncoder", "Zxcvbn"]
    ),
    // libpq's header only (from libpq-dev): libpq and the libraries it needs are opened only when
    // a PostgreSQL store is named (AccountsPostgres's LibPQ.swift), so no `link` in its module
    // map and no pkgConfig: a command on an SQLite store never loads them.
    .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
    .target(
      name: "AccountsPostgres",
      dependencies: [
        "AccountsCore", "AccountsCrypto", "AccountsSchema", "CLibPQ", "DynamicLibrary",
      ]
    ),
    .executableTarget(
      name: "AccountsCLI",
      dependencies: [
        "AccountsCore",
        "AccountsCrypto",
        "AccountsPostgres",
        "AccountsStore",
        "CPam",
        "CTerminal",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: releaseSwiftSettings,
      linkerSettings: releaseLinkerSettings
    ),
    // What the test targets share: a scripted console and shorthands over the repository.
    .target(
      name: "AccountsTestSupport",
      dependencies: ["AccountsCore", "AccountsPostgres", "AccountsStore"],
      path: "Tests/AccountsTestSupport"
    ),
    .testTarget(
      name: "AccountsCLITests",
      dependencies: [
        "AccountsCLI", "AccountsCore", "AccountsStore", "AccountsTestSupport", "CPam",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    .testTarget(
      name: "AccountsCryptoTests", dependencies: ["AccountsCrypto", "AccountsTestSupport"]),
    .testTarget(name: "DynamicLibraryTests", dependencies: ["DynamicLibrary"]),
    .testTarget(name: "QREncoderTests", dependencies: ["AccountsTestSupport", "QREncoder"]),
    .testTarget(
      name: "AccountsStoreTests",
      dependencies: [
        "AccountsCore", "AccountsCrypto", "AccountsPostgres", "AccountsSchema", "AccountsStore",
        "AccountsTestSupport", "CSQLite",
      ]
    ),
    .testTarget(
      name: "AccountsCoreTests",
      dependencies: [
        "AccountsCore", "AccountsCrypto", "AccountsStore", "AccountsTestSupport",
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
