import BlindRSA
import Crypto
import Election
import Foundation
import Ledger
import LedgerCrypto

/// The anonymous-place vectors (FORMAT.md §11.18, §11.19): the golden anonymous election in
/// `Ledger/vectors/anonymous` and one case per rule of the credential-issued and anonymous-vote events. The
/// ballot key is a published test key and each signature is made with a salt derived from its credential, so
/// every byte is reproducible (real issuance blinds, and its salts and factors are random; the ledger cannot
/// tell the difference, as it never sees them).
extension ElectionVectors {
    /// The ballot key of every anonymous vector: a 3072-bit RSA key (PKCS #1 DER, made with openssl). A published
    /// key: never use it for a real place.
    static let ballotKey = try! BlindRSAPrivateKey(
        derRepresentation: Array(
            Data(
                base64Encoded:
                    "MIIG4wIBAAKCAYEAtTnBKFkboYTb2ASBv1I7UaWQxPSubnYxB4ijZQHXoZql3x6ueoDRucXyqe3bhKtQ/5Z784mm2PwA5AYAc6ARroFQGwmXVTx3OUrCq6KURA7gu74DY9UyKekJo6HqYlTco3c+mkt9U7Nbkc/JynHwF8IFb0+yu487uFbCGcDnRg+pUCywzvr3shusOSnFRXBM8RjmYuhUcDW3nrYPFJvPdgzdQkZ0RTpfvJEjYPYxI8d5KMfcmjCfBIwRBvKZeRh2MFu3TEOfJ0cqD0aUQVRtVFYmjKZipcJNX59ZuOqgw2i53HRwHoUHOSv60C83x3BT8k7gEC5matZQbVudHhiNulUVPcoOTmF1uXoqdRYJZNpk+UsQXMARghr4h+9rRVMGR1aFuxzketNjuQE5/++yrkqGahpawakJmiESwobxEuuFuDx6BGzJmXWW4xiTkpFlwJd2N7tl0TNV+Cheb5URhBzWuB43/2rfRMR+c6EwchTBHDxI3cn4/Pt0WXIaGP37AgMBAAECggGACh0ZljluRi9R8h9naI9k14OhmzxEfGCExtBJBz95EqSYNuYITP+YkCXVVDS0mF8c6T18aodAXVQ52+2WY7j1KDqKGaFSiiyk1PjVHhsA69EgvZmAOu5ZiObx5VcJWUijsd8kU4nF01LZIRrqGglW6tNdaJEpyBL9/Vx8bJinqvD/qs6hZR3716kLH8Rp2/egvMTr1Eisr/eUDcTatFADcDv7jj+Xv0HflC9NYUp3cLpNZhvMteh14IrNIr+Ng/KOS6hRQEDlumLZyu6VxIg/IWPPibzttusqGHw9qwrH7N5x/OSqoxVJIKYR++P9sCFGzLYP8XffdJX1qnfsLPH8SEpv/e9Sr1XONNgBuymIaSoOpWb0Pbxf3u8R92xnWxjpELA9Ty/+SgME34bIVbtbc5YHFUiftqL5dKlvM17PjpBpuvATXIhD3fU076EdXmvcACfznNPJrOoaGNw2PQbWuBLDt2E6yfeHBg2Mip0k4D2mkt2YTXvX5OuFPkGJXE6xAoHBANueBmbFfNsyxp75K0Gh19Dwefwz8DlAxh1WFJID4cBoaLrGgz228QN5uu/I2mSbkQO4SO5fkkrSTXqzt9gqeKgLlinvoeawnygUIN+A5C5egw1Krvc6p4Kusn931cbQArYs1lW0lVEvNykfbJnlni1I/dqHKedg/uVjK5Y8zBT7wJ+5T92x8SaHZhOBDTvw1daTvMdK619ild3fwYT2jqPO05gqk2c5xpmO99TbtivpXpCsN49N0jh6ZhUrPKncXQKBwQDTP4mKISR8tx+KCK/BTSzyZxGq/gjNhFEwC0jDCafbqIs2nKjXSorTQpgNawivKFmPoqTDjFRDUFkSOOESn2wqUJiW6TLsZ/S4XFFlmQ4Q2qX8Ahr0KrqKNMt8871dshlQPJBWsopB98P99SFqgCXlg7yGZWyzIuX0UIVsn7FifaiA4Ldlz6LMKxVVo0tBZyMZ/oA/yP8Ga14VPg6Pl0UEZeeyZOHdryg8qFrzxEse74hYmE4gVp4vURaKrT5q3jcCgcAykTZEH6DaD9zv6ctt90fsEhLkYUkkxadYRePCoyYt2VyT9PVvFlp0RGkooQS4OaGwS5RvXo4esEGqyQrBuTXC67gNu+F5bp2W6tuO2uyvSI/AVbvnrRe43WS4OO1+M5MMQ1KutT/US5zV2Sh2XwqGvtHEqW6amhjW1HjKxQDwq+70WATttPUju/Vi9EoJzTBPkgDbmoKLmfWL+uNiLCs3yH2sAdGi6QizftnNpzFQ9xERGrZIRtDqtDQhF62GJvkCgcBxdwIoOC8B8dY17P6CBDLtLGE4B+Swhq6Y8KavY8NOX5QOzEx//uDcIjvLkT8D3ddlKAX5pqkn0sNU30o9F3YgsFOVU0Jv6lJup99sg64jbV2UI4lYto6lZ0AZKE4BQoUILM+WUaWjUzJpeL3vF0/DnGOpiFa/TTJYbNuNgaTkcvwL5Sd8vu8BXO7DpcbpJT2cW6+FEy+vwgGxxThK9gQzHY06q6cJzGf/VKotnrR+tEf21i+4fO3QGmzSJcWN3zcCgcEAmZbPjZiZpwBFEwslRESHiyyAnboEXdGnW0rWzRUYrtQ1LuumMgN5IirVYaQIBKgfJ/kVemaFjc7Sot7UguNV9kYdYnVolVKt4WCJgLstI0Ku5c5o37gFngtdOOCLAbbdScVfdNqjt1K2A/g+R4mVSQyQ4vg+J032vKjUvNAtRjgMGV0h2WVkdoZv7/vR1+jVB3lrT8HN1yFhD8qI9brYwUwRZhqjpejePeyAKTi6qTtcNtmerf8m0fE72CjswvZe"
            )!))
    /// The ballot key's DER SubjectPublicKeyInfo, as the place records it.
    static var ballotKeyDER: [UInt8] { ballotKey.publicKey.derRepresentation }

