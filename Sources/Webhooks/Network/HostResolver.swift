#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Execution

/// Turns a host name into addresses. The guard asks it; tests inject their own, so no test ever
/// needs a real name that resolves somewhere.
public protocol HostResolver: Sendable {
    /// Every address `host` resolves to (empty when it resolves to none).
    func addresses(of host: String) async throws -> [IPAddress]
}

/// The system resolver (`getaddrinfo`), run on ``BlockingLane/waiting``: it can wait on DNS for
/// seconds, which must not hold a thread of the cooperative pool or an event loop.
public struct SystemHostResolver: HostResolver {
    public init() {}

    /// A failed look-up.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var host: String
        public var message: String
        public var description: String { "cannot resolve \(host): \(message)" }

        public init(host: String, message: String) {
            self.host = host
            self.message = message
        }
    }

    public func addresses(of host: String) async throws -> [IPAddress] {
        try await BlockingLane.waiting.run { try Self.lookUp(host) }
    }

    static func lookUp(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else { throw Failure(host: host, message: String(cString: gai_strerror(status))) }
        defer { freeaddrinfo(list) }
        var found: [IPAddress] = []
        var cursor = list
        while let entry = cursor?.pointee {
            if let address = entry.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        var raw = pointer.pointee.sin_addr
                        found.append(.v4(withUnsafeBytes(of: &raw) { Array($0) }))
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        var raw = pointer.pointee.sin6_addr
                        found.append(.v6(withUnsafeBytes(of: &raw) { Array($0) }))
                    }
                default: break
                }
            }
            cursor = entry.ai_next
        }
        return found
    }
}
