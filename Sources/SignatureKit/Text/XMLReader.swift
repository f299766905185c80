/// A minimal, non-validating, non-recursive XML pull reader for InkML.
///
/// Safe by construction: DTDs (`<!DOCTYPE`) and entity declarations (`<!ENTITY`) are rejected
/// with `dtd_forbidden`, only the five predefined entities and numeric character references are
/// understood, nesting is bounded, and nothing is ever fetched or expanded.
struct XMLReader {
    struct Attribute {
        var name: Range<Int>
        var value: Range<Int>
    }

    enum Event {
        /// A start tag. `name` excludes any namespace prefix.
        case start(name: Range<Int>, attributes: [Attribute], selfClosing: Bool)
        /// An end tag (also reported after a self-closing start tag).
        case end(name: Range<Int>)
        /// Character data, raw (entity references not yet decoded).
        case text(Range<Int>)
        /// A CDATA section's content (no decoding applies).
        case cdata(Range<Int>)
        /// End of document.
        case eof
    }

    let p: UnsafePointer<UInt8>
    let end: Int
    let maxDepth: Int
    var pos = 0
    var stack: [Range<Int>] = []       // qualified names of open elements
    var pendingEnd: Range<Int>? = nil  // for self-closing tags
    var sawRoot = false

    init(_ p: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.p = p
        self.end = count
        self.maxDepth = maxDepth
        // Skip a UTF-8 byte order mark.
        if count >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF { pos = 3 }
    }

    // MARK: Errors

    func lineNumber(at offset: Int) -> Int {
        var line = 1
        var i = 0
        while i < offset && i < end {
            if p[i] == 0x0A { line += 1 }
            i += 1
        }
        return line
    }

    func error(_ message: String, at offset: Int? = nil, code: InkError.Code = .invalidXML) -> InkError {
        let o = offset ?? pos
        return InkError(code, message, offset: o, line: lineNumber(at: o))
    }

    // MARK: Helpers

    @inline(__always)
    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    @inline(__always)
    static func isNameStart(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c >= 0x80
    }

    @inline(__always)
    static func isNameChar(_ c: UInt8) -> Bool {
        isNameStart(c) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
    }

    func startsWith(_ s: StaticString, at i: Int) -> Bool {
        let n = s.utf8CodeUnitCount
        guard i + n <= end else { return false }
        for k in 0..<n where p[i + k] != s.utf8Start[k] { return false }
        return true
    }

    /// Case-insensitive prefix test (for `<!doctype`).
    func startsWithIgnoringCase(_ s: StaticString, at i: Int) -> Bool {
        let n = s.utf8CodeUnitCount
        guard i + n <= end else { return false }
        for k in 0..<n where p[i + k] | 0x20 != s.utf8Start[k] | 0x20 { return false }
        return true
    }

    /// Index of the first occurrence of `s` at or after `i`, or `nil`.
    func find(_ s: StaticString, from i: Int) -> Int? {
        let n = s.utf8CodeUnitCount
        var j = i
        while j + n <= end {
            if p[j] == s.utf8Start[0] && startsWith(s, at: j) { return j }
            j += 1
        }
        return nil
    }

    /// The local part of a qualified name range (after the last ':').
    func localName(_ r: Range<Int>) -> Range<Int> {
        var i = r.upperBound
        while i > r.lowerBound {
            if p[i - 1] == UInt8(ascii: ":") { return i..<r.upperBound }
            i -= 1
        }
        return r
    }

    func equals(_ r: Range<Int>, _ s: StaticString) -> Bool {
        r.count == s.utf8CodeUnitCount && startsWith(s, at: r.lowerBound)
    }

    func bytesEqual(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        for k in 0..<a.count where p[a.lowerBound + k] != p[b.lowerBound + k] { return false }
        return true
    }

