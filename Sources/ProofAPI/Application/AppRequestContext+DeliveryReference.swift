import Hummingbird
import ProofService

extension AppRequestContext {
    /// The `{reference}` path parameter; 404 when it cannot name a delivery.
    func deliveryReference() throws -> String {
        let reference = parameters.get("reference") ?? ""
        guard DeliveryRules.isValidReference(reference) else {
            throw Problem(.notFound, code: "delivery_not_found", detail: "No delivery has this reference.")
        }
        return reference
    }
}
