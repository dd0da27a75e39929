// swift-tools-version:6.0
import PackageDescription

/// Settings every target of ours shares (one loop, as swift-nio does): internal imports by default make
/// leaking a C type through a public signature a compile error.
let sharedSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "VoteLedger",
    products: [
        .library(name: "Ledger", targets: ["Ledger"]),
        .library(name: "LedgerCrypto", targets: ["LedgerCrypto"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "LedgerCrypto", dependencies: ["COpenSSL"]),
        .target(name: "Ledger", dependencies: ["LedgerCrypto"]),
        .executableTarget(name: "ledger-tool", dependencies: ["Ledger", "LedgerCrypto"], path: "Tools/ledger-tool"),
        .testTarget(name: "LedgerCryptoTests", dependencies: ["LedgerCrypto"]),
        .testTarget(name: "LedgerTests", dependencies: ["Ledger", "LedgerCrypto"], exclude: ["Vectors"]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSettings
}
