import Foundation
import Testing

@testable import ProofService

/// ``SortedJSONWriter`` must write exactly what `JSONSerialization` writes with `.sortedKeys` and
/// `.withoutEscapingSlashes` (the bytes of `GET …/proof` and of NDJSON exports did not change when it
/// replaced it), on the keys our resources use and on random trees of every value type they hold.
@Suite("Sorted JSON writer")
struct SortedJSONWriterTests {
    static func reference(_ value: Any) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed]))
    }

    /// Every key of a proof resource and an NDJSON line, and some made up of the same characters.
    static let keys = ["accuracy_m", "address", "algorithm_version", "app", "captured_at", "captured_at_as_sent", "content_encoding",
                       "content_type", "delivery", "destination", "device", "distance_to_destination_m", "flags", "format",
                       "geofence_radius_m", "height", "id", "ink", "key_id", "lat", "links", "location", "lon", "metadata", "model",
                       "name", "original", "os", "png", "png_sha256", "points", "points_sha256", "proof", "proof_id", "received_at",
                       "recipient", "reference", "render_options", "role", "sha256", "signer", "size", "strokes", "svg",
                       "uploaded_by", "width", "a", "a_b", "ab", "_", "b_", "x1", "y_2"]

    static let strings = ["", "D-1", "a/b", "quote \" and \\ backslash", "tab\tnew\nline\r", "bell\u{07} back\u{08} feed\u{0C} nul\u{00}",
                          "\u{1F}\u{7F}", "Zoë Ñandú 山田 🚚", "\u{2028}\u{2029}", "/v1/deliveries/D-1/proof.png"]

    static let doubles: [Double] = [0, -0.0, 12, 100, 52.52, 13.405, -122.4194, 1e-05, 2.5e-07, 0.1 + 0.2, 1.0 / 3.0,
                                    1e15, 1e16, 1e21, 123456789012.5, 1.5e300, -Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude]

    static func randomTree(depth: Int, using generator: inout some RandomNumberGenerator) -> Any {
        switch Int.random(in: 0..<(depth > 3 ? 7 : 9), using: &generator) {
        case 0: return strings.randomElement(using: &generator)!
        case 1: return Int.random(in: -1_000_000...1_000_000, using: &generator)
        case 2: return doubles.randomElement(using: &generator)! * (Bool.random(using: &generator) ? 1 : -1)
        case 3: return Double.random(in: -1e6...1e6, using: &generator)
        case 4: return Bool.random(using: &generator)
        case 5: return NSNull()
        case 6: return Int64.random(in: Int64.min...Int64.max, using: &generator)
        case 7:
            return (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomTree(depth: depth + 1, using: &generator) }
        default:
            var object: [String: Any] = [:]
            for _ in 0..<Int.random(in: 0...8, using: &generator) {
                object[keys.randomElement(using: &generator)!] = randomTree(depth: depth + 1, using: &generator)
            }
            return object
        }
    }

    @Test("random trees of every value type: the same bytes as JSONSerialization")
    func randomTrees() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            var object: [String: Any] = [:]
            for key in Self.keys.shuffled(using: &generator).prefix(Int.random(in: 1...12, using: &generator)) {
                object[key] = Self.randomTree(depth: 0, using: &generator)
            }
            let expected = try Self.reference(object)
            #expect(try SortedJSONWriter.encode(object) == expected, "\(String(decoding: expected, as: UTF8.self))")
        }
    }

    @Test("numbers and booleans read back by JSONSerialization (NSNumber) are written as it writes them")
    func parsedNumbers() throws {
        let text = #"{"pen":1.5,"width":2.0,"n":3,"big":12345678901234,"neg":-0.25,"yes":true,"no":false,"none":null,"list":[1,2.5,true,"x"]}"#
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
        #expect(try SortedJSONWriter.encode(parsed) == (try Self.reference(parsed)))
        #expect(String(decoding: try SortedJSONWriter.encode(parsed), as: UTF8.self)
            == #"{"big":12345678901234,"list":[1,2.5,true,"x"],"n":3,"neg":-0.25,"no":false,"none":null,"pen":1.5,"width":2,"yes":true}"#)
    }

    @Test("what JSON cannot hold is refused, not written")
    func refusals() {
        #expect(throws: SortedJSONWriter.Unsupported.self) { try SortedJSONWriter.encode(["x": Double.nan]) }
        #expect(throws: SortedJSONWriter.Unsupported.self) { try SortedJSONWriter.encode(["x": Double.infinity]) }
        #expect(throws: SortedJSONWriter.Unsupported.self) { try SortedJSONWriter.encode(["x": Date()]) }
    }
}
