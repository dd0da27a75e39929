// swift-tools-version:6.0
import Foundation
import PackageDescription

/// `VOTE_WITHOUT_SERVER=1` leaves out `vote-serve` (which `vote serve` runs) and everything only it needs
/// (Hummingbird, SwiftNIO, and swift-nio-ssl's BoringSSL through the HTTP test client), so the core builds in
/// minutes instead of a quarter of an hour. CI's sanitizer passes use it; every other build has the server.
/// The core keeps swift-crypto (with its own BoringSSL) for `BlindRSA`: replay checks anonymous ballots'
/// signatures, so `vote verify` needs it.
let withServer = ProcessInfo.processInfo.environment["VOTE_WITHOUT_SERVER"] == nil

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
        .library(name: "FileStore", targets: ["FileStore"]),
        .library(name: "LedgerCrypto", targets: ["LedgerCrypto"]),
        .library(name: "Election", targets: ["Election"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        /// The primitives, over OpenSSL (SHA-256, Ed25519, AES-GCM, RSA key checks) and the CPU (CRC-32C, the
        /// checksum of the store's frames and of the derived indexes' headers).
        .target(name: "LedgerCrypto", dependencies: ["COpenSSL", "CCRC32C"]),
        /// The CPU's CRC-32C instruction (SSE 4.2), the only C besides the OpenSSL shim.
        .target(name: "CCRC32C"),
        /// The ledger format: blocks and their byte codecs, the Merkle tree and proofs, checkpoints, `BlockBuilder`,
        /// the store protocols (`BlockAppender`, `BlockSource`), the chain verifier and the memory store. No file
        /// I/O: what depends on it alone (`Election`) stays pure by the compiler's check.
        .target(name: "Ledger", dependencies: ["LedgerCrypto"]),
        /// The file store: segments, frames, recovery, the derived indexes, locking, the file reader
        /// (`FileBlockSource`), the file writer (`FileBlockStore`), key directories and public copies: everything that
        /// opens, maps or syncs a file.
        .target(name: "FileStore", dependencies: ["Ledger", "LedgerCrypto"]),
        /// RSA blind signatures (RFC 9474) for anonymous ballots, over swift-crypto's `CryptoExtras`: the one
        /// place the project uses swift-crypto; every other primitive stays on OpenSSL in `LedgerCrypto`.
        .target(
            name: "BlindRSA",
            dependencies: [
                "LedgerCrypto", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        /// A place's ballot: its questions (choose k of n, yes/no with a threshold and quorum, ranked), whether an
        /// answer is valid, and every count (Scottish STV, Schulze, the draw by lot). Pure, as `Election` is.
        .target(name: "Ballots", dependencies: ["Ledger", "LedgerCrypto"]),
        .target(name: "Election", dependencies: ["Ballots", "Ledger", "LedgerCrypto", "BlindRSA"]),
        /// `LedgerWriter` and `ElectionLedger` record what an operator watches (durable blocks, their commit time,
        /// blocks taken in from other writers) through swift-metrics' API only; `vote-serve` bootstraps Prometheus.
        .target(
            name: "VoteLedger",
            dependencies: [
                "Ballots", "Election", "Ledger", "LedgerCrypto", "BlindRSA",
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        /// What the command line's `--json` prints and the API answers, in one shape for both (keys stable,
        /// snake_case): places, tallies, receipts, events (and each event in a sentence, `EventDescription`), and a
        /// place's questions in the form an officer writes them.
        .target(name: "JSONViews", dependencies: ["VoteLedger", "Ballots", "Election", "Ledger", "LedgerCrypto"]),
        /// The file store as the service opens it (`FileDriver`, `.file(path:keys:)`), and every store's secrets
        /// in a key directory (`FileKeyStore`, `LedgerKeys`, `ExternalStoreDriver` for PostgreSQL); derived state
        /// in files (`FileDerivedStore`), and the marker a running `vote serve` keeps in its ledger directory.
        .target(name: "FileDriver", dependencies: ["VoteLedger", "OutputFiles", "FileStore", "Ledger", "LedgerCrypto"]),
        /// Files written for a person, by the command line or a server: created new (never over anything), 0600,
        /// synced with their directory; receipts among them (`Receipts`).
        .target(name: "OutputFiles", dependencies: ["VoteLedger", "Ledger"]),
        /// A C2SP tlog-witness (its key, its durable state, what it cosigns and refuses) and the client a log asks
        /// witnesses with (HTTP/1.1, TLS through OpenSSL): `vote witness serve`, and the cosigning of `vote serve`,
        /// `vote cast` and `vote head`.
        .target(
            name: "TlogWitness",
            dependencies: ["VoteLedger", "OutputFiles", "BlockingHTTP", "Ledger", "FileStore", "LedgerCrypto"]),
        /// HTTP/1.1 waiting in `poll`, over OpenSSL's TLS, with no event loop: a kept connection per witness (one
        /// TLS handshake for every cosigning round), and one request on a connection of its own for `vote ballot`.
        .target(name: "BlockingHTTP", dependencies: ["VoteLedger", "COpenSSL"]),
        /// Mail to members: the officer's sealed contact book and delivery log in the key directory, the voting
        /// links' messages (plain text and HTML, English and Korean) and printed letters sharing their words, and a
        /// small SMTP client (STARTTLS or TLS, AUTH PLAIN) over `BlockingHTTP`'s connection, and whom a mailing reaches:
        /// `vote voter mail`, `vote voter letters` and the console's desk in `vote serve`.
        .target(
            name: "Mail", dependencies: ["VoteLedger", "BlockingHTTP", "Ballots", "Election", "Ledger", "LedgerCrypto"]),
        /// What `vote` and `vote-serve` share: the options every command takes (the relay's too, `MailOptions`),
        /// standard output, and how a failure becomes one line and an exit code; and the CLI's own presentation
        /// (voter letters, QR codes).
        .target(
            name: "VoteCommandLine",
            dependencies: [
                "VoteLedger", "FileDriver", "Election", "Ledger", "FileStore", "Mail",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        /// `vote serve` runs `vote-serve`, the server's program beside `vote`. With the server, `vote` depends on
        /// it (below), so the README's first command, `swift run vote demo`, builds both: one build serves. That
        /// links the server's libraries into `vote` as well (76 MB instead of 10 MB in release; `vote status`
        /// 14.3 ms instead of 12.8 ms, median of 120 alternating runs, 2026-11-26), unused by it.
        .executableTarget(
            name: "vote",
            dependencies: [
                "Ballots", "VoteCommandLine", "VoteLedger", "JSONViews", "OutputFiles", "TlogWitness", "BlockingHTTP",
                "Mail", "Election", "Ledger", "FileStore", "FileDriver", "LedgerCrypto", "BlindRSA",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "ledger-tool", dependencies: ["Ledger", "FileStore", "LedgerCrypto"], path: "Tools/ledger-tool"),
        /// Scottish STV over a million random rankings, beside belenios-tool on the same ballots (`Tools/bench-count`).
        .executableTarget(
            name: "count-bench", dependencies: ["Ballots", "Election", "Ledger", "FileStore", "LedgerCrypto"],
            path: "Tools/count-bench"),
        /// Blind signatures per second with a fresh 3072-bit place key (`Tools/bench-blind` builds and runs it).
        .executableTarget(name: "blind-bench", dependencies: ["BlindRSA"], path: "Tools/blind-bench"),
        /// A ledger of anonymous votes, or of token votes as their baseline, for `Tools/bench-anonymous`.
        .executableTarget(
            name: "anonymous-ledger",
            dependencies: [
                "BlindRSA", "Ledger", "FileStore", "LedgerCrypto", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            path: "Tools/anonymous-ledger"),
        /// What every test target shares: running programs and finding the built ones, scratch directories, the
        /// seeded generator.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        /// The store contract's checks and fixtures, written once and run by every store's test target (the file
        /// and memory stores in `LedgerTests`, PostgreSQL in `PostgresStoreTests`).
        .target(
            name: "LedgerTestSupport", dependencies: ["Ledger", "LedgerCrypto", "TestSupport"],
            path: "Tests/LedgerTestSupport"),
        .testTarget(name: "LedgerCryptoTests", dependencies: ["LedgerCrypto", "TestSupport"]),
        .testTarget(
            name: "BlindRSATests",
            dependencies: [
                "BlindRSA", "LedgerCrypto", "TestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            exclude: ["Vectors"]
        ),
        .testTarget(
            name: "LedgerTests",
            dependencies: ["Ledger", "FileStore", "LedgerCrypto", "LedgerTestSupport", "TestSupport"],
            exclude: ["Vectors"]),
        .testTarget(name: "BallotsTests", dependencies: ["Ballots", "Ledger", "LedgerCrypto", "TestSupport"]),
        .testTarget(
            name: "ElectionTests",
            dependencies: ["Election", "Ballots", "Ledger", "LedgerCrypto", "BlindRSA", "TestSupport"]),
        .testTarget(
            name: "VoteLedgerTests",
            dependencies: [
                "Ballots", "VoteLedger", "JSONViews", "VoteCommandLine", "TlogWitness", "BlockingHTTP", "Mail",
                "Election", "Ledger", "FileStore", "FileDriver", "LedgerCrypto", "BlindRSA", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ]
)

if withServer {
    package.dependencies += [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ]
    // `swift build --product vote` (and so `swift run vote demo`) builds `vote-serve` beside it: one build serves.
    // (A target dependency on an executable builds it; the executable's `main` is not linked in.)
    package.targets.first { $0.name == "vote" }!.dependencies.append("vote-serve")
    // With the server, every command also opens ledgers in PostgreSQL (`--store`, `PostgresOpener`); the core's
    // `vote` is built without postgres-nio and refuses a database URL in one line.
    let commandLine = package.targets.first { $0.name == "VoteCommandLine" }!
    commandLine.dependencies += [
        "PostgresStore", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    ]
    commandLine.swiftSettings = [.define("VOTE_POSTGRES")]
    package.targets += [
        /// The ledger over HTTP (issue 13): routes, request and response types, error-to-status mapping and
        /// `buildApplication`, which `vote serve` and the tests both call.
        .target(
            name: "VoteServer",
            dependencies: [
                "Ballots", "VoteLedger", "JSONViews", "TlogWitness", "Election", "Ledger", "LedgerCrypto", "Mail",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The web app (issue 14) and the OpenAPI document, copied beside the binary as the target's resource
            // bundle and read into memory once at start: no build step, and the files stay plain HTML, CSS,
            // JavaScript and JSON.
            resources: [.copy("Web"), .copy("openapi.json")]
        ),
        .executableTarget(
            name: "vote-serve",
            dependencies: [
                "VoteServer", "VoteCommandLine", "VoteLedger", "OutputFiles", "FileDriver", "TlogWitness", "Ledger",
                "FileStore", "Mail",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        /// The server a team would build instead of `vote serve` on PostgreSQL (Hummingbird and postgres-nio, one
        /// transaction per vote), which `Tools/bench-http` runs under the same load.
        .executableTarget(
            name: "pg-peer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tools/pg-peer"),
        /// The cheapest Hummingbird server, which `Tools/bench-http` runs under the same load as `vote serve`.
        .executableTarget(
            name: "hb-floor", dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: "Tools/hb-floor"),
        /// The PostgreSQL store (issue 25): the second real store, several writers on one chain, over
        /// postgres-nio. With the server only: the core builds without SwiftNIO.
        .target(
            name: "PostgresStore",
            dependencies: [
                "Ledger", "LedgerCrypto", .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: [
                "PostgresStore", "Ledger", "LedgerCrypto", "LedgerTestSupport", "TestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(
            name: "VoteServerTests",
            dependencies: [
                "VoteServer", "VoteLedger", "JSONViews", "FileDriver", "TlogWitness", "Election", "Ledger", "FileStore",
                "LedgerCrypto", "BlindRSA", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
}

for target in package.targets where target.type != .system && target.name != "CCRC32C" {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSettings
}
