public import Ledger

#if canImport(Glibc)
    import Glibc
#endif

extension LedgerError {
    /// The failure of the operating-system call `what` ("writing PATH") just made, by the current `errno`.
    static func system(_ what: String) -> LedgerError { system(what, errno: errno) }

    /// The failure of the operating-system call `what` ("writing PATH") with `code`: `.noSpace` when the disk
    /// or the quota is full, else `.io`.
    public static func system(_ what: String, errno code: Int32) -> LedgerError {
        let text = "\(what): \(String(cString: strerror(code)))"
        return code == ENOSPC || code == EDQUOT ? .noSpace(text) : .io(text)
    }
}
