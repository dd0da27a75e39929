/// A list of voter identities as an officer exports it from a spreadsheet (`vote voter authorize --from`, the
/// CSV body of the voters route): one identity per line, perhaps under a header line.
public enum VoterList {
    /// The column names a header line starts with (ASCII case and spaces, "-" and "_" ignored).
    private static let headerNames: Set<String> = [
        "identity", "identities", "voter", "voters", "voterid", "member", "members", "memberid", "id", "phone",
        "phonenumber", "mobile", "name", "email",
    ]

    /// Whether the first line of a list is a header (its first field names a column, such as "identity" or
    /// "Voter ID"): it is skipped with a note, never authorised. A member whose id is one of these words is
    /// listed on another line.
    public static func isHeader(_ firstLine: some StringProtocol) -> Bool {
        let field = firstLine.prefix { $0 != "," && $0 != ";" && $0 != "\t" }
        let word = String(field.lowercased().filter { !" -_\"'\u{FEFF}\r".contains($0) })
        return headerNames.contains(word)
    }
}
