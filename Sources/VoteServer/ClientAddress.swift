import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import NIOTLS

// Who a request comes from: the peer's IP address, or, when the peer is a proxy the operator trusts, the
// address that proxy says it forwarded for. Failed token attempts are counted under it; connections are
// capped per peer address.

// MARK: - Addresses

/// An IP address as its bytes: 4 for IPv4 (an IPv4-mapped IPv6 address, `::ffff:a.b.c.d`, included),
/// 16 for IPv6.
struct IPAddress: Hashable, Sendable {
    let bytes: [UInt8]

    /// The address of a socket peer; nil for a Unix socket.
    init?(_ address: SocketAddress) {
        switch address {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            bytes = IPAddress.unmapped(withUnsafeBytes(of: &raw) { Array($0) })
        default: return nil
        }
    }

    /// An address as text (`192.0.2.1`, `2001:db8::1`); nil if it is not one.
    init?(_ text: some StringProtocol) {
        let text = String(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = IPAddress.unmapped(withUnsafeBytes(of: &v6) { Array($0) })
    }

    /// An IPv6 address's bytes, or the IPv4 address's if it is one mapped into IPv6.
    private static func unmapped(_ v6: [UInt8]) -> [UInt8] {
        let mapped = v6[0..<10].allSatisfy { $0 == 0 } && v6[10] == 0xFF && v6[11] == 0xFF
        return mapped ? Array(v6[12...]) : v6
    }

    /// The key a client is counted under: an IPv4 address as itself, an IPv6 address by its /64 (which one
    /// host can fill with addresses).
    var key: String {
        if bytes.count == 4 { return bytes.map { String($0) }.joined(separator: ".") }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":") + "::/64"
    }
}

/// A block of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`; a bare address is itself alone):
/// what `--trusted-proxy` takes.
public struct AddressRange: Sendable, CustomStringConvertible {
    let network: IPAddress
    let prefix: Int
    public let description: String

    /// Parses `text`; nil if it is not an address with an optional `/prefix` within the address's length.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let network = IPAddress(parts[0]) else { return nil }
        let bits = network.bytes.count * 8
        if parts.count == 2 {
            guard parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let prefix = Int(parts[1]), prefix <= bits
            else {
                return nil
            }
            self.prefix = prefix
        } else {
            prefix = bits
        }
        self.network = network
        description = text
    }

    /// Whether `address` is in the block.
    func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == network.bytes.count else { return false }
        for bit in stride(from: 0, to: prefix, by: 8) {
            let mask: UInt8 = prefix - bit >= 8 ? 0xFF : ~(0xFF >> UInt8(prefix - bit))
            if address.bytes[bit / 8] & mask != network.bytes[bit / 8] & mask { return false }
        }
        return true
    }
}

// MARK: - The client of a request

/// Works out a request's client from its peer address and, only when the peer is a trusted proxy, its
/// `X-Forwarded-For` header: read from the right, the first address that is not a trusted proxy is the
/// client (each proxy appends the address it received from, so only the right-most entries are written
/// by proxies the operator trusts; anything to their left may be made up by the client).
struct ClientResolver: Sendable {
    let trustedProxies: [AddressRange]

    func isTrusted(_ address: IPAddress) -> Bool { trustedProxies.contains { $0.contains(address) } }

    /// The key of the client of `request` (see `IPAddress.key`); "local" without a socket (in-process tests).
    func key(_ request: Request, peer: SocketAddress?) -> String {
        guard let peer = peer.flatMap(IPAddress.init) else { return "local" }
        guard !trustedProxies.isEmpty, isTrusted(peer) else { return peer.key }
        var client = peer
        let forwarded = request.headers[values: .xForwardedFor].flatMap { $0.split(separator: ",") }
        for entry in forwarded.reversed() {
            // An entry that is not an address is where the chain of proxies we can believe ends.
            guard let address = IPAddress(entry.trimmingCharacters(in: .whitespaces)) else { break }
            client = address
            if !isTrusted(address) { break }
        }
        return client.key
    }
}

extension HTTPFields.Element.Name {
    static let xForwardedFor = HTTPFields.Element.Name("X-Forwarded-For")!
}

// MARK: - Connections per address

