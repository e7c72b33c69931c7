/// The original Library client's model of a book, as the reference describes it: what a drop-in backend must
/// still decode into.
package struct OriginalBook: Decodable {
    package var author: String
    package var categories: String
    package var id: Int
    package var lastCheckedOut: String?
    package var lastCheckedOutBy: String?
    package var publisher: String
    package var title: String
    package var url: String
}