    /// Credential `n`: 64 bytes, the prepared message of RFC 9474 (here SHA-512 of "credential n").
    static func credential(_ n: Int) -> [UInt8] { Array(Crypto.SHA512.hash(data: Array("credential \(n)".utf8))) }

    /// The blinded message hash the issuance of voter `n`'s code records (its bytes stand for a blinded message
    /// the ledger never sees).
    static func blindedMessageHash(_ n: Int) -> LedgerCrypto.Digest {
        LedgerCrypto.SHA256.hash(Array("blinded message \(n)".utf8))
    }

    /// The RSASSA-PSS signature (SHA-384, MGF1-SHA-384, salt 48) of `credential` under `ballotKey`, with the salt
    /// SHA-384("salt" || credential): EMSA-PSS encoding (RFC 8017 §9.1.1) by hand, then the raw RSA operation.
    static func signature(_ credential: [UInt8]) -> [UInt8] {
        let modulusBytes = ballotKey.publicKey.modulusByteCount
        let salt = Array(Crypto.SHA384.hash(data: Array("salt".utf8) + credential))
        let mHash = Array(Crypto.SHA384.hash(data: credential))
        let h = Array(Crypto.SHA384.hash(data: [UInt8](repeating: 0, count: 8) + mHash + salt))
        var db = [UInt8](repeating: 0, count: modulusBytes - salt.count - h.count - 2) + [1] + salt
        var mask: [UInt8] = []
        var counter: UInt32 = 0
        while mask.count < db.count {
            mask += Array(Crypto.SHA384.hash(data: h + withUnsafeBytes(of: counter.bigEndian) { Array($0) }))
            counter += 1
        }
        for index in db.indices { db[index] ^= mask[index] }
        db[0] &= 0x7F  // emBits = modulus bits - 1: the top bit is zero, so the encoding is below the modulus
        let encoded = db + h + [0xBC]
        let signature = try! ballotKey.blindSign(encoded)
        precondition(ballotKey.publicKey.isValidSignature(signature, for: credential))
        return signature
    }

