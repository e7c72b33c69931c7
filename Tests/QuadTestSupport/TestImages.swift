import QuadPlatform

/// A real, small PNG for upload tests.
package enum TestImages {
    package static let png = PNGEncoder.encode(width: 3, height: 2, rgb: Array(repeating: 200, count: 18))
}
