import Foundation
import OpenAPIRuntime
import QuadAPI

/// The generated server interface, implemented. Each feature adds its operations in an extension
/// in its own folder.
struct APIHandler: APIProtocol {
    /// Hashed once: the middleware then only compares it.
    static let contractETag = HTTPCache.etag(for: Contract.yaml)

    let platform: Platform
    let rooms: Rooms
    let accounts: Accounts
    let specials: Specials
    let library: Library
    let timetable: Timetable
}

extension APIHandler {
    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        if await platform.database.ping() {
            return .ok(.init(body: .json(.init(status: .ok))))
        }
        return .serviceUnavailable(.init(body: .json(.init(status: .unavailable))))
    }

    func getContract(_ input: Operations.GetContract.Input) async throws -> Operations.GetContract.Output {
        .ok(.init(headers: .init(eTag: Self.contractETag), body: .yaml(HTTPBody(Contract.yaml))))
    }

    func uploadImage(_ input: Operations.UploadImage.Input) async throws -> Operations.UploadImage.Output {
        let body: HTTPBody =
            switch input.body {
            case .jpeg(let body), .png(let body), .imageWebp(let body), .binary(let body): body
            }
        let image = try await platform.images.store(try await ImageStore.collect(body))
        return .created(
            .init(
                body: .json(
                    .init(sha256: image.sha256, url: image.path, contentType: image.format.mediaType, size: image.size))
            ))
    }
}