    static func issue(_ voter: Int, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.credentialIssued(
            place: place, tokenHash: token(voter), blindedMessageHash: blindedMessageHash(voter)
        )
        .ledgerEvent
    }

    static func anonymousVote(
        _ n: Int, for candidate: UInt32, place: UInt32 = 1, signature: [UInt8]? = nil, credential: [UInt8]? = nil
    ) -> LedgerEvent {
        let credential = credential ?? self.credential(n)
        return ElectionEvent.anonymousVoteCast(
            place: place, candidate: candidate, credential: credential,
            signature: signature ?? self.signature(self.credential(n))
        ).ledgerEvent
    }

    /// Place 1 "Steward" takes anonymous ballots (registration 10-20 s, voting 30-40 s) and place 2 "Board"
    /// tokens, both created at 1 s; candidates Alice and Bob in each at 10 s; voters 1-3 authorised in place 1
    /// and voter 4 in place 2 at 15 s; credentials issued to voters 1 and 2 at 25 s (before voting opens);
    /// credential 1 votes for Alice at 30 s (unless not `voted`).
    static func anonymousBase(voted: Bool = true) throws -> Script {
        var script = Script()
        try script.decide(
            1_000,
            [
                .createPlace(
                    name: "Steward", description: "Anonymous ballots", registration: window(10_000, 20_000),
                    voting: window(30_000, 40_000), maxCandidates: nil, ballotKey: ballotKeyDER),
                .createPlace(
                    name: "Board", description: "", registration: window(10_000, 20_000),
                    voting: window(30_000, 40_000), maxCandidates: nil),
            ])
        try script.decide(
            10_000,
            [1, 2].flatMap { place in
                ["Alice", "Bob"].map { Command.registerCandidate(place: place, name: $0, pledge: "") }
            })
        try script.decide(
            15_000,
            (1...3).map { .authorizeVoter(place: 1, voterTag: tag($0), tokenHash: token($0)) }
                + [.authorizeVoter(place: 2, voterTag: tag(4), tokenHash: token(4))])
        try script.decide(
            25_000,
            (1...2).map { .issueCredential(place: 1, tokenHash: token($0), blindedMessageHash: blindedMessageHash($0)) }
        )
        if voted {
            try script.decide(
                30_000,
                [
                    .castAnonymousVote(
                        place: 1, candidate: 1, credential: credential(1), signature: signature(credential(1)))
                ]
            )
        }
        return script
    }

    /// The golden anonymous election: the base, then voter 3's credential issued at 31 s, credentials 2 and 3
    /// voting for Bob at 35 s and 39.999 s, voter 4 voting with a token in place 2, both places certified at 40 s.
    static func anonymousElection() throws -> Script {
        var script = try anonymousBase()
        try script.decide(
            31_000,
            [
                .issueCredential(place: 1, tokenHash: token(3), blindedMessageHash: blindedMessageHash(3)),
                .castVote(place: 2, candidate: 2, tokenHash: token(4)),
            ])
        try script.decide(
            35_000,
            [.castAnonymousVote(place: 1, candidate: 2, credential: credential(2), signature: signature(credential(2)))]
        )
        try script.decide(
            39_999,
            [.castAnonymousVote(place: 1, candidate: 2, credential: credential(3), signature: signature(credential(3)))]
        )
        try script.decide(
            40_000, [.certifyResults(place: 1, treeSize: 0), .certifyResults(place: 2, treeSize: 0)])
        return script
    }

    /// An anonymous case: the anonymous base (with credential 1's vote unless not `voted`), `setup`'s valid
    /// blocks, then one block at `time` of `events`.
    static func anonymous(
        _ name: String, _ breaks: String, voted: Bool = true, setup: @escaping (inout Script) throws -> Void = { _ in },
        at time: Int64, _ events: @escaping () -> [LedgerEvent]
    ) -> Case {
        Case(name: name, group: "anonymous", breaks: breaks) { path in
            var script = try anonymousBase(voted: voted)
            try setup(&script)
            script.raw(time, events())
            try write(script, to: path)
            return UInt64(script.blocks.count)
        }
    }

