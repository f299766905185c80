import Foundation
import ProofStore

extension DataKeyProvider {
    /// The provider `configuration` describes: the key file, else keys generated in the data
    /// directory if ``ServiceConfiguration/generateDataKey`` allows it, else none.
    public convenience init(configuration: ServiceConfiguration) {
        if let file = configuration.dataKeyFile {
            self.init(.file(file))
        } else if configuration.generateDataKey {
            self.init(.generatedIn(directory: configuration.dataDirectory))
        } else {
            self.init(.unconfigured)
        }
    }

    /// The provider for a command that only reads sealed data (`export`, `verify --database`):
    /// the key file, else (with ``ServiceConfiguration/generateDataKey``) the development file in
    /// the data directory if it exists — never a new keyring, which could open nothing stored.
    public convenience init(readingOnly configuration: ServiceConfiguration) {
        if let file = configuration.dataKeyFile {
            self.init(.file(file))
        } else if configuration.generateDataKey {
            self.init(.file(URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent(DataKeyProvider.generatedFileName).path))
        } else {
            self.init(.unconfigured)
        }
    }
}
