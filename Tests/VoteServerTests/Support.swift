import Foundation
import Hummingbird
import HummingbirdTesting
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
