import Foundation
import ProofStore

/// The data keys every test seals and opens proofs with: one keyring for the whole test process,
/// so a proof stored through one repository (or the API) opens through any other.
public enum TestDataKeys {
    /// A keyring of two random keys (the second active), made once per process.
    public static let keyring: DataKeyring = {
        do {
            let old = try DataKeyring.generate(id: "test-old")
            let new = try DataKeyring.generate(id: "test-new")
            return try DataKeyring(fileText: old.fileText + new.fileText, path: "(tests)")
        } catch {
            fatalError("test data keys: \(error)")
        }
    }()

    /// A provider of ``keyring``.
    public static let provider = DataKeyProvider(keys: keyring)

    /// ``keyring`` written as a `DATA_KEY_FILE` (mode 0600) in `directory`, for a `countersign`
    /// process the test runs; returns its path.
    public static func writeFile(in directory: URL) throws -> String {
        let url = directory.appendingPathComponent("data-keys")
        try Data(keyring.fileText.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return url.path
    }
}