    func string(_ r: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(start: p + r.lowerBound, count: r.count), as: UTF8.self)
    }

    /// Decodes character data or an attribute value: predefined entities and numeric references.
    func decodeText(_ r: Range<Int>, into out: inout [UInt8]) throws(InkError) {
        var i = r.lowerBound
        while i < r.upperBound {
            let c = p[i]
            if c != UInt8(ascii: "&") {
                out.append(c)
                i += 1
                continue
            }
            var j = i + 1
            while j < r.upperBound && p[j] != UInt8(ascii: ";") && j - i < 12 { j += 1 }
            guard j < r.upperBound, p[j] == UInt8(ascii: ";") else { throw error("unterminated entity reference", at: i) }
            let name = (i + 1)..<j
            if equals(name, "lt") { out.append(UInt8(ascii: "<")) }
            else if equals(name, "gt") { out.append(UInt8(ascii: ">")) }
            else if equals(name, "amp") { out.append(UInt8(ascii: "&")) }
            else if equals(name, "quot") { out.append(UInt8(ascii: "\"")) }
            else if equals(name, "apos") { out.append(UInt8(ascii: "'")) }
            else if name.count >= 2 && p[name.lowerBound] == UInt8(ascii: "#") {
                var v: UInt32 = 0
                var k = name.lowerBound + 1
                let hex = p[k] == UInt8(ascii: "x")
                if hex { k += 1 }
                guard k < name.upperBound else { throw error("bad character reference", at: i) }
                while k < name.upperBound {
                    let d: UInt32?
                    if hex { d = JSONScanner.hexValue(p[k]) } else { d = p[k] &- 48 < 10 ? UInt32(p[k] - 48) : nil }
                    guard let d else { throw error("bad character reference", at: i) }
                    v = v &* (hex ? 16 : 10) &+ d
                    if v > 0x10FFFF { throw error("bad character reference", at: i) }
                    k += 1
                }
                guard let scalar = Unicode.Scalar(v) else { throw error("bad character reference", at: i) }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            } else {
                throw error("undeclared entity &\(string(name));", at: i)
            }
            i = j + 1
        }
    }

    // MARK: Events

    /// Returns the next event.
    mutating func next() throws(InkError) -> Event {
        if let e = pendingEnd {
            pendingEnd = nil
            stack.removeLast()
            return .end(name: e)
        }
        while true {
            guard pos < end else {
                if let open = stack.last { throw error("unclosed element <\(string(open))>") }
                if !sawRoot { throw error("no root element") }
                return .eof
            }
            if p[pos] != UInt8(ascii: "<") {
                // Character data up to the next '<'.
                let start = pos
                while pos < end && p[pos] != UInt8(ascii: "<") { pos += 1 }
                if stack.isEmpty {
                    for k in start..<pos where !XMLReader.isSpace(p[k]) {
                        throw error("text outside the root element", at: k)
                    }
                    continue
                }
                return .text(start..<pos)
            }
            let tagStart = pos
            if startsWith("<?", at: pos) {
                guard let close = find("?>", from: pos + 2) else { throw error("unterminated processing instruction") }
                pos = close + 2
                continue
            }
            if startsWith("<!--", at: pos) {
                guard let close = find("-->", from: pos + 4) else { throw error("unterminated comment") }
                pos = close + 3
                continue
            }
            if startsWith("<![CDATA[", at: pos) {
                guard !stack.isEmpty else { throw error("CDATA outside the root element") }
                guard let close = find("]]>", from: pos + 9) else { throw error("unterminated CDATA section") }
                let r = (pos + 9)..<close
                pos = close + 3
                return .cdata(r)
            }
            if startsWithIgnoringCase("<!DOCTYPE", at: pos) {
                throw error("DTDs are not accepted (<!DOCTYPE)", code: .dtdForbidden)
            }
            if startsWithIgnoringCase("<!ENTITY", at: pos) {
                throw error("entity declarations are not accepted (<!ENTITY)", code: .dtdForbidden)
            }
            if startsWith("<!", at: pos) { throw error("unsupported markup declaration") }
            if startsWith("</", at: pos) {
                pos += 2
                let nameStart = pos
                while pos < end && XMLReader.isNameChar(p[pos]) { pos += 1 }
                let name = nameStart..<pos
                while pos < end && XMLReader.isSpace(p[pos]) { pos += 1 }
                guard pos < end, p[pos] == UInt8(ascii: ">") else { throw error("malformed end tag", at: tagStart) }
                pos += 1
                guard let open = stack.last else { throw error("end tag </\(string(name))> without a start tag", at: tagStart) }
                guard bytesEqual(open, name) else {
                    throw error("end tag </\(string(name))> does not match <\(string(open))>", at: tagStart)
                }
                stack.removeLast()
                return .end(name: localName(name))
            }
            // Start tag.
            pos += 1
            guard pos < end, XMLReader.isNameStart(p[pos]) else { throw error("malformed tag", at: tagStart) }
            let nameStart = pos
            while pos < end && XMLReader.isNameChar(p[pos]) { pos += 1 }
            let name = nameStart..<pos
            if stack.isEmpty && sawRoot { throw error("more than one root element", at: tagStart) }
            var attributes: [Attribute] = []
            var seenNames: Set<[UInt8]>? = nil  // see isDuplicate(_:among:seen:)
            var selfClosing = false
            while true {
                let beforeSpace = pos
                while pos < end && XMLReader.isSpace(p[pos]) { pos += 1 }
                guard pos < end else { throw error("unterminated start tag", at: tagStart) }
                if p[pos] == UInt8(ascii: ">") { pos += 1; break }
                if startsWith("/>", at: pos) { pos += 2; selfClosing = true; break }
                guard pos > beforeSpace, XMLReader.isNameStart(p[pos]) else { throw error("malformed attribute", at: pos) }
                let an = pos
                while pos < end && XMLReader.isNameChar(p[pos]) { pos += 1 }
                let attrName = an..<pos
                while pos < end && XMLReader.isSpace(p[pos]) { pos += 1 }
                guard pos < end, p[pos] == UInt8(ascii: "=") else { throw error("attribute without a value", at: an) }
                pos += 1
                while pos < end && XMLReader.isSpace(p[pos]) { pos += 1 }
                guard pos < end, p[pos] == UInt8(ascii: "\"") || p[pos] == UInt8(ascii: "'") else {
                    throw error("attribute value must be quoted", at: pos)
                }
                let quote = p[pos]
                pos += 1
                let vs = pos
                while pos < end && p[pos] != quote {
                    if p[pos] == UInt8(ascii: "<") { throw error("'<' in attribute value", at: pos) }
                    pos += 1
                }
                guard pos < end else { throw error("unterminated attribute value", at: vs - 1) }
                if isDuplicate(attrName, among: attributes, seen: &seenNames) {
                    throw error("duplicate attribute \(string(attrName))", at: an)
                }
                attributes.append(Attribute(name: attrName, value: vs..<pos))
                pos += 1
            }
            if stack.count + 1 > maxDepth {
                throw error("elements nested deeper than \(maxDepth) levels", at: tagStart, code: .nestingTooDeep)
            }
            sawRoot = true
            stack.append(name)
            if selfClosing { pendingEnd = localName(name) }
            return .start(name: localName(name), attributes: attributes, selfClosing: selfClosing)
        }
    }

    /// Up to this many attributes an element's names are compared byte by byte; beyond it they
    /// are kept in a set.
    static let attributeScanLimit = 8

    /// Whether the qualified name `name` repeats one of `attributes`. Comparing each new name
    /// with every earlier one would make a single element with tens of thousands of attributes
    /// cost quadratic time (issue 20), so past ``attributeScanLimit`` the names go into `seen`
    /// (built once, then one insert per attribute). The hash is the standard library's, seeded
    /// per process, so crafted names cannot force collisions.
    func isDuplicate(_ name: Range<Int>, among attributes: [Attribute], seen: inout Set<[UInt8]>?) -> Bool {
        if seen == nil {
            if attributes.count < XMLReader.attributeScanLimit {
                for a in attributes where bytesEqual(a.name, name) { return true }
                return false
            }
            seen = Set(attributes.map { bytes($0.name) })
        }
        return !seen!.insert(bytes(name)).inserted
    }

    func bytes(_ r: Range<Int>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: p + r.lowerBound, count: r.count))
    }

    /// The raw value range of the attribute whose local name is `name`, if present.
    func attribute(_ attributes: [Attribute], _ name: StaticString) -> Range<Int>? {
        for a in attributes where equals(localName(a.name), name) { return a.value }
        return nil
    }
}
