import Foundation
import Testing
import Webhooks

/// A resolver that answers from a table and never touches the network.
struct TableResolver: HostResolver {
    var table: [String: [String]]

    func addresses(of host: String) async throws -> [IPAddress] {
        guard let answers = table[host] else { throw SystemHostResolver.Failure(host: host, message: "unknown in this test") }
        return answers.compactMap(IPAddress.init)
    }
}

@Suite("SSRF guard")
struct WebhookURLGuardTests {
    let strict = WebhookURLGuard(resolver: TableResolver(table: [
        "receiver.example": ["93.184.216.34"],
        "rebound.example": ["93.184.216.34", "10.1.2.3"],
        "metadata.example": ["169.254.169.254"],
        "mapped.example": ["::ffff:127.0.0.1"],
        "v6.example": ["2606:4700::1111"],
        "nothing.example": [],
    ]), allowsPrivateNetworks: false)

    @Test("loopback, private, link-local, CGNAT and metadata addresses are refused, IPv4 and IPv6, mapped too",
          arguments: ["http://127.0.0.1/hook", "http://127.1.2.3:8080/", "http://[::1]/", "http://localhost/", "http://api.localhost/",
                      "http://169.254.169.254/latest/meta-data", "http://10.0.0.5/", "http://172.16.0.1/", "http://192.168.1.1/",
                      "http://100.64.0.1/", "http://0.0.0.0/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:10.0.0.1]/",
                      "http://[fe80::1]/", "http://[fd00:ec2::254]/", "http://[fc00::1]/", "http://[::]/", "http://[64:ff9b::a00:1]/",
                      "http://224.0.0.1/", "http://[ff02::1]/", "http://[2002:7f00:1::]/",
                      "http://metadata.example/", "http://mapped.example/", "http://rebound.example/", "http://nothing.example/",
                      "http://unknown.example/"])
    func refused(url: String) async {
        await #expect(throws: WebhookURLGuard.Refusal.self) { try await strict.check(url) }
    }

    @Test("public addresses and names that resolve only to them pass",
          arguments: ["https://receiver.example/hooks", "http://93.184.216.34:8080/x", "https://v6.example/", "https://[2606:4700::1111]/"])
    func allowed(url: String) async throws {
        try await strict.check(url)
    }

    @Test("shapes other than http(s) with a host and no credentials are refused, private networks allowed or not",
          arguments: ["ftp://receiver.example/", "receiver.example/hook", "http:///path", "https://user:pw@receiver.example/",
                      "http://receiver.example/a b", "javascript:alert(1)", ""])
    func badShapes(url: String) async {
        let open = WebhookURLGuard(resolver: TableResolver(table: [:]), allowsPrivateNetworks: true)
        await #expect(throws: WebhookURLGuard.Refusal.self) { try await strict.check(url) }
        await #expect(throws: WebhookURLGuard.Refusal.self) { try await open.check(url) }
    }

    @Test("WEBHOOK_ALLOW_PRIVATE_NETWORKS lets loopback through (tests, make run)")
    func allowPrivate() async throws {
        let open = WebhookURLGuard(resolver: TableResolver(table: [:]), allowsPrivateNetworks: true)
        try await open.check("http://127.0.0.1:9999/hook")
        try await open.check("http://[::1]:9999/hook")
    }

    @Test("settings: the variables parse, and bad values are refused with their name")
    func settings() throws {
        let settings = try WebhookSettings.parse([
            "WEBHOOK_ALLOW_PRIVATE_NETWORKS": "true", "WEBHOOK_TIMEOUT_SECONDS": "3", "WEBHOOK_RETRY_BASE_MILLISECONDS": "50",
            "WEBHOOK_SECRETS_KEY": Data(repeating: 1, count: 32).base64EncodedString(),
        ])
        #expect(settings.allowPrivateNetworks && settings.timeout == .seconds(3) && settings.retryBase == .milliseconds(50))
        #expect(try WebhookSettings.parse([:]) == WebhookSettings())
        #expect(throws: (any Error).self) { try WebhookSettings.parse(["WEBHOOK_ALLOW_PRIVATE_NETWORKS": "maybe"]) }
        #expect(throws: (any Error).self) { try WebhookSettings.parse(["WEBHOOK_SECRETS_KEY": "short"]) }
        #expect(throws: (any Error).self) { try WebhookSettings.parse(["WEBHOOK_TIMEOUT_SECONDS": "0"]) }
    }
}
