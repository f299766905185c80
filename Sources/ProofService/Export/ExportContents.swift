/// What a ZIP export holds of each proof. The raw dynamics (`points`, the original body, and
/// `ink`, the canonical ink: x, y, time and pressure per point) are behavioural biometric data;
/// an export for a purpose that needs the signature's image and facts only leaves them out, and
/// the bundle still verifies: `metadata.json` lists each left-out file with its size and SHA-256
/// and `"omitted": true`, so its digest is still checked against the proof's audit event, and the
/// signed manifest names the files each proof holds (`proof_files`).
public enum ExportContents: String, Sendable, CaseIterable {
    /// Every file of a proof: `metadata.json`, `signature.png`, `signature.svg`, `points`, `ink`.
    case everything
    /// The image, the outline and the facts, without `points` and `ink`.
    case withoutPoints = "without_points"

    /// The files of a proof an export may leave out: the raw dynamics.
    public static let omissibleFiles: Set<String> = ["points", "ink"]

    /// The proof files this export leaves out.
    public var omittedFiles: Set<String> {
        switch self {
        case .everything: []
        case .withoutPoints: Self.omissibleFiles
        }
    }

    /// The files each proof's folder holds, in the order they are written (the manifest's `proof_files`).
    public var proofFiles: [String] { BundleLayout.proofFiles.filter { !omittedFiles.contains($0) } }

    /// The contents whose folders hold exactly `files` (a manifest's `proof_files`; nil, as in
    /// bundles written before the member existed, is every file), or nil for any other list.
    public init?(proofFiles files: [String]?) {
        guard let files else {
            self = .everything
            return
        }
        guard let found = Self.allCases.first(where: { $0.proofFiles == files }) else { return nil }
        self = found
    }
}
