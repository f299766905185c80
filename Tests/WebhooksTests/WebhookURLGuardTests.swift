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
        "translated.example": ["::ffff:0:127.0.0.1"],
        "nat64.example": ["93.184.216.34", "64:ff9b::a9fe:a9fe"],
        "internal.example": ["10.20.30.40"],
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

    /// Security issue 41, item 7: `[::ffff:0:127.0.0.1]` (IPv4-translated, RFC 2765) passed.
    @Test("IPv6 forms that embed an IPv4 address are judged by it: mapped, translated, compatible, NAT64, 6to4",
          arguments: [
              // IPv4-translated, ::ffff:0:0:0/96
              "http://[::ffff:0:127.0.0.1]/", "http://[::ffff:0:7f00:1]/", "http://[::ffff:0:10.0.0.1]/",
              "http://[::ffff:0:169.254.169.254]/", "http://[::ffff:0:192.168.0.1]/", "http://[::ffff:0:0.0.0.0]/",
              "http://translated.example/",
              // IPv4-mapped, ::ffff:0:0/96
              "http://[::ffff:169.254.169.254]/", "http://[::ffff:7f00:1]/", "http://[::ffff:100.64.0.1]/",
              // IPv4-compatible, ::/96 (deprecated: refused whatever it embeds)
              "http://[::127.0.0.1]/", "http://[::10.0.0.1]/", "http://[::93.184.216.34]/",
              // NAT64: the well-known prefix by its IPv4 address; local-use 64:ff9b:1::/48 and the rest of 64:ff9b::/32 always
              "http://[64:ff9b::127.0.0.1]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b::c0a8:1]/", "http://nat64.example/",
              "http://[64:ff9b:1::a00:1]/", "http://[64:ff9b:1:7f00:0:100::]/", "http://[64:ff9b:1::5db8:d822]/",
              "http://[64:ff9b:2::5db8:d822]/",
              // 6to4, 2002::/16: the IPv4 address in bits 16–48
              "http://[2002:7f00:1::1]/", "http://[2002:a9fe:a9fe::]/", "http://[2002:c0a8:101::1]/", "http://[2002:a00:1::]/",
          ])
    func embeddedIPv4(url: String) async {
        await #expect(throws: WebhookURLGuard.Refusal.self) { try await strict.check(url) }
    }

    @Test("IPv6 outside global unicast, and the non-public parts inside it, are refused",
          arguments: ["http://[2001:db8::1]/", "http://[3fff::1]/", "http://[2001::1]/", "http://[2001:2::1]/",
                      "http://[fec0::1]/", "http://[100::1]/", "http://[5f00::1]/", "http://[4000::1]/", "http://[::2]/"])
    func nonGlobalIPv6(url: String) async {
        await #expect(throws: WebhookURLGuard.Refusal.self) { try await strict.check(url) }
    }

    @Test("embedding forms of a public IPv4 address pass, as that address would")
    func embeddedPublic() async throws {
        for url in ["http://[::ffff:93.184.216.34]/", "http://[::ffff:0:93.184.216.34]/", "http://[64:ff9b::5db8:d822]/",
                    "http://[2002:5db8:d822::1]/"] {
            try await strict.check(url)
        }
    }

    /// Security issue 41, item 7: "10.1.2.3" in the refusal told the admin where an internal name points.
    @Test("a refusal says what kind of address a name resolves to, never the address")
    func refusalHidesResolvedAddress() async {
        let cases: [(url: String, address: String, kind: String)] = [
            ("http://internal.example/", "10.20.30.40", "private"), ("http://rebound.example/", "10.1.2.3", "private"),
            ("http://metadata.example/", "169.254", "link-local"), ("http://mapped.example/", "127.0.0.1", "loopback"),
            ("http://translated.example/", "127.0.0.1", "IPv4-translated loopback"), ("http://nat64.example/", "a9fe", "NAT64 link-local"),
        ]
        for (url, address, kind) in cases {
            do {
                try await strict.check(url)
                Issue.record("\(url) was accepted")
            } catch {
                #expect(!error.reason.contains(address), "\(error.reason)")
                #expect(!error.reason.contains("/8") && !error.reason.contains("/16") && !error.reason.contains("::"), "\(error.reason)")
                #expect(error.reason.contains(kind), "\(error.reason)")
            }
        }
        // A literal address is the admin's own text: its range may be named.
        do {
            try await strict.check("http://[::ffff:0:127.0.0.1]/")
            Issue.record("accepted")
        } catch {
            #expect(error.reason.contains("IPv4-translated loopback (127.0.0.0/8)"), "\(error.reason)")
        }
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
        #expect(WebhookSettings().concurrencyPerEndpoint == 2)
        #expect(try WebhookSettings.parse(["WEBHOOK_CONCURRENCY_PER_ENDPOINT": "5"]).concurrencyPerEndpoint == 5)
        #expect(throws: (any Error).self) { try WebhookSettings.parse(["WEBHOOK_CONCURRENCY_PER_ENDPOINT": "0"]) }
        #expect(throws: (any Error).self) { try WebhookSettings.parse(["WEBHOOK_CONCURRENCY_PER_ENDPOINT": "two"]) }
    }
}
