#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as bytes, and whether a webhook may be sent to it.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    /// Parses a literal (`203.0.113.7`, `2001:db8::1`, with or without brackets); nil otherwise.
    public init?(_ text: String) {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    public var description: String {
        switch self {
        case .v4(let b): return b.map(String.init).joined(separator: ".")
        case .v6(let b):
            var address = in6_addr()
            withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: b) }
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Why no webhook may go to this address — loopback, private, link-local (cloud metadata lives
    /// at 169.254.169.254 and fd00:ec2::254), CGNAT, unspecified, multicast, reserved or
    /// documentation ranges — or nil for a public unicast address.
    ///
    /// IPv6 forms that embed an IPv4 address are judged by that address: IPv4-mapped
    /// (`::ffff:0:0/96`), IPv4-translated (`::ffff:0:0:0/96`, RFC 2765), NAT64's well-known prefix
    /// (`64:ff9b::/96`) and 6to4 (`2002::/16`); IPv4-compatible addresses (`::/96`, deprecated) and
    /// local-use NAT64 (`64:ff9b:1::/48`, never global) are refused whatever they embed. Outside
    /// global unicast (`2000::/3`) nothing is public.
    public var restriction: AddressRestriction? {
        switch self {
        case .v4(let b): return Self.restriction(v4: b)
        case .v6(let b): return Self.restriction(v6: b)
        }
    }

    static func restriction(v6 b: [UInt8]) -> AddressRestriction? {
        func zero(_ range: Range<Int>) -> Bool { b[range].allSatisfy { $0 == 0 } }
        func embedded(_ form: String, _ range: Range<Int>) -> AddressRestriction? {
            restriction(v4: Array(b[range])).map { AddressRestriction(kind: "\(form) \($0.kind)", range: $0.range) }
        }
        // ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d (IPv4-translated): a socket reaches the IPv4 address.
        if zero(0..<10), b[10] == 0xFF, b[11] == 0xFF { return embedded("IPv4-mapped", 12..<16) }
        if zero(0..<8), b[8] == 0xFF, b[9] == 0xFF, zero(10..<12) { return embedded("IPv4-translated", 12..<16) }
        if zero(0..<15) {
            if b[15] == 1 { return AddressRestriction(kind: "loopback", range: "::1/128") }
            if b[15] == 0 { return AddressRestriction(kind: "unspecified", range: "::/128") }
        }
        if zero(0..<12) {
            return embedded("IPv4-compatible", 12..<16) ?? AddressRestriction(kind: "IPv4-compatible (deprecated)", range: "::/96")
        }
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B {
            if zero(4..<12) { return embedded("NAT64", 12..<16) }  // 64:ff9b::/96, the well-known prefix
            if zero(4..<5), b[5] == 1 { return AddressRestriction(kind: "local-use NAT64", range: "64:ff9b:1::/48") }
            return AddressRestriction(kind: "reserved", range: "64:ff9b::/32")
        }
        if b[0] == 0x20, b[1] == 0x02 { return embedded("6to4", 2..<6) }
        guard b[0] & 0xE0 == 0x20 else {  // outside 2000::/3, global unicast
            if b[0] & 0xFE == 0xFC { return AddressRestriction(kind: "unique local (private)", range: "fc00::/7") }
            if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return AddressRestriction(kind: "link-local", range: "fe80::/10") }
            if b[0] == 0xFE, b[1] & 0xC0 == 0xC0 { return AddressRestriction(kind: "site-local", range: "fec0::/10") }
            if b[0] == 0xFF { return AddressRestriction(kind: "multicast", range: "ff00::/8") }
            if b[0] == 0x01, b[1] == 0x00, zero(2..<8) { return AddressRestriction(kind: "discard-only", range: "100::/64") }
            return AddressRestriction(kind: "reserved", range: "outside 2000::/3")
        }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0D, b[3] == 0xB8 { return AddressRestriction(kind: "documentation", range: "2001:db8::/32") }
        if b[0] == 0x3F, b[1] == 0xFF, b[2] & 0xF0 == 0 { return AddressRestriction(kind: "documentation", range: "3fff::/20") }
        if b[0] == 0x20, b[1] == 0x01, zero(2..<4) { return AddressRestriction(kind: "Teredo", range: "2001::/32") }
        if b[0] == 0x20, b[1] == 0x01, b[2] & 0xFE == 0 {
            return AddressRestriction(kind: "IETF protocol assignments", range: "2001::/23")
        }
        return nil
    }

    static func restriction(v4 b: [UInt8]) -> AddressRestriction? {
        switch (b[0], b[1], b[2]) {
        case (0, _, _): return AddressRestriction(kind: "unspecified", range: "0.0.0.0/8")
        case (10, _, _): return AddressRestriction(kind: "private", range: "10.0.0.0/8")
        case (100, 64...127, _): return AddressRestriction(kind: "CGNAT", range: "100.64.0.0/10")
        case (127, _, _): return AddressRestriction(kind: "loopback", range: "127.0.0.0/8")
        case (169, 254, _): return AddressRestriction(kind: "link-local (cloud metadata)", range: "169.254.0.0/16")
        case (172, 16...31, _): return AddressRestriction(kind: "private", range: "172.16.0.0/12")
        case (192, 0, 0): return AddressRestriction(kind: "IETF protocol assignments", range: "192.0.0.0/24")
        case (192, 0, 2): return AddressRestriction(kind: "documentation", range: "192.0.2.0/24")
        case (198, 51, 100): return AddressRestriction(kind: "documentation", range: "198.51.100.0/24")
        case (203, 0, 113): return AddressRestriction(kind: "documentation", range: "203.0.113.0/24")
        case (192, 88, 99): return AddressRestriction(kind: "6to4 relay", range: "192.88.99.0/24")
        case (192, 168, _): return AddressRestriction(kind: "private", range: "192.168.0.0/16")
        case (198, 18...19, _): return AddressRestriction(kind: "benchmarking", range: "198.18.0.0/15")
        case (224...239, _, _): return AddressRestriction(kind: "multicast", range: "224.0.0.0/4")
        case (240...255, _, _): return AddressRestriction(kind: "reserved", range: "240.0.0.0/4")
        default: return nil
        }
    }
}

/// Why no webhook may go to an address.
public struct AddressRestriction: Sendable, Equatable, CustomStringConvertible {
    /// What kind of address it is (`loopback`, `private`, `IPv4-mapped link-local (cloud metadata)`),
    /// naming neither the address nor its range: all a refusal may say about the address a host
    /// *name* resolved to, which the admin did not write and must not learn from us.
    public var kind: String
    /// The range refused (`127.0.0.0/8`, `fc00::/7`; for an embedding form, the IPv4 range).
    public var range: String

    public init(kind: String, range: String) {
        self.kind = kind
        self.range = range
    }

    /// The kind and the range, for an address the URL names itself.
    public var description: String { "\(kind) (\(range))" }
}
