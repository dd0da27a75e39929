import Foundation
import Ledger
import LedgerCrypto
import Testing

/// Ed25519 cosignatures (c2sp.org/tlog-cosignature): the line a witness adds, how a verifier finds and checks
/// it, and every way a line or a verifier key must be refused.
@Suite struct CosignatureTests {
    static let checkpoint = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"

    /// A witness key from a fixed seed, and the note its cosignature line is added to.
    static func cosigned(at time: UInt64 = 1_679_315_147) throws -> (Cosigner, SignedNote, Ed25519PrivateKey) {
        let key = try Ed25519PrivateKey(seed: [UInt8](repeating: 7, count: 32))
        let log = try Ed25519PrivateKey(seed: [UInt8](repeating: 9, count: 32))
        let payload = try Cosignature.sign(checkpoint, name: "witness.example/w1", key: key, timestamp: time)
        let note = try SignedNote.sign(checkpoint, name: "example.com/behind-the-sofa", key: log)
        let line = "\u{2014} witness.example/w1 \(Base64.encode(payload))\n"
        let cosigned = try #require(SignedNote(parsing: note.serialized + line))
        return (Cosigner(name: "witness.example/w1", key: key.publicKey), cosigned, key)
    }

    @Test func aCosignatureVerifiesAndCarriesItsTime() throws {
        let (cosigner, note, _) = try Self.cosigned()
        #expect(cosigner.timestamp(of: note) == 1_679_315_147)
        // The signed message is the tlog-cosignature text: header line, time line, the checkpoint.
        #expect(
            Cosignature.message(Self.checkpoint, timestamp: 5)
                == Array("cosignature/v1\ntime 5\n".utf8) + Array(Self.checkpoint.utf8))
        // Key ID: SHA-256(name || "\n" || 0x04 || key)[:4], and the payload is key ID || time || signature.
        let payload = try #require(note.signatures.last?.payload)
        #expect(payload.count == 76)
        #expect(Array(payload.prefix(4)) == cosigner.keyID)
        #expect(Array(payload[4..<12]) == [0, 0, 0, 0, 0x64, 0x18, 0x50, 0xCB])
    }

    /// A cosignature whose time is 0, 2^63 - 1 or beyond is refused though its signature holds; a signature line
    /// whose key name holds a Unicode space (here U+00A0 and U+3000) makes no note.
    @Test func impossibleTimesAndSpacedNamesAreRefused() throws {
        let (cosigner, note, key) = try Self.cosigned()
        let log = try #require(note.signatures.first)
        // Each line signed over its own time, as a witness with a broken clock (or a forger) would sign it.
        func cosigned(at time: UInt64) throws -> SignedNote {
            let bytes = (0..<8).reversed().map { UInt8(truncatingIfNeeded: time >> (UInt64($0) * 8)) }
            let signature = try key.signature(for: Cosignature.message(Self.checkpoint, timestamp: time))
            let payload = cosigner.keyID + bytes + signature
            let lines =
                "\u{2014} \(log.name) \(Base64.encode(log.payload))\n\u{2014} \(cosigner.name) \(Base64.encode(payload))\n"
            return try #require(SignedNote(parsing: Self.checkpoint + "\n" + lines))
        }
        for time: UInt64 in [0, UInt64(Int64.max), UInt64(Int64.max) + 1, .max] {
            #expect(cosigner.timestamp(of: try cosigned(at: time)) == nil, "time \(time)")
        }
        #expect(cosigner.timestamp(of: try cosigned(at: UInt64(Int64.max) - 1)) == UInt64(Int64.max) - 1)
        for name in ["witness.example/\u{00A0}w1", "witness\u{3000}example"] {
            let line = "\u{2014} \(name) \(Base64.encode(try #require(note.signatures.last?.payload)))\n"
            #expect(SignedNote(parsing: note.serialized + line) == nil, "\(name)")
        }
    }

    @Test func otherKeysAreIgnoredAndABadLineIsRefused() throws {
        let (cosigner, note, _) = try Self.cosigned()
        let other = Cosigner(name: "witness.example/w2", key: cosigner.key)
        #expect(other.timestamp(of: note) == nil, "another name is another key ID")
        var changed = note
        changed.text = changed.text.replacingOccurrences(of: "20852163", with: "20852164")
        #expect(cosigner.timestamp(of: changed) == nil, "the cosignature covers the checkpoint's text")
        var flipped = note
        flipped.signatures[flipped.signatures.count - 1].payload[20] ^= 1
        #expect(cosigner.timestamp(of: flipped) == nil)
        var retimed = note
        retimed.signatures[retimed.signatures.count - 1].payload[11] ^= 1
        #expect(cosigner.timestamp(of: retimed) == nil, "the signature covers the time")
    }

    @Test func verifierKeysRoundTripAndRefuseOtherTypes() throws {
        let (cosigner, _, _) = try Self.cosigned()
        let text = cosigner.verifierKey
        #expect(Cosigner(verifierKey: text) == cosigner)
        #expect(text.hasPrefix("witness.example/w1+\(Hex.encode(cosigner.keyID))+"))
        // The log's own verifier key is type 0x01, not a cosigner's.
        let logKey = SignedNote.verifierKey(name: "witness.example/w1", key: cosigner.key)
        #expect(Cosigner(verifierKey: logKey) == nil)
        let otherName = "witness.example/w2+" + text.split(separator: "+").dropFirst().joined(separator: "+")
        #expect(Cosigner(verifierKey: otherName) == nil, "the key ID commits to the name")
        #expect(Cosigner(verifierKey: text.uppercased()) == nil)
        #expect(
            Cosigner(verifierKey: "witness example+" + text.split(separator: "+")[1...].joined(separator: "+")) == nil)
        #expect(Cosigner(verifierKey: "") == nil)
        #expect(Cosigner(verifierKey: "a+b+c") == nil)
    }

    /// Base64 has "+" in its alphabet: a verifier key splits at its first two "+" only (about half of all keys
    /// hold one in their base64, as the seeds below do).
    @Test func verifierKeysWhoseBase64HoldsAPlusRoundTrip() throws {
        var withPlus = 0
        for seed in UInt8(0)..<32 {
            let key = try Ed25519PrivateKey(seed: [UInt8](repeating: seed, count: 32))
            let cosigner = Cosigner(name: "witness.example/w\(seed)", key: key.publicKey)
            if cosigner.verifierKey.split(separator: "+").count > 3 { withPlus += 1 }
            #expect(Cosigner(verifierKey: cosigner.verifierKey) == cosigner, "\(cosigner.verifierKey)")
            let log = SignedNote.verifierKey(name: "voteledger/x", key: key.publicKey)
            #expect(SignedNote.publicKey(verifierKey: log)?.key == key.publicKey, "\(log)")
        }
        #expect(withPlus > 0)
    }
}
