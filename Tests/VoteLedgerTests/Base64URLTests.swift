import JSONViews
import Testing
import VoteLedger

/// base64url as the API carries a ballot key, a blinded message, a credential or a signature: one spelling per
/// value, as the document says (no padding; the unused low bits of the last character zero).
@Suite struct Base64URLTests {
    @Test func onlyTheCanonicalUnpaddedSpellingDecodes() {
        for length in 1...6 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: 0xfb + 17 * $0) }
            let text = Base64URL.encode(bytes)
            #expect(Base64URL.decode(text) == bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            if length % 3 != 0 {
                #expect(Base64URL.decode(text + String(repeating: "=", count: 3 - length % 3)) == nil, "\(text)")
            }
        }
        // "AA" is one zero byte; "AB" spells it with a bit the byte does not have.
        #expect(Base64URL.decode("AA") == [0])
        for text in ["AB", "AAB", "AA==", "AAA=", "+w", "/w", "A", "AA A"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
    }
}
