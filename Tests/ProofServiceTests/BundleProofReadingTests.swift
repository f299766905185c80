import Foundation
import ProofStore
@testable import ProofService
import Testing

/// `metadata.json` is read in one pass without a tree (``BundleProofReading``). These tests hold
/// it to what reading the same document through the tree (``BundleJSONValue``, the verifier's
/// reading before) gives: the same documents accepted, the same facts digest and fields, on our
/// own documents and on thousands of mutations of them.
@Suite("Bundle proof reading")
struct BundleProofReadingTests {
    static let digestA = String(repeating: "ab", count: 32), digestB = String(repeating: "0c", count: 32)

    /// A document as the exporter writes it, with variations.
    static func document(location: String = #"{"accuracy_m":8.0,"lat":52.5201,"lon":13.4051}"#, signed: Bool = false,
                         signer: String = "Load Test", flags: String = "[]",
                         options: String = ##"{"trim": false, "color": "#000000", "scale": 2.0, "width": null, "margin": 16, "n": 1, "z": 0}"##) -> String {
        let device = signed ? #""device_signature":{"key_id":"6f1c5984-7726-4894-93aa-58d6d65b1779","public_key":"AAAA","signature":"BBBB"},"# : ""
        return #"{"delivery":{"address":"Measured Street","destination":{"lat":52.52,"lon":13.405},"recipient":{"name":"R"},"reference":"M-1"},"#
            + device
            + #""files":{"ink":{"bytes":3320,"sha256":"\#(digestA)"},"points":{"bytes":3509,"sha256":"\#(digestB)"},"#
            + #""signature.png":{"bytes":19495,"sha256":"\#(digestA)"},"signature.svg":{"bytes":5304,"sha256":"\#(digestB)"}},"#
            + #""proof":{"algorithm_version":"ubersignature-weighted-bezier/1","captured_at":"2025-03-01T14:05:09.000+01:00","#
            + #""captured_at_as_sent":"2025-03-01T14:05:09+01:00","captured_at_offset_min":60,"captured_at_us":1740834309000000,"#
            + #""device":{"app":"api_load.py","id":"bench","model":null,"os":"linux"},"distance_to_destination_m":13.016249754817833,"#
            + #""flags":\#(flags),"geofence_radius_m":200.0,"ink":{"format":"ink","points":148,"strokes":9},"#
            + #""links":{"metadata":"/v1/deliveries/M-1/proof"},"location":\#(location),"#
            + #""original":{"content_encoding":null,"content_type":"application/json","sha256":"\#(digestB)","size":3509},"#
            + #""png":{"height":576,"sha256":"\#(digestA)","width":1200},"png_sha256":"\#(digestA)","#
            + #""proof_id":"39ec7174-7c64-4316-88a0-4edb7eed7030","received_at":"2026-11-28T08:41:37.088Z","received_at_us":1795855297088000,"#
            + #""reference":"M-1","render_options":\#(options),"signer":{"name":"\#(signer)"},"#
            + #""uploaded_by":{"key_id":"8e1c5984-7726-4894-93aa-58d6d65b1779","name":"scale","role":"admin"}}}"#
    }

