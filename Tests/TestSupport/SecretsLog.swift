import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Every token and passphrase the tests use, one per line, appended to `$VOTE_SECRETS_LOG` (else a file in the
/// temporary directory), which `.ci/run` greps the whole test output for afterwards: none may ever appear in an
/// error or log line. CI runs the suite as several processes at once, so each record is one `write` to the file
/// opened with `O_APPEND`: appends from several processes never overwrite each other (a lock in one process and a
/// seek to the end did: one process's line could be cut into another's).
public func recordSecrets(_ secrets: [String]) {
    let text = secrets.filter { !$0.isEmpty }.map { $0 + "\n" }.joined()
    guard !text.isEmpty else { return }
    let path =
        ProcessInfo.processInfo.environment["VOTE_SECRETS_LOG"]
        ?? NSTemporaryDirectory() + "voteledger-secrets-used.txt"
    let file = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    guard file >= 0 else { return }
    defer { close(file) }
    _ = Array(text.utf8).withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
}
