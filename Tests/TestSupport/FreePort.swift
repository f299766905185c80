#if canImport(Glibc)
import Glibc
#endif

/// A free TCP port on 127.0.0.1 for a server a test starts (bound to port 0, then released), so
/// no test depends on a well-known port being free.
public enum FreePort {
    public struct Unavailable: Error {}

    public static func find() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else { throw Unavailable() }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
