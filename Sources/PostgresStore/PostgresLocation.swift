import Foundation
public import Ledger
import NIOSSL
import PostgresNIO

/// Where a ledger's PostgreSQL database is, parsed from the URL an operator writes: libpq's
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB`, or `postgres://USER@/DB?host=/socket/dir` for the server's Unix
/// socket in that directory (`postgresql://` too). `sslmode=require` (or `verify-full`) asks for TLS with the
/// server's certificate verified; `disable`, the default, speaks in the clear (a Unix socket or a trusted
/// network). Printing it never prints the password.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The role the store logs in as.
    public let user: String
    /// The database holding the ledger.
    public let database: String
    /// The server's host name or address, or nil for a Unix socket.
    public let host: String?
    /// The server's port (for a Unix socket: the number in the socket's file name).
    public let port: Int
    /// The directory holding the server's Unix socket, or nil for TCP.
    public let socketDirectory: String?
    /// Whether the connection must use TLS, verifying the server's certificate.
    public let requiresTLS: Bool
    let password: String?

    /// Parses `url`; a malformed one is refused naming what is wrong.
    public init(url: String) throws(LedgerError) {
        func refuse(_ reason: String) -> LedgerError {
            .invalidRequest("not a PostgreSQL URL (postgres://USER@HOST/DB or postgres://USER@/DB?host=DIR): \(reason)")
        }
        guard let components = URLComponents(string: url) else { throw refuse("it does not parse as a URL") }
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw refuse("the scheme must be postgres:// or postgresql://")
        }
        guard let user = components.user, !user.isEmpty else { throw refuse("it names no user before the @") }
        let database = String(components.path.dropFirst())
        guard !database.isEmpty, !database.contains("/") else {
            throw refuse("it names no database (the path after the host, /DB)")
        }
        var socketDirectory: String?
        var requiresTLS = false
        for item in components.queryItems ?? [] {
            switch (item.name, item.value ?? "") {
            case ("host", let value):
                guard value.hasPrefix("/") else {
                    throw refuse("host= must be the absolute path of a socket directory")
                }
                socketDirectory = value
            case ("sslmode", "disable"): requiresTLS = false
            case ("sslmode", "require"), ("sslmode", "verify-full"): requiresTLS = true
            case ("sslmode", let value): throw refuse("sslmode \(value) is not disable, require or verify-full")
            case (let name, _): throw refuse("unknown parameter \(name)")
            }
        }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 }
        guard (host == nil) != (socketDirectory == nil) else {
            throw refuse(host == nil ? "it names no host" : "it names both a host and a socket directory")
        }
        guard components.port.map({ (1...65535).contains($0) }) ?? true else {
            throw refuse("the port is out of range")
        }
        guard !(requiresTLS && socketDirectory != nil) else { throw refuse("TLS is for a host, not a Unix socket") }
        self.user = user
        self.password = components.password
        self.database = database
        self.host = host
        self.port = components.port ?? 5432
        self.socketDirectory = socketDirectory
        self.requiresTLS = requiresTLS
    }

    /// The URL with the password masked.
    public var description: String {
        let login = user + (password == nil ? "" : ":***")
        if let socketDirectory { return "postgres://\(login)@/\(database)?host=\(socketDirectory)" }
        return "postgres://\(login)@\(host ?? ""):\(port)/\(database)" + (requiresTLS ? "?sslmode=require" : "")
    }

    /// What postgres-nio connects with.
    func configuration() throws(LedgerError) -> PostgresConnection.Configuration {
        if let socketDirectory {
            return PostgresConnection.Configuration(
                unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: user, password: password,
                database: database)
        }
        var tls = PostgresConnection.Configuration.TLS.disable
        if requiresTLS {
            do { tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration())) } catch {
                throw LedgerError.io("the database \(self): cannot set up TLS: \(error)")
            }
        }
        return PostgresConnection.Configuration(
            host: host ?? "", port: port, username: user, password: password, database: database, tls: tls)
    }
}
