import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VoteLedger

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() -> String {
    var template = Array("/tmp/vote-serve-test-XXXXXX".utf8CString)
    precondition(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } != nil)
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A clock the test steps (ms since the epoch): windows open and close because the test says so, never
/// because the machine was slow.
final class SteppedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var time: Int64
    init(_ time: Int64) { self.time = time }
    var now: Int64 { lock.withLock { time } }
    func set(_ time: Int64) { lock.withLock { self.time = time } }
}

/// `value` as an ISO 8601 time (ms since the epoch), as the API takes it.
func iso(_ ms: Int64) -> String { Timestamp.format(ms) }

/// A JSON body.
func body(_ object: Any) -> ByteBuffer {
    ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
}

/// A response body as a JSON object.
func object(_ buffer: ByteBuffer?) -> [String: Any] {
    guard let buffer else { return [:] }
    return (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
}

/// A response body as a JSON array.
func array(_ buffer: ByteBuffer?) -> [[String: Any]] {
    guard let buffer else { return [] }
    return (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [[String: Any]] ?? []
}

/// The error code of an error response.
func errorCode(_ buffer: ByteBuffer?) -> String? {
    (object(buffer)["error"] as? [String: Any])?["code"] as? String
}

let jsonHeaders: HTTPFields = [.contentType: "application/json"]

/// Records every token a test issues in $VOTE_SECRETS_LOG, which CI greps the whole test output for: no
/// admin or voting token may ever be printed (as VoteLedgerTests' own log does).
enum SecretsLog {
    static let path =
        ProcessInfo.processInfo.environment["VOTE_SECRETS_LOG"] ?? NSTemporaryDirectory()
        + "voteledger-secrets-used.txt"
    private static let lock = NSLock()

    static func record(_ secrets: [String]) {
        lock.withLock {
            guard
                let handle = FileHandle(forWritingAtPath: path)
                    ?? {
                        _ = FileManager.default.createFile(atPath: path, contents: nil)
                        return FileHandle(forWritingAtPath: path)
                    }()
            else { return }
            handle.seekToEndOfFile()
            handle.write(Data(secrets.map { $0 + "\n" }.joined().utf8))
            try? handle.close()
        }
    }
}

/// A logger for in-process tests: only errors (the access log itself is checked on the real process).
let quietLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .error
    return logger
}()
