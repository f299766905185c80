import ProofStore

/// The rules a delivery's facts obey, shared by creating a delivery and recording its proof.
public enum DeliveryRules {
    /// A reference is 1 to 64 characters of letters, digits and `._:-`, starting with a letter or digit.
    public static func isValidReference(_ reference: String) -> Bool {
        let bytes = Array(reference.utf8)
        guard (1...64).contains(bytes.count), let first = bytes.first, isAlphanumeric(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x3A || $0 == 0x2D }
    }

    static func isAlphanumeric(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b)
    }

    /// Latitude in -90...90 and a finite longitude (normalised later) are required together.
    public static func validateCoordinates(lat: Double?, lon: Double?, at path: String) -> [FieldError] {
        var errors: [FieldError] = []
        if let lat {
            if !(lat.isFinite && (-90...90).contains(lat)) {
                errors.append(.init(field: path + "/lat", message: "a latitude in -90...90", code: "out_of_range"))
            }
        } else {
            errors.append(.init(field: path + "/lat", message: "required", code: "missing_field"))
        }
        if let lon {
            if !(lon.isFinite && (-540...540).contains(lon)) {
                errors.append(.init(field: path + "/lon", message: "a longitude in -180...180", code: "out_of_range"))
            }
        } else {
            errors.append(.init(field: path + "/lon", message: "required", code: "missing_field"))
        }
        return errors
    }
}
