import Foundation
import SignatureKit
import Synchronization

/// The render parameters stored with each proof (`proofs.render_options`), written at upload and
/// read back whenever the proof's ink is rendered again (SVG, resized PNG), so a re-render uses
/// the options the stored PNG was made with even after the service's defaults change.
public enum StoredRenderOptions {
    /// The JSON stored with a proof rendered with `options`.
    public static func json(_ options: RenderOptions) -> String {
        let layout = options.layout
        let color = String(format: "#%02x%02x%02x", options.color.red, options.color.green, options.color.blue)
        return """
            {"scale":\(layout.scale),"width":\(layout.width.map(String.init) ?? "null"),"height":\(layout.height.map(String.init) ?? "null"),\
            "trim":\(layout.trim),"margin":\(layout.margin),"color":"\(color)","background":"\(options.background.rawValue)",\
            "tolerance":\(options.tolerance),"png_compressor":"\(options.png.compressor.rawValue)",\
            "algorithm_version":"\(SignatureReconstructor.algorithmVersion)"}
            """
    }

    /// The members as stored; each is `nil` when missing or of the wrong type.
    private struct Members: Decodable {
        var scale, margin, tolerance, width, height: Double?
        var trim: Bool?
        var color, background, pngCompressor: String?

        enum CodingKeys: String, CodingKey {
            case scale, margin, tolerance, width, height, trim, color, background
            case pngCompressor = "png_compressor"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func member<T: Decodable>(_ key: CodingKeys) -> T? { (try? c.decodeIfPresent(T.self, forKey: key)) ?? nil }
            (scale, margin, tolerance, width, height) = (member(.scale), member(.margin), member(.tolerance), member(.width), member(.height))
            (trim, color, background, pngCompressor) = (member(.trim), member(.color), member(.background), member(.pngCompressor))
        }
    }

    /// Members decoded before, by their JSON text. Proofs share a handful of option sets, and an
    /// export renders every proof's SVG: decoding each with `JSONDecoder` was a visible share of
    /// its CPU. Emptied when full, so hostile variety costs a decode, never memory.
    private static let decoded = Mutex<[String: Members?]>([:])
    private static let decodedLimit = 64

    private static func members(_ json: String) -> Members? {
        if let known = decoded.withLock({ $0[json] }) { return known }
        let stored = try? JSONDecoder().decode(Members.self, from: Data(json.utf8))
        decoded.withLock { cache in
            if cache.count >= decodedLimit { cache.removeAll(keepingCapacity: true) }
            cache[json] = .some(stored)
        }
        return stored
    }

    /// `base` with every parameter `json` records; a member that is missing or out of range keeps
    /// `base`'s value (the JSON is ours, but a proof may predate a parameter). The exception is
    /// `png_compressor`: proofs stored before it was recorded (2026-11-23) were compressed by zlib,
    /// so without it the PNG is re-encoded with zlib.
    public static func options(_ json: String, base: RenderOptions) -> RenderOptions {
        guard let stored = members(json) else { return base }
        var options = base
        if let scale = stored.scale, scale > 0, scale <= 64 { options.layout.scale = scale }
        if let width = stored.width, width >= 1, width <= Double(options.layout.maxPixelWidth) { options.layout.width = Int(width) }
        if let height = stored.height, height >= 1, height <= Double(options.layout.maxPixelHeight) { options.layout.height = Int(height) }
        if let trim = stored.trim { options.layout.trim = trim }
        if let margin = stored.margin, margin >= 0, margin <= 1024 { options.layout.margin = margin }
        if let hex = stored.color, let color = RGBColor(hex: hex) { options.color = color }
        if let name = stored.background, let background = RenderBackground(rawValue: name) { options.background = background }
        if let tolerance = stored.tolerance, tolerance > 0, tolerance <= 10 { options.tolerance = tolerance }
        if let name = stored.pngCompressor {
            if let compressor = PNGCompressor(rawValue: name) { options.png.compressor = compressor }
        } else {
            options.png.compressor = .zlib
        }
        return options
    }
}
