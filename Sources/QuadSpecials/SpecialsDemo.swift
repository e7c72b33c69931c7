import Foundation
import QuadCore
import QuadPlatform

/// The original payload's 21 products (`backup.json`), in its order, with its sizes and prices; each image
/// is a letter tile shipped with Quad (`LetterTiles/`), in the spirit of the mockup (nothing is downloaded).
enum SpecialsDemo {
    /// name, width, height, original price, price, the original image's letter.
    static let products: [(name: String, width: Int, height: Int, original: String, price: String, letter: Character)] =
        [
            ("Noodle Dish with Roasted Black Bean Sauce", 16, 8, "2.00", "1.00", "L"),
            ("Onion Flavored Rings", 8, 8, "2.00", "1.00", "J"),
            ("Kikkoman Less Sodium Soy Sauce", 8, 8, "2.00", "1.00", "K"),
            ("Organic Romaine Hearts", 14, 4, "3.92", "3.92", "L"),
            ("Navel Oranges 4LBS", 4, 6, "2.23", "1.29", "L"),
            ("Cheddar & Sour Ruffles", 4, 6, "1.49", "1.49", "K"),
            ("Doritos Ranch", 4, 6, "1.49", "1.49", "K"),
            ("Lindt Hello Cookies & Cream 1.4 oz", 4, 6, "1.49", "1.49", "K"),
            ("Kinder Chocolate 50G", 16, 16, "1.99", "1.29", "J"),
            ("Organic Red Bells Peppers", 16, 16, "1.29", "1.29", "L"),
            ("Ferrero Rocher 7.9oz Gift Cube", 9, 8, "1.29", "1.29", "L"),
            ("Reynolds Oven Bags 2CT", 5, 8, "1.29", "1.29", "K"),
            ("Blue Diamond Almond Roasted Salted 6oz", 3, 3, "4.29", "4.29", "J"),
            ("Blue Diamond Artisan Nut Thin Sesame 4.24oz", 3, 3, "3.99", "3.99", "J"),
            ("Blue Diamond Artisan Nut Thin Sesame 4.24oz", 3, 3, "3.99", "3.99", "J"),
            ("Mochi Ice Cream Cookies N Cream", 3, 4, "4.99", "2.99", "L"),
            ("Alessi Vinegar Balsamic White 12.75oz", 12, 4, "4.49", "4.49", "K"),
            ("Alessi Pesto 3.5oz", 4, 4, "3.99", "3.99", "J"),
            ("Hidden Valley Ranch Cucumber", 5, 5, "4.59", "4.59", "J"),
            ("Arrowhead Water 1L", 5, 5, "0.99", "0.99", "K"),
            ("Arrowhead Mountain Spring Water 1.5 L", 5, 5, "1.29", "1.01", "L"),
        ]

    static func load(_ store: SpecialStore, images: ImageStore) async throws {
        for product in products {
            // The mockup's tiles (teal for L and K, green for J), shipped in `LetterTiles/`.
            let image = try await images.store(
                try ImageStore.shipped("LetterTiles/demo-\(product.letter).png", in: .module))
            _ = try await store.create(
                SpecialDraft(
                    displayName: product.name, width: String(product.width), height: String(product.height),
                    originalPrice: product.original, price: product.price),
                image: image.path)
        }
    }
}