    /// One case per rule of §11.18 and §11.19, the anonymous ballot key rule (11.7.8), and the rules anonymous
    /// places add to token votes (11.11.1a) and re-issues (11.17.5).
    static var anonymousCases: [Case] {
        var forged = signature(credential(2))
        forged[200] ^= 0x01
        return [
            anonymous("ballot-key-not-rsa", "a place whose ballot key is not a DER RSA public key", at: 31_000) {
                [
                    ElectionEvent.placeCreated(
                        Place(
                            id: 3, name: "Other", description: "", registration: window(50_000, 60_000),
                            voting: window(70_000, 80_000), maxCandidates: nil,
                            ballotKey: Array(repeating: 0x30, count: 64))
                    ).ledgerEvent
                ]
            },
            anonymous("issuance-unknown-place", "a credential issued in place 3, which does not exist", at: 31_000) {
                [issue(1, place: 3)]
            },
            anonymous(
                "issuance-token-place", "a credential issued in place 2, whose voters vote with tokens", at: 31_000
            ) {
                [issue(4, place: 2)]
            },
            anonymous(
                "issuance-at-voting-end", "a credential issued at 40 s, when voting in place 1 ends", at: 40_000
            ) { [issue(3)] },
            anonymous("issuance-unknown-code", "a credential issued for a code never authorised", at: 31_000) {
                [issue(9)]
            },
            anonymous("issuance-twice", "a second credential issued for voter 1's code", at: 31_000) {
                [
                    ElectionEvent.credentialIssued(
                        place: 1, tokenHash: token(1), blindedMessageHash: blindedMessageHash(9)
                    ).ledgerEvent
                ]
            },
            anonymous(
                "reissue-after-issuance", "voter 2's issuance code re-issued after its credential was issued",
                at: 31_000
            ) {
                [
                    ElectionEvent.voterTokenReissued(
                        place: 1, voterTag: tag(2), oldTokenHash: token(2), newTokenHash: token(12)
                    ).ledgerEvent
                ]
            },
            anonymous("token-vote-in-anonymous-place", "voter 3's issuance code voting as a token (0x0105)", at: 31_000)
            {
                [vote(3, for: 1)]
            },
            anonymous(
                "anonymous-vote-unknown-place", "an anonymous vote in place 3, which does not exist", at: 31_000
            ) { [anonymousVote(2, for: 1, place: 3)] },
            anonymous(
                "anonymous-vote-token-place", "an anonymous vote in place 2, whose voters vote with tokens", at: 31_000
            ) { [anonymousVote(2, for: 1, place: 2)] },
            anonymous(
                "anonymous-vote-before-voting", "credential 2 voting at 29.999 s, before voting opens", voted: false,
                at: 29_999
            ) { [anonymousVote(2, for: 1)] },
            anonymous("anonymous-vote-at-voting-end", "credential 2 voting at 40 s, when voting ends", at: 40_000) {
                [anonymousVote(2, for: 1)]
            },
            anonymous(
                "anonymous-vote-signature-flipped", "credential 2 voting with one bit of its signature flipped",
                at: 31_000
            ) { [anonymousVote(2, for: 1, signature: forged)] },
            anonymous(
                "anonymous-vote-signature-of-another", "credential 3 voting with credential 2's signature", at: 31_000
            ) { [anonymousVote(3, for: 1, signature: signature(credential(2)))] },
            anonymous(
                "anonymous-vote-short-credential",
                "a 63-byte credential voting with its signature (a credential is 64 bytes)", at: 31_000
            ) {
                let short = Array(credential(2).prefix(63))
                return [anonymousVote(2, for: 1, signature: signature(short), credential: short)]
            },
            anonymous("anonymous-vote-twice", "credential 1 voting a second time", at: 31_000) {
                [anonymousVote(1, for: 2)]
            },
            anonymous(
                "anonymous-votes-beyond-issued",
                "credentials 2 and 3 both voting when two credentials were issued and one has voted (an authority signing credentials itself)",
                at: 31_000
            ) { [anonymousVote(2, for: 1), anonymousVote(3, for: 1)] },
            anonymous("anonymous-vote-unknown-candidate", "credential 2 voting for candidate 3 of place 1", at: 31_000)
            {
                [anonymousVote(2, for: 3)]
            },
            anonymous(
                "anonymous-vote-withdrawn-candidate", "credential 2 voting for Bob, who withdrew at 20 s", voted: false,
                setup: { try $0.decide(20_000, [.withdrawCandidate(place: 1, candidate: 2)]) }, at: 31_000
            ) { [anonymousVote(2, for: 2)] },
        ]
    }
}
