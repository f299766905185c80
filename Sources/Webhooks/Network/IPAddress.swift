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
    /// documentation ranges — or nil for a public unicast address. IPv6 forms that embed an IPv4
    /// address (mapped, compatible, NAT64, 6to4) are judged by that address.
    public var restriction: String? {
        switch self {
        case .v4(let b): return Self.restriction(v4: b)
        case .v6(let b):
            let zeros10 = b[0..<10].allSatisfy { $0 == 0 }
            if zeros10 && b[10] == 0xFF && b[11] == 0xFF { return Self.restriction(v4: Array(b[12..<16])).map { "IPv4-mapped " + $0 } }
            if b[0..<15].allSatisfy({ $0 == 0 }) { return b[15] == 1 ? "loopback" : (b[15] == 0 ? "unspecified" : "IPv4-compatible") }
            if b[0..<12].allSatisfy({ $0 == 0 }) { return "IPv4-compatible (deprecated)" }
            if b[0] == 0x00, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B {  // 64:ff9b::/96 and 64:ff9b:1::/48 (NAT64)
                return Self.restriction(v4: Array(b[12..<16])).map { "NAT64 " + $0 }
            }
            if b[0] == 0x20, b[1] == 0x02 { return Self.restriction(v4: Array(b[2..<6])).map { "6to4 " + $0 } }
            if b[0] & 0xFE == 0xFC { return "unique local (private)" }
            if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return "link-local" }
            if b[0] == 0xFE, b[1] & 0xC0 == 0xC0 { return "site-local" }
            if b[0] == 0xFF { return "multicast" }
            if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0D, b[3] == 0xB8 { return "documentation" }
            if b[0] == 0x01, b[1] == 0x00, b[2..<8].allSatisfy({ $0 == 0 }) { return "discard-only" }
            if b[0] == 0x20, b[1] == 0x01, b[2] == 0x00, b[3] == 0x00 { return "Teredo" }
            return nil
        }
    }

    static func restriction(v4 b: [UInt8]) -> String? {
        switch (b[0], b[1], b[2]) {
        case (0, _, _): return "unspecified (0.0.0.0/8)"
        case (10, _, _): return "private (10.0.0.0/8)"
        case (100, 64...127, _): return "CGNAT (100.64.0.0/10)"
        case (127, _, _): return "loopback"
        case (169, 254, _): return "link-local (cloud metadata)"
        case (172, 16...31, _): return "private (172.16.0.0/12)"
        case (192, 0, 0): return "IETF protocol assignments"
        case (192, 0, 2), (198, 51, 100), (203, 0, 113): return "documentation"
        case (192, 88, 99): return "6to4 relay"
        case (192, 168, _): return "private (192.168.0.0/16)"
        case (198, 18...19, _): return "benchmarking (198.18.0.0/15)"
        case (224...239, _, _): return "multicast"
        case (240...255, _, _): return "reserved"
        default: return nil
        }
    }
}
