import Foundation
import HTTPTypes
import OpenAPIRuntime
import QuadAPI
import QuadCore

/// The platform's own operations of the contract (health, the contract itself, the event stream, images); each
/// feature implements its own in its module.
struct PlatformOperations: APIProtocol {
    /// Hashed once: the middleware then only compares it.
    static let contractETag = HTTPCache.etag(for: Contract.yaml)

    let platform: Platform
    let eventStreams: EventStreams
    let records: RecordFiles
    let health = HealthCheck()
}

extension PlatformOperations {
    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        let database = platform.database
        if await health.healthy({ await database.ping() }) {
            return .ok(.init(body: .json(.init(status: .ok))))
        }
        return .serviceUnavailable(.init(body: .json(.init(status: .unavailable))))
    }

    func getMetrics(_ input: Operations.GetMetrics.Input) async throws -> Operations.GetMetrics.Output {
        .ok(.init(body: .plainText(HTTPBody(await platform.metrics.scrape(platform: platform)))))
    }

    func getContract(_ input: Operations.GetContract.Input) async throws -> Operations.GetContract.Output {
        .ok(.init(headers: .init(eTag: Self.contractETag), body: .yaml(HTTPBody(Contract.yaml))))
    }

    func streamEvents(_ input: Operations.StreamEvents.Input) async throws -> Operations.StreamEvents.Output {
        let info = RequestInfo.current
        let body = try eventStreams.open(
            client: ClientKey.of(info.person, address: info.clientAddress),
            person: info.person?.username.lowercased(),
            asked: .init(lastEventId: input.headers.lastEventID ?? input.query.lastEventId, types: input.query.types))
        info.headers.set(.cacheControl, "no-cache")
        info.headers.set(.xAccelBuffering, "no")
        return .ok(.init(body: .textEventStream(body)))
    }

    /// `GET /images/{sha256}.{ext}`: immutable, with the hash as its ETag.
    func getImage(_ input: Operations.GetImage.Input) async throws -> Operations.GetImage.Output {
        let file = input.path.file
        let parts = file.split(separator: ".")
        guard parts.count == 2, parts[0].count == 64, parts[0].allSatisfy(\.isHexDigit),
            let wanted = ImageFormat(fileExtension: parts[1]),
            let (format, bytes) = try await platform.images.find(sha256: String(parts[0])), format == wanted
        else { throw Problem.notFound("There is no image \(file).") }
        RequestInfo.current.headers.set(.eTag, "\"\(parts[0])\"")
        RequestInfo.current.headers.set(.cacheControl, CachePolicy.immutable.rawValue)
        let body = HTTPBody(bytes.readableBytesView)
        switch format {
        case .jpeg: return .ok(.init(body: .jpeg(body)))
        case .png: return .ok(.init(body: .png(body)))
        case .webp: return .ok(.init(body: .imageWebp(body)))
        }
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

/// Import and export (`RecordFiles`).
extension PlatformOperations {
    func exportRecords(_ input: Operations.ExportRecords.Input) async throws -> Operations.ExportRecords.Output {
        switch try await records.export(input.path.kind) {
        case .csv(let file):
            RequestInfo.current.headers.set(.contentDisposition, "attachment; filename=\"\(input.path.kind).csv\"")
            return .ok(.init(body: .csv(HTTPBody(file))))
        case .calendar(let file):
            RequestInfo.current.headers.set(.contentDisposition, "attachment; filename=\"\(input.path.kind).ics\"")
            return .ok(.init(body: .textCalendar(HTTPBody(file))))
        }
    }

    func importRecords(_ input: Operations.ImportRecords.Input) async throws -> Operations.ImportRecords.Output {
        guard case .csv(let body) = input.body else { throw Problem.malformedBody("Send the file as text/csv.") }
        let bytes = try await Data(collecting: body, upTo: BodyLimit.upload)
        guard let text = String(data: bytes, encoding: .utf8) else {
            throw ValidationFailure(field: "file", message: "Send the file in UTF-8.")
        }
        let summary = try await records.importFile(input.path.kind, text)
        return .ok(
            .init(body: .json(.init(added: summary.added, changed: summary.changed, unchanged: summary.unchanged))))
    }
}

extension HTTPField.Name {
    /// Asks nginx not to buffer a stream.
    static let xAccelBuffering = HTTPField.Name("X-Accel-Buffering")!
}
