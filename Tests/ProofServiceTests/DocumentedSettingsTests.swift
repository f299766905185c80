import Foundation
import Logging
import ProofService
import SignatureKit
import Testing

/// The settings an operator reads about are the settings the code has: every environment variable
/// the sources read is in README's configuration table and in deploy/README.md, nothing documented
/// is unknown to the code, and every default the docs state — in the tables or in prose such as
/// "`BODY_LIMIT` (default 1 MiB)" — is the value the code starts with.
@Suite struct DocumentedSettingsTests {
    @Test func everyVariableTheCodeReadsIsDocumentedInBothTables() throws {
        let read = try SettingsDocumentation.variablesReadBySources()
        #expect(read.contains("BODY_LIMIT"), "the scan of Sources found \(read.sorted())")
        let readme = try SettingsDocumentation.table(in: "README.md")
        let deploy = try SettingsDocumentation.table(in: "deploy/README.md")
        for name in read.sorted() {
            #expect(readme[name] != nil, "README.md's configuration table lacks \(name), which the code reads")
            #expect(deploy[name] != nil, "deploy/README.md's table lacks \(name), which the code reads")
        }
        for name in Set(readme.keys).union(deploy.keys).sorted() {
            #expect(read.contains(name), "\(name) is documented but no source reads it")
        }
    }

    @Test func tableDefaultsAreTheCodesDefaults() throws {
        let actual = SettingsDocumentation.codeDefaults()
        for file in ["README.md", "deploy/README.md"] {
            for (name, documented) in try SettingsDocumentation.table(in: file) {
                guard let code = actual[name] else { continue }
                #expect(SettingsDocumentation.same(documented, code),
                        "\(file) gives \(name) the default \(documented); the code's is \(code)")
            }
        }
    }

    @Test func defaultsStatedInProseAreTheCodesDefaults() throws {
        let actual = SettingsDocumentation.codeDefaults()
        let statements = try SettingsDocumentation.proseDefaults()
        #expect(!statements.isEmpty, "no prose default was found: the pattern no longer matches the docs")
        for statement in statements {
            guard let code = actual[statement.variable] else { continue }
            #expect(SettingsDocumentation.same(statement.value, code),
                    "\(statement.file): \(statement.variable) is said to default to \(statement.value); the code's is \(code)")
        }
    }

    @Test func theComparisonTellsSizesAndNumbersApart() {
        #expect(SettingsDocumentation.same("1 MiB", "1048576"))
        #expect(SettingsDocumentation.same("`200`", "200.0"))
        #expect(!SettingsDocumentation.same("2 MiB", "1048576"))
        #expect(SettingsDocumentation.same("`./public` (image: `/srv`)", "public"))
        #expect(!SettingsDocumentation.same("`true`", "false"))
    }

    @Test func documentedLimitsAreTheCodes() throws {
        let api = try SettingsDocumentation.text("docs/api.md")
        let ink = InkLimits.default
        let engine = "| points / strokes / canvas | \(ink.maxPoints.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))) / "
            + "\(ink.maxStrokes.formatted(.number.locale(Locale(identifier: "en_US")))) / "
            + "\(Int(ink.maxCanvasDimension).formatted(.number.locale(Locale(identifier: "en_US")))) units per side"
        #expect(api.contains(engine), "docs/api.md's limits table should say: \(engine)")
        let pageSize = APIPolicy().maxPageSize
        #expect(api.contains("| page size | \(pageSize) |"), "docs/api.md's limits table should give the page size \(pageSize)")
        let contract = try SettingsDocumentation.text("public/openapi.yaml")
        // The listings paged like deliveries (deliveries, audit events, checkpoints) share the page size.
        let limits = contract.components(separatedBy: "\n").filter { $0.contains("name: limit,") }
        #expect(limits.count >= 2)
        for line in limits.prefix(2) {
            #expect(line.contains("maximum: \(pageSize),"), "openapi.yaml: \(line.trimmingCharacters(in: .whitespaces))")
        }
    }
}
