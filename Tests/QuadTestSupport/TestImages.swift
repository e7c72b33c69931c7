import Foundation

/// A real, small PNG for upload tests: 3×2 light-grey pixels (made once with Python's zlib; nothing in Quad
/// draws or encodes pictures).
package enum TestImages {
    package static let png = [UInt8](
        Data(
            base64Encoded:
                "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAADklEQVR42mM4AQMMcBYAjLQOESEo73kAAAAASUVORK5CYII="
        )!)
}
