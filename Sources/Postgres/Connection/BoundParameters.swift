import CLibPQ

/// Parameters in the form libpq takes them: types, lengths and formats, and the values in one
/// contiguous buffer (text values NUL-terminated).
///
/// libpq reads a text value up to its first NUL, so a text value holding one would be stored
/// cut short without a word: binding refuses it instead (``PostgresError/Kind/invalidParameter``).
struct BoundParameters {
    var types: [Oid]
    var lengths: [Int32]
    var formats: [Int32]
    private var storage: [UInt8] = []
    private var offsets: [Int?]

    init(_ parameters: [any PostgresBindable]) throws(PostgresError) {
        let count = parameters.count
        types = [Oid](repeating: 0, count: count)
        lengths = [Int32](repeating: 0, count: count)
        formats = [Int32](repeating: 0, count: count)
        offsets = [Int?](repeating: nil, count: count)
        for (index, parameter) in parameters.enumerated() {
            switch parameter.postgresParameter {
            case .null:
                break
            case .text(let text, let oid):
                if text.utf8.contains(0) {
                    throw PostgresError(.invalidParameter, message: "parameter $\(index + 1) contains a NUL byte, which a text value cannot carry")
                }
                offsets[index] = storage.count
                storage.append(contentsOf: text.utf8)
                storage.append(0)
                types[index] = Oid(oid)
            case .binary(let bytes, let oid):
                offsets[index] = storage.count
                storage.append(contentsOf: bytes)
                lengths[index] = Int32(bytes.count)
                formats[index] = 1
                types[index] = Oid(oid)
            }
        }
        if storage.isEmpty { storage.append(0) }  // keep a valid base address for zero-length values
    }

    var count: Int { types.count }

    /// Calls `body` with one value pointer per parameter (nil for NULL), valid only during the call.
    func withValues<R>(_ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            return body(offsets.map { $0.map { base + $0 } })
        }
    }
}
