import ArgumentParser
import Foundation
import SignatureKit
import SignatureRender

/// `countersign render INPUT [-o OUT.png|OUT.svg] ...`: renders a signature file.
///
/// Exit status: 0 on success; 2 when the input or an option value is invalid, with exactly one
/// line on stderr naming the problem (e.g. `countersign render: blank_signature: ...`);
/// 1 when the output cannot be written.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a signature (ink JSON, signature_pad JSON, InkML or SVC2004) to PNG or SVG.",
        discussion: """
            The output format follows the -o extension (.svg gives SVG, anything else PNG). \
            Without -o (or with -o -) the PNG is written to standard output. \
            Default size: the canvas scaled by 2, black ink on a transparent background.
            """
    )

    @Argument(help: "The signature file, or - for standard input.")
    var input: String

    @Option(name: .shortAndLong, help: "Output file: OUT.png or OUT.svg (default: PNG to stdout).")
    var output: String?

    @Option(help: "Input format: auto, ink, signature-pad, inkml or svc.")
    var format: String = "auto"

    @Option(help: "Output width in pixels (fit, keeping the aspect ratio, centred).")
    var width: Int?

    @Option(help: "Output height in pixels (fit, keeping the aspect ratio, centred).")
    var height: Int?

    @Option(help: "Pixels per canvas unit when no size is given (default 2).")
    var scale: Double?

    @Flag(help: "Crop to the ink, with a margin.")
    var trim = false

    @Option(help: "Margin around trimmed ink, in output pixels (default 16).")
    var margin: Double?

    @Option(help: "Ink colour as #RRGGBB (default #000000).")
    var color: String = "#000000"

    @Option(help: "Background: transparent or white.")
    var background: String = "transparent"

    @Option(help: "PNG compressor: run-length (default) or zlib (how proofs stored before 2026-11-23 were written: use it to reproduce their PNG bytes).")
    var pngCompressor: String = "run-length"

    @Option(help: "signature_pad canvas width in CSS px (default: inferred from the ink).")
    var canvasWidth: Double?

    @Option(help: "signature_pad canvas height in CSS px (default: inferred from the ink).")
    var canvasHeight: Double?

    func run() throws {
        let bytes: [UInt8]
        let options: RenderOptions
        let format: InkFormat?
        do {
            options = try renderOptions()
            bytes = try readInput()
            format = try inkFormat(for: bytes)
        } catch {
            fail(error.message)
        }

        let ink: InkDocument
        do {
            ink = try InkParser().parse(bytes, format: format)
        } catch {
            fail(error.description)
        }

        let out: [UInt8]
        do {
            if let output, output.lowercased().hasSuffix(".svg") {
                out = try SignatureRenderer.renderSVGBytes(ink, options: options)
            } else {
                out = try SignatureRenderer.renderPNG(ink, options: options).png
            }
        } catch {
            fail(error.description)
        }

        do {
            if let output, output != "-" {
                try Data(out).write(to: URL(fileURLWithPath: output))
            } else {
                FileHandle.standardOutput.write(Data(out))
            }
        } catch {
            FileHandle.standardError.write(Data("countersign render: cannot write \(output ?? "stdout"): \(error.localizedDescription)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// A usage or input problem, reported as one line with exit status 2.
    struct Problem: Error {
        let message: String
    }

    func renderOptions() throws(Problem) -> RenderOptions {
        var o = RenderOptions()
        if let width { o.layout.width = width }
        if let height { o.layout.height = height }
        if let scale { o.layout.scale = scale }
        if let margin { o.layout.margin = margin }
        o.layout.trim = trim
        guard let c = RGBColor(hex: color) else {
            throw Problem(message: "invalid_color: --color \"\(color.prefix(32))\" is not #RRGGBB")
        }
        o.color = c
        guard let bg = RenderBackground(rawValue: background) else {
            throw Problem(message: "invalid_option: --background must be transparent or white, got \"\(background.prefix(32))\"")
        }
        o.background = bg
        guard let compressor = PNGCompressor(rawValue: pngCompressor) else {
            throw Problem(message: "invalid_option: --png-compressor must be run-length or zlib, got \"\(pngCompressor.prefix(32))\"")
        }
        o.png.compressor = compressor
        return o
    }

    func inkFormat(for bytes: [UInt8]) throws(Problem) -> InkFormat? {
        switch format {
        case "auto":
            // A canvas given with auto applies when the input turns out to be signature_pad.
            guard let canvas = try canvas() else { return nil }
            return InkFormatKind.detect(bytes) == .signaturePad ? .signaturePad(canvas: canvas) : nil
        case "ink": return .ink
        case "inkml": return .inkml
        case "svc": return .svc2004
        case "signature-pad":
            if let canvas = try canvas() { return .signaturePad(canvas: canvas) }
            // No canvas given: auto-detection infers one from the ink, once we know it is
            // signature_pad data.
            guard InkFormatKind.detect(bytes) == .signaturePad else {
                throw Problem(message: "unsupported_format: the input is not signature_pad JSON (an array of stroke groups)")
            }
            return nil
        default:
            throw Problem(message: "invalid_option: --format must be auto, ink, signature-pad, inkml or svc, got \"\(format.prefix(32))\"")
        }
    }

    func canvas() throws(Problem) -> CanvasSize? {
        switch (canvasWidth, canvasHeight) {
        case (nil, nil):
            return nil
        case (let w?, let h?):
            guard w.isFinite, h.isFinite, w > 0, h > 0 else {
                throw Problem(message: "invalid_canvas: --canvas-width and --canvas-height must be positive")
            }
            return CanvasSize(width: w, height: h)
        default:
            throw Problem(message: "invalid_canvas: give both --canvas-width and --canvas-height")
        }
    }

    func readInput() throws(Problem) -> [UInt8] {
        do {
            if input == "-" {
                return [UInt8](FileHandle.standardInput.readDataToEndOfFile())
            }
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: input)))
        } catch {
            throw Problem(message: "input_unreadable: cannot read \(input): \(error.localizedDescription)")
        }
    }

    /// Prints one line to stderr and exits with status 2.
    func fail(_ message: String) -> Never {
        let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        FileHandle.standardError.write(Data("countersign render: \(line)\n".utf8))
        Foundation.exit(2)
    }
}