/// Open connections per peer address (an IPv6 peer by its /64, as `IPAddress.key`), shared by every
/// connection's `AdmissionHandler`: one address (a client opening connections and trickling bytes into
/// them, or just holding them) cannot take every connection the server serves at once. Trusted proxies are
/// not capped (they carry everyone's requests).
final class ConnectionCounter: @unchecked Sendable {
    private let cap: Int
    private let clients: ClientResolver
    private let lock = NSLock()
    private var open: [String: Int] = [:]

    init(cap: Int, clients: ClientResolver) {
        self.cap = cap
        self.clients = clients
    }

    /// Counts a new connection from `address`; false (not counted) if the address already has `cap` open.
    func admit(_ address: IPAddress) -> Bool {
        if clients.isTrusted(address) { return true }
        let key = address.key
        return lock.withLock {
            let count = open[key, default: 0]
            guard count < cap else { return false }
            open[key] = count + 1
            return true
        }
    }

    /// Forgets a connection `admit` counted.
    func release(_ address: IPAddress) {
        if clients.isTrusted(address) { return }
        let key = address.key
        lock.withLock {
            let count = open[key, default: 1] - 1
            open[key] = count > 0 ? count : nil
        }
    }
}

// MARK: - Admission, before anything is read

/// A server's child channel (`HTTP1Channel`, or `HTTP2UpgradeChannel` with its TLS handler) with an
/// `AdmissionHandler` first in each connection's pipeline: the per-address cap and the TLS handshake deadline
/// act on the connection as accepted, before any byte of it is decrypted or parsed. (Inside the HTTP pipeline
/// they would act only once a TLS handshake had completed, which a client that never starts one never does.)
struct AdmittedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    /// Open connections per address; nil for no cap.
    let connections: ConnectionCounter?
    /// Over TLS, the handshake deadline after the connection was accepted; nil for plain HTTP.
    let handshakeTimeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let admission = AdmissionHandler(counter: connections, handshakeTimeout: handshakeTimeout)
        do {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(admission, position: .first)
            let value = inner.setup(channel: channel, logger: logger)
            // The TLS handler tells the handlers after it when its handshake completes.
            if handshakeTimeout != nil {
                let tls = try pipeline.handler(type: NIOSSLServerHandler.self)
                try pipeline.addHandler(HandshakeWatcher(admission: admission), position: .after(tls))
            }
            return value
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    func handle(value: Value, logger: Logger) async { await inner.handle(value: value, logger: logger) }
}

/// First in a connection's pipeline: closes a new connection whose peer address already has as many open as
/// `ConnectionCounter` allows before it is read from, counting the others while they are open; and, with a
/// handshake deadline, closes a connection whose TLS handshake has not completed by then (a client holding
/// connections without starting one, or trickling its hello). It closes from the pipeline's head, so the
/// socket is closed at once whatever the handlers after it are doing.
final class AdmissionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let counter: ConnectionCounter?
    private let handshakeTimeout: TimeAmount?
    /// The peer address while it is counted.
    private var counted: IPAddress?
    private var refused = false
    private var started = false
    private var handshakeDone = false
    private var timer: Scheduled<Void>?

    init(counter: ConnectionCounter?, handshakeTimeout: TimeAmount?) {
        self.counter = counter
        self.handshakeTimeout = handshakeTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context: context)
        context.fireChannelActive()
    }

    private func admit(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        if let counter, let peer = context.channel.remoteAddress.flatMap(IPAddress.init) {
            guard counter.admit(peer) else {
                refused = true
                context.close(promise: nil)
                return
            }
            counted = peer
        }
        if let handshakeTimeout, !handshakeDone {
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: handshakeTimeout) { [self] in
                timer = nil
                if !handshakeDone { context.close(promise: nil) }
            }
        }
    }

    /// The TLS handshake completed (`HandshakeWatcher`): the HTTP timeouts take over.
    func handshakeCompleted() {
        handshakeDone = true
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !refused { context.fireChannelRead(data) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    private func release() {
        timer?.cancel()
        timer = nil
        if let counted { counter?.release(counted) }
        counted = nil
    }
}

/// Right after the TLS handler: tells the connection's `AdmissionHandler` that the handshake completed.
final class HandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let admission: AdmissionHandler

    init(admission: AdmissionHandler) { self.admission = admission }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent { admission.handshakeCompleted() }
        context.fireUserInboundEventTriggered(event)
    }
}