    static let documents = [
        document(),
        document(location: "null", signed: true, flags: #"["outside_geofence","late"]"#),
        document(signer: #"Zoë \"Q\" \u00e9 😀"#, options: "{}"),
        document(options: #"{"b": true, "s": "x\ty", "a": -0.0, "big": 1e300, "c": null}"#),
    ]

    /// The fields the check uses, and the facts digest, as reading through the tree gives them.
    struct Read: Equatable {
        var deliveryReference: String
        var files: [String]
        var proofID: UUID
        var reference: String
        var original: String
        var png: String
        var device: String?
        var factsDigest: Digest32

        init(_ reading: BundleProofReading) {
            deliveryReference = reading.deliveryReference
            files = reading.files.map { "\($0.name) \($0.file.bytes) \($0.file.sha256.map(\.description) ?? "-")" }.sorted()
            proofID = reading.proofID
            reference = reading.reference
            original = "\(reading.originalSHA256.map(\.description) ?? "-") \(reading.originalSize)"
            png = reading.pngSHA256.map(\.description) ?? "-"
            device = reading.deviceSignature.map { "\($0.keyID) \($0.publicKey) \($0.signature)" }
            factsDigest = reading.factsDigest
        }

        /// Through the tree, as the verifier read before.
        init(tree bytes: [UInt8]) throws {
            let root = try BundleJSONParser.parse(bytes)
            _ = try root.members("the document")
            files = try root.object("files").members("files").map { name, file in
                "\(name) \(try file.int("bytes")) \(Digest32(hex: try file.string("sha256")).map(\.description) ?? "-")"
            }.sorted()
            device = try root.optionalObject("device_signature").map {
                "\(try $0.string("key_id")) \(try $0.string("public_key")) \(try $0.string("signature"))"
            }
            deliveryReference = try root.object("delivery").string("reference")
            let proof = try root.object("proof")
            let location = try proof.optionalObject("location")
            let deviceFacts = try proof.object("device"), originalMember = try proof.object("original"), ink = try proof.object("ink")
            let pngMember = try proof.object("png")
            // The options by value, written back as canonical JSON.
            let members = try proof.object("render_options").members("render_options")
            var options = CanonicalJSONWriter()
            options.beginObject()
            for (name, value) in members.sorted(by: { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }) {
                options.key(name)
                switch value {
                case .null: options.null()
                case .bool(let flag): options.bool(flag)
                case .number(let text):
                    guard let number = Double(text), number.isFinite else { throw BundleJSONError("out of range") }
                    options.number(number)
                case .string(let text): options.string(text)
                case .object, .array: throw BundleJSONError("not a scalar")
                }
            }
            options.endObject()
            guard let id = UUID(text: try proof.string("proof_id")), let uploader = UUID(text: try proof.object("uploaded_by").string("key_id")) else {
                throw BundleJSONError("not a UUID")
            }
            proofID = id
            reference = try proof.string("reference")
            original = "\(Digest32(hex: try originalMember.string("sha256")).map(\.description) ?? "-") \(try originalMember.int("size"))"
            png = Digest32(hex: try pngMember.string("sha256")).map(\.description) ?? "-"
            let facts = ProofFacts(
                proofID: id, reference: reference, signerName: try proof.object("signer").string("name"),
                capturedAtMicros: try proof.int64("captured_at_us"), capturedAtOffsetMinutes: try proof.int32("captured_at_offset_min"),
                capturedAtText: try proof.string("captured_at_as_sent"), receivedAtMicros: try proof.int64("received_at_us"),
                locationLat: try location.map { try $0.double("lat") }, locationLon: try location.map { try $0.double("lon") },
                locationAccuracyMeters: try location?.optionalDouble("accuracy_m"),
                distanceToDestinationMeters: try proof.optionalDouble("distance_to_destination_m"),
                geofenceRadiusMeters: try proof.double("geofence_radius_m"), flags: try proof.strings("flags"),
                device: DeviceFacts(id: try deviceFacts.optionalString("id"), model: try deviceFacts.optionalString("model"),
                                    os: try deviceFacts.optionalString("os"), app: try deviceFacts.optionalString("app")),
                bodyContentType: try originalMember.string("content_type"), bodyContentEncoding: try originalMember.optionalString("content_encoding"),
                inkFormat: try ink.string("format"), pointCount: try ink.int32("points"), strokeCount: try ink.int32("strokes"),
                pngWidth: try pngMember.int32("width"), pngHeight: try pngMember.int32("height"),
                renderOptionsJSON: String(decoding: options.bytes, as: UTF8.self),
                algorithmVersion: try proof.string("algorithm_version"), uploadedBy: uploader)
            factsDigest = Digest32(facts.digest)
        }
    }

    /// Both readings of `bytes`: equal, or both refused.
    static func compare(_ bytes: [UInt8]) -> (agree: Bool, accepted: Bool) {
        let direct = try? Read(BundleProofReading.parse(bytes)), tree = try? Read(tree: bytes)
        return (direct == tree, direct != nil)
    }

    @Test("reads our documents as the tree does, and as the stored facts hash them")
    func ownDocuments() throws {
        for text in Self.documents {
            let reading = try BundleProofReading.parse(Array(text.utf8))
            #expect(Read(reading) == (try Read(tree: Array(text.utf8))))
            #expect(reading.reference == "M-1" && reading.deliveryReference == "M-1" && reading.files.count == 4)
        }
        // The render options as values hash as the stored JSON text does on the server.
        let options = ##"{"trim": false, "color": "#000000", "scale": 2.0, "width": null, "margin": 16, "n": 1, "z": 0}"##
        let first = try BundleProofReading.parse(Array(Self.documents[0].utf8))
        let tree = try BundleJSONParser.parse(Array(Self.documents[0].utf8)).object("proof")
        let stored = ProofFacts(
            proofID: first.proofID, reference: "M-1", signerName: "Load Test", capturedAtMicros: 1_740_834_309_000_000, capturedAtOffsetMinutes: 60,
            capturedAtText: "2025-03-01T14:05:09+01:00", receivedAtMicros: 1_795_855_297_088_000, locationLat: 52.5201, locationLon: 13.4051,
            locationAccuracyMeters: 8, distanceToDestinationMeters: try tree.double("distance_to_destination_m"), geofenceRadiusMeters: 200,
            flags: [], device: DeviceFacts(id: "bench", model: nil, os: "linux", app: "api_load.py"), bodyContentType: "application/json",
            bodyContentEncoding: nil, inkFormat: "ink", pointCount: 148, strokeCount: 9, pngWidth: 1200, pngHeight: 576, renderOptionsJSON: options,
            algorithmVersion: "ubersignature-weighted-bezier/1", uploadedBy: try #require(UUID(text: "8e1c5984-7726-4894-93aa-58d6d65b1779")))
        #expect(first.factsDigest == Digest32(stored.digest))
    }

    @Test("refuses what the tree refuses, naming the member", arguments: [
        (#""captured_at_us":1740834309000000"#, #""captured_at_us":1.5"#, "captured_at_us is not an integer"),
        (#""captured_at_us":1740834309000000"#, #""captured_at_us":99999999999999999999"#, "captured_at_us is not an integer"),
        (#""captured_at_offset_min":60"#, #""captured_at_offset_min":9999999999"#, "captured_at_offset_min is out of range"),
        (#""signer":{"name":"Load Test"}"#, #""signer":{"nom":"Load Test"}"#, "name is missing"),
        (#""flags":[]"#, #""flags":[1]"#, "flags holds a value that is not a string"),
        (#""format":"ink""#, #""format":null"#, "format is not a string"),
        (#""scale": 2.0"#, #""scale": [2.0]"#, "render_options.scale is not a bool, number, string or null"),
        (#""geofence_radius_m":200.0"#, #""geofence_radius_m":null"#, "geofence_radius_m is not a number"),
        (#""proof_id":"39ec7174"#, #""proof_id":"zzec7174"#, "proof_id is not a UUID"),
        (#""reference":"M-1","render"#, #""render"#, "reference is missing"),
        (#""height":576,"#, #""height":576,"height":577,"#, #"member "height" appears twice"#),
    ])
    func refusals(_ replacing: String, _ with: String, _ message: String) throws {
        let text = Self.documents[0]
        #expect(text.contains(replacing))
        let bytes = Array(text.replacingOccurrences(of: replacing, with: with).utf8)
        #expect(throws: BundleJSONError.self) { try Read(tree: bytes) }
        let error = try #require(throws: BundleJSONError.self) { try BundleProofReading.parse(bytes) }
        #expect(error.message.hasPrefix(message))
    }

    /// Random byte edits of our documents: the direct reading accepts exactly what the tree does,
    /// with the same result.
    @Test("mutated documents read as the tree reads them")
    func mutations() {
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x00, 0x0A, 0x20, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x30, 0x31, 0x2D, 0x2E, 0x65, 0x6E,
                                    0x75, 0x80, 0xC3, 0xFF]
        var accepted = 0
        for round in 0..<6000 {
            var bytes = Array(Self.documents[round % Self.documents.count].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes[at] = interesting.randomElement(using: &generator)!
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(interesting.randomElement(using: &generator)!, at: at)
                default: bytes[at] = UInt8.random(in: 0x20...0x7E, using: &generator)
                }
            }
            let (agree, read) = Self.compare(bytes)
            #expect(agree, "\(String(decoding: bytes, as: UTF8.self))")
            if read { accepted += 1 }
        }
        // Enough edits land in text or whitespace to exercise the accepted path too.
        #expect(accepted > 300)
    }

    /// An audit segment line through the tree, as the verifier read it before: the event and,
    /// for a `proof_recorded` event, what it binds.
    static func treeLine(_ bytes: [UInt8]) -> String? {
        let action: String, actor: String?, role: String?, chain: Int16, client: String?, details: String, encoding: String, hash: String
        let at: Int64, prev: String, request: String?, seq: Int64, subject: String, agent: String?
        do {
            let line = try BundleJSONParser.parse(bytes)
            _ = try line.members("line")
            actor = try line.optionalString("actor_key_id")
            if let actor, UUID(text: actor) == nil { return nil }
            (action, role, chain, client) = (try line.string("action"), try line.optionalString("actor_role"), try line.int16("chain"),
                                             try line.optionalString("client_address"))
            (details, encoding, hash, at) = (try line.string("details_text"), try line.string("encoding"), try line.string("hash"),
                                             try line.int64("occurred_at_us"))
            (prev, request, seq, subject, agent) = (try line.string("prev_hash"), try line.optionalString("request_id"), try line.int64("seq"),
                                                    try line.string("subject"), try line.optionalString("user_agent"))
        } catch {
            return nil
        }
        var bound = "-"
        if action == "proof_recorded", let members = try? BundleJSONParser.parse(Array(details.utf8)).members("details"),
           members.allSatisfy({ if case .string = $0.1 { true } else { false } }) {
            func digest(_ name: String) -> String {
                guard case .string(let text)? = members.first(where: { $0.0 == name })?.1 else { return "-" }
                return Digest32(hex: text)?.description ?? "-"
            }
            func text(_ name: String) -> String? {
                guard case .string(let text)? = members.first(where: { $0.0 == name })?.1 else { return nil }
                return text
            }
            if let id = text("proof_id").flatMap(UUID.init(text:)) {
                bound = "\(id) \(digest("points_sha256")) \(digest("png_sha256")) \(digest("ink_sha256")) \(digest("metadata_sha256")) "
                    + "\(text("device_key_id") ?? "-") \(text("device_signature") ?? "-")"
            }
        }
        return "\(action)|\(actor.flatMap(UUID.init(text:))?.lowercasedText ?? "-")|\(role ?? "-")|\(chain)|\(client ?? "-")|\(details)|\(encoding)|"
            + "\(Digest32(hex: hash)?.description ?? "-")|\(at)|\(Digest32(hex: prev)?.description ?? "-")|\(request ?? "-")|"
            + "\(seq)|\(subject)|\(agent ?? "-")|\(bound)"
    }

    /// The same through the direct reading.
    static func directLine(_ bytes: [UInt8]) -> String? {
        guard let line = try? BundleEventLine.parse(bytes) else { return nil }
        var bound = "-"
        if let event = line.event, let (id, digests) = RecordedEventDigests.of(event) {
            bound = "\(id) \(digests.points?.description ?? "-") \(digests.png?.description ?? "-") \(digests.ink?.description ?? "-") "
                + "\(digests.metadata?.description ?? "-") \(digests.deviceKeyID ?? "-") \(digests.deviceSignature ?? "-")"
        } else if line.action == "proof_recorded", line.event == nil {
            return nil  // the tree side cannot tell an unreadable hash; compared below on readable events only
        }
        return "\(line.action)|\(line.actorKeyID?.lowercasedText ?? "-")|\(line.actorRole ?? "-")|\(line.chain)|\(line.clientAddress ?? "-")|"
            + "\(line.detailsText)|\(line.encoding)|\(line.hash?.description ?? "-")|\(line.occurredAtMicros)|\(line.prevHash?.description ?? "-")|"
            + "\(line.requestID ?? "-")|"
            + "\(line.seq)|\(line.subject)|\(line.userAgent ?? "-")|\(bound)"
    }

    @Test("mutated audit lines read as the tree reads them")
    func lineMutations() throws {
        let details = #"{"ink_sha256":"\#(Self.digestA)","metadata_sha256":"\#(Self.digestB)","points_sha256":"\#(Self.digestA)","#
            + #""png_sha256":"\#(Self.digestB)","proof_id":"0b7c5a4e-1111-4222-8333-944455556666"}"#
        let lines = [
            AuditEvent(seq: 42, occurredAtMicros: 1_700_000_000_123_456, actorKeyID: UUID(), actorRole: "courier", action: "proof_recorded",
                       subject: "delivery:A-1", requestID: "req \"1\"", clientAddress: "10.0.0.1", userAgent: "ua/1 é", detailsJSON: details,
                       prevHash: [UInt8](repeating: 7, count: 32), hash: [UInt8](repeating: 9, count: 32), chain: 5, encoding: .v2),
            AuditEvent(seq: 1, occurredAtMicros: 0, actorKeyID: nil, actorRole: nil, action: "key_created", subject: "key:x", requestID: nil,
                       clientAddress: nil, userAgent: nil, detailsJSON: "{}", prevHash: AuditEvent.genesisHash,
                       hash: [UInt8](repeating: 1, count: 32), chain: 0, encoding: .v2),
        ].map { Array(BundleEventLine.encode($0).dropLast()) }
        for line in lines { #expect(Self.directLine(line) != nil && Self.directLine(line) == Self.treeLine(line)) }
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [0x00, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x30, 0x31, 0x2D, 0x65, 0x6E, 0x75, 0x80, 0xFF]
        var accepted = 0
        for round in 0..<4000 {
            var bytes = lines[round % lines.count]
            for _ in 0..<Int.random(in: 1...2, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = interesting.randomElement(using: &generator)!
                case 1: bytes.remove(at: at)
                default: bytes[at] = UInt8.random(in: 0x20...0x7E, using: &generator)
                }
            }
            let direct = Self.directLine(bytes)
            if direct != nil { accepted += 1 }
            // A line whose proof_recorded event has an unreadable hash is refused by both later.
            if direct != nil || (try? BundleEventLine.parse(bytes))?.event != nil || (try? BundleEventLine.parse(bytes)) == nil {
                #expect(direct == Self.treeLine(bytes), "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(accepted > 300)
    }

    @Test("an object of many names, in any order, is checked for repeats without their square")
    func manyNames() throws {
        let names = (0..<20_000).map { "k\($0)" }.shuffled()
        let members = names.map { "\"\($0)\":0" }.joined(separator: ",")
        let value = try BundleJSONParser.parse(Array("{\(members)}".utf8))
        #expect(try value.members("o").count == 20_000)
        let repeated = "{\(members),\"\(names[7_000])\":1}"
        #expect(throws: BundleJSONError.self) { try BundleJSONParser.parse(Array(repeated.utf8)) }
    }
}
