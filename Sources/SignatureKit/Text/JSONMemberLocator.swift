/// Finds the byte range of one top-level member's value inside a JSON object, so a request
/// body like `{"ref": "A-17", "ink": {...}}` can hand just the `"ink"` bytes to ``InkParser``
/// without decoding the ink twice.
public enum JSONMemberLocator {
    /// The range (indices of `bytes`) of the value of the top-level member `name`, or `nil`
    /// when the object has no such member. The whole object is checked for well-formedness
    /// (depth-limited, no recursion).
    ///
    /// - Throws: `invalid_json` when `bytes` is not a single JSON object, `duplicate_field` (with
    ///   its ``InkError/pointer``) when any object in it, at any depth, has a member name twice,
    ///   `nesting_too_deep` beyond `maxDepth`.
    public static func range(ofMember name: String, in bytes: ArraySlice<UInt8>,
                             maxDepth: Int = InkLimits.default.maxNestingDepth) throws(InkError) -> Range<Int>? {
        try ranges(ofMembers: [name], in: bytes, maxDepth: maxDepth)[0]
    }

    /// ``range(ofMember:in:maxDepth:)`` for several members in one pass over the object: one
    /// range (or `nil`) per name, in the order of `names`.
    public static func ranges(ofMembers names: [String], in bytes: ArraySlice<UInt8>,
                              maxDepth: Int = InkLimits.default.maxNestingDepth) throws(InkError) -> [Range<Int>?] {
        let r: Result<[Range<Int>?], InkError> = bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                return .failure(InkError(.invalidJSON, "empty body", offset: 0))
            }
            do throws(InkError) {
                var s = JSONScanner(base, count: raw.count, maxDepth: maxDepth)
                s.skipWhitespace()
                guard s.peek() == UInt8(ascii: "{") else {
                    throw InkError(.invalidJSON, "expected a JSON object, found \(s.describeByte(at: s.pos))", offset: s.pos)
                }
                s.pos += 1
                var found = [Range<Int>?](repeating: nil, count: names.count)
                var seen = Set<String>()
                var first = true
                while let key = try s.nextMember(&first) {
                    let name = s.decode(key)
                    guard seen.insert(name).inserted else {
                        var duplicate = InkError(.duplicateField, "\"\(name)\" appears twice", offset: key.start)
                        duplicate.pointer = "/" + JSONScanner.escapePointer(name)
                        throw duplicate
                    }
                    let start = s.pos
                    try s.skipValue(depth: 1, at: "/" + JSONScanner.escapePointer(name))
                    if let index = names.firstIndex(of: name) {
                        found[index] = (bytes.startIndex + start)..<(bytes.startIndex + s.pos)
                    }
                }
                try s.expectEnd()
                return .success(found)
            } catch {
                return .failure(error)
            }
        }
        return try r.get()
    }

    /// Checks that no object in the JSON object `bytes`, at any depth, has a member name twice.
    public static func requireUniqueMembers(in bytes: [UInt8], maxDepth: Int = InkLimits.default.maxNestingDepth) throws(InkError) {
        _ = try ranges(ofMembers: [], in: bytes[...], maxDepth: maxDepth)
    }

    /// Convenience for a whole byte array.
    public static func range(ofMember name: String, in bytes: [UInt8],
                             maxDepth: Int = InkLimits.default.maxNestingDepth) throws(InkError) -> Range<Int>? {
        try range(ofMember: name, in: bytes[...], maxDepth: maxDepth)
    }

    /// Convenience for a whole byte array.
    public static func ranges(ofMembers names: [String], in bytes: [UInt8],
                              maxDepth: Int = InkLimits.default.maxNestingDepth) throws(InkError) -> [Range<Int>?] {
        try ranges(ofMembers: names, in: bytes[...], maxDepth: maxDepth)
    }
}
