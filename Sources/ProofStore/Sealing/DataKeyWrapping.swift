/// What wraps and unwraps delivery data keys: the seam for a key-management service. The
/// deployment's own file of key-encryption keys (``DataKeyring``) is the one implementation; a
/// KMS would wrap with a key it never reveals, answering the same two calls.
public protocol DataKeyWrapping: Sendable {
    /// `key` wrapped for the delivery `reference`, with the id of the key-encryption key used
    /// (the newest: rotation by key id).
    func wrap(_ key: DataKey, for reference: String) throws(SealingError) -> (keyID: String, wrapped: [UInt8])
    /// The data key `wrapped` by key-encryption key `keyID` for delivery `reference`.
    func unwrap(_ wrapped: [UInt8], keyID: String, for reference: String) throws(SealingError) -> DataKey
}
