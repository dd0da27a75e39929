import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import LedgerCrypto
import VoteLedger

/// The public routes: anyone may read the election and check the ledger (places, candidates, tallies,
/// results, the signed head, proofs, the event stream). They answer from a view of the ledger at its head.
/// A place whose results are embargoed shows no counts here until voting ends (`PlaceState.countsHidden`), and
/// the event stream shows its votes only as withheld events until then (`Embargo`, FORMAT.md §11.20).
struct PublicRoutes {
    let server: LedgerServer
    let events: EventPages

    func add(to api: RouterGroup<ServerContext>) {
        api.get("places") { request, _ in try places(request) }
        api.get("places/:place") { _, context in
            let view = server.view()
            return try JSONBody.response(
                PlaceJSON(try view.place(try context.parameters.id("place", what: "place")), at: server.clock()))
        }
        api.get("places/:place/candidates") { _, context in
            let place = try server.view().place(try context.parameters.id("place", what: "place"))
            return try JSONBody.response(place.candidates.map(CandidateJSON.init))
        }
        api.get("places/:place/tally") { _, context in
            let view = server.view()
            let place = try view.place(try context.parameters.id("place", what: "place"))
            let now = server.clock()
            return try JSONBody.response(
                try await server.read { try TallyJSON(place, head: view.head, at: now, source: $0, forPublic: true) })
        }
        api.get("results") { _, _ in
            let now = server.clock()
            let ended = server.view().state.places.filter { $0.status(at: now) == .ended }
            return try JSONBody.response(ended.map { PlaceJSON($0, at: now) })
        }
        api.get("head") { _, _ in
            let head = try server.writer.published.signedHead()
            guard let cosigning = server.cosigning else {
                return JSONBody.text(head.serialized, type: "text/plain; charset=utf-8")
            }
            // With witnesses: the cosignatures gathered on this head so far, and whose they are.
            let cosigned = cosigning.cosigned(head)
            var response = JSONBody.text(cosigned.note.serialized, type: "text/plain; charset=utf-8")
            response.headers[.cosignedBy] = cosigned.cosignedBy.joined(separator: ", ")
            return response
        }
        api.get("proofs/inclusion") { request, _ in try await inclusion(request) }
        api.get("proofs/consistency") { request, _ in try await consistency(request) }
        api.get("events") { request, _ in try await events.response(request) }
    }

    private func places(_ request: Request) throws -> Response {
        let now = server.clock()
        var places = server.view().state.places
        if let text = request.uri.queryParameters.get("status") {
            guard let status = PlaceStatus(rawValue: text) else {
                throw APIError(
                    .badRequest, "bad_request",
                    "status must be upcoming, registration, waiting, voting, ended or cancelled")
            }
            places = places.filter { $0.status(at: now) == status }
        }
        return try JSONBody.response(places.map { PlaceJSON($0, at: now) })
    }

    // MARK: Proofs

    struct InclusionJSON: Encodable {
        var index: UInt64
        var treeSize: UInt64
        var proof: [String]
        enum CodingKeys: String, CodingKey {
            case index, proof
            case treeSize = "tree_size"
        }
    }

    struct ConsistencyJSON: Encodable {
        var from: UInt64
        var to: UInt64
        var proof: [String]
    }

    /// A non-negative integer query parameter (400 if present and malformed; `fallback` if absent).
    private func number(_ request: Request, _ name: String, fallback: UInt64? = nil) throws -> UInt64 {
        guard let text = request.uri.queryParameters.get(name) else {
            guard let fallback else {
                throw APIError(.badRequest, "bad_request", "query parameter \(name) is required")
            }
            return fallback
        }
        guard let value = UInt64(text) else {
            throw APIError(.badRequest, "bad_request", "query parameter \(name) must be a non-negative integer")
        }
        return value
    }

    /// The header of the block whose tree holds exactly `size` events, in the ledger up to `head`: proofs are
    /// given against heads the authority signed (a block's), so a client can check them against a checkpoint
    /// it holds.
    private static func header(
        treeSize size: UInt64, head: BlockHeader, in reader: any BlockSource
    ) throws
        -> BlockHeader
    {
        guard size > 0, size <= head.treeSize else {
            throw APIError(
                .notFound, "tree_size_not_found", "the ledger has no tree of \(size) events (it holds \(head.treeSize))"
            )
        }
        if size == head.treeSize { return head }
        guard let height = try reader.height(ofEvent: size - 1), let header = try reader.header(at: height),
            header.treeSize == size
        else {
            throw APIError(
                .notFound, "tree_size_not_found", "no block ends at \(size) events; use the tree size of a signed head")
        }
        return header
    }

    private func inclusion(_ request: Request) async throws -> Response {
        let head = server.view().head
        let index = try number(request, "index")
        let size = try number(request, "tree_size", fallback: head.treeSize)
        let proof = try await server.read { reader in
            let header = try Self.header(treeSize: size, head: head, in: reader)
            guard index < size else {
                throw APIError(.notFound, "index_not_found", "event \(index) is not in a tree of \(size) events")
            }
            return try reader.inclusionProof(index: index, treeSize: size, root: header.treeRoot)
        }
        return try JSONBody.response(InclusionJSON(index: index, treeSize: size, proof: proof.map(\.hex)))
    }

    private func consistency(_ request: Request) async throws -> Response {
        let head = server.view().head
        let from = try number(request, "from")
        let to = try number(request, "to", fallback: head.treeSize)
        guard from > 0, from <= to else {
            throw APIError(.badRequest, "bad_request", "from must be at least 1 and no more than to")
        }
        let proof = try await server.read { reader in
            try reader.consistencyProof(
                oldSize: from, newSize: to, root: try Self.header(treeSize: to, head: head, in: reader).treeRoot)
        }
        return try JSONBody.response(ConsistencyJSON(from: from, to: to, proof: proof.map(\.hex)))
    }
}
