import Synchronization

/// Public key encodings that passed ``Ed25519PointCheck``, remembered so that a key checked once
/// is not checked again (the check is a modular exponentiation, as costly as a verification).
///
/// The verifiers make a key per signed proof, from the few keys the devices registered: without
/// this, every device-signed proof of a bundle or of `verify --database` paid the check again.
/// Only passing encodings are kept (the check is a pure function of the 32 bytes), at most
/// ``capacity`` of them; when full it starts again empty rather than tracking use.
enum Ed25519CheckedKeys {
    static let capacity = 4_096
    private static let checked = Mutex<Set<[UInt8]>>([])

    /// Throws as ``Ed25519PointCheck/check(_:_:onCurve:)`` does, unless `encoding` passed before.
    static func check(_ encoding: [UInt8], _ operation: String) throws(CryptographyError) {
        if checked.withLock({ $0.contains(encoding) }) { return }
        try Ed25519PointCheck.check(encoding, operation)
        checked.withLock { set in
            if set.count >= capacity { set.removeAll(keepingCapacity: true) }
            set.insert(encoding)
        }
    }
}
