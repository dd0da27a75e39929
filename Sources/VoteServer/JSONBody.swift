import Foundation
import Hummingbird
import JSONViews
import VoteLedger

/// JSON in and out: bodies are read up to a cap (64 KiB unless a route says otherwise) and decoded with
/// every failure a 400 or 413 that says what was wrong, never a 500; responses use the CLI's keys.
enum JSONBody {
    /// The largest request body a route reads unless it allows more (the admin CSV upload does).
    static let defaultLimit = 64 * 1024

    /// The body of `request`, at most `limit` bytes (413 beyond).
    static func bytes(_ request: Request, limit: Int = defaultLimit) async throws -> ByteBuffer {
        do { return try await request.body.collect(upTo: limit) } catch let error as any HTTPResponseError
            where error.status == .contentTooLarge
        {
            throw APIError(.contentTooLarge, "body_too_large", "the request body is larger than \(limit) bytes")
        }
    }

    /// Requires `Content-Type: application/json` (415 otherwise).
    static func requireJSON(_ request: Request) throws {
        guard let type = request.headers[.contentType],
            type == "application/json" || mediaType(type) == "application/json"
        else {
            throw APIError(
                .unsupportedMediaType, "unsupported_media_type", "send the body as Content-Type: application/json")
        }
    }

    /// The media type of a Content-Type value, lower-cased, without parameters.
    static func mediaType(_ value: String) -> String {
        String(value.split(separator: ";", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Decodes a JSON request body as `T`.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        try requireJSON(request)
        return try decode(T.self, from: try await bytes(request))
    }

    /// Decodes a JSON request body as `T`, by `flat` if the body is a `FlatJSONObject` (as strict as `StrictJSON`)
    /// and `flat` makes a `T` of it, else as `decode(_:from:)` does: a route that is sent one small shape (a
    /// vote) reads it without Foundation, and any other body is checked and decoded as every other is.
    static func decode<T: Decodable>(
        _ type: T.Type, from request: Request, flat: (FlatJSONObject) -> T?
    ) async throws -> T {
        try requireJSON(request)
        let buffer = try await bytes(request)
        if let object = FlatJSONObject(buffer), let value = flat(object) { return value }
        return try decode(T.self, from: buffer)
    }

    /// Decodes `buffer` as `T` once `StrictJSON` has found nothing JSONDecoder would read loosely.
    private static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        try buffer.withUnsafeReadableBytes { try StrictJSON.check($0) }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw APIError(.badRequest, "malformed_json", describe(error))
        } catch let refusal as QuestionsRefusal {
            throw APIError(refusal)
        } catch let error as APIError {
            throw error  // a shape's own refusal, already said
        } catch {
            throw APIError(.badRequest, "malformed_json", "the body is not valid JSON")
        }
    }

    /// What is wrong with a body, naming the field but never echoing its value (it may be a token).
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "the body" : "field \"\(keys.joined(separator: "."))\""
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = context.codingPath.isEmpty ? "" : " in \(path(context))"
            return "field \"\(key.stringValue)\" is missing\(parent)"
        case .typeMismatch(let type, let context): return "\(path(context)) must be \(typeName(type))"
        case .valueNotFound(let type, let context): return "\(path(context)) must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "the body is not valid JSON" : "\(path(context)) is out of range or malformed"
        @unknown default: return "the body is not valid JSON"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is UInt32.Type, is UInt64.Type, is Int.Type: "a non-negative integer"
        case is Bool.Type: "true or false"
        default: "an object of the documented shape"
        }
    }

    /// `value` as a JSON response (sorted keys, as the CLI prints them).
    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Text as a response of `type`.
    static func text(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
