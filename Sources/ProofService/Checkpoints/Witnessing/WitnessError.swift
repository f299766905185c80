/// Why a witness could not take, or give back, a checkpoint.
public enum WitnessError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call on the witness directory failed: which call, on what, and `errno`.
    case io(operation: String, path: String, errno: Int32)
    /// A file of that name is already in the directory: witness files are never overwritten.
    case alreadyWitnessed(path: String)
    /// A file in the directory is not a witnessed checkpoint.
    case malformed(file: String, reason: String)
    /// An HTTP witness or the TSA did not take the checkpoint.
    case rejected(witness: String, reason: String)

    public var description: String {
        switch self {
        case .io(let operation, let path, let errno): "\(operation) \(path): errno \(errno)"
        case .alreadyWitnessed(let path): "\(path) exists (witness files are never overwritten)"
        case .malformed(let file, let reason): "\(file): \(reason)"
        case .rejected(let witness, let reason): "\(witness): \(reason)"
        }
    }
}
