import Foundation

/// The API contract, `openapi.yaml`, as shipped with the build: the server serves it, tests read it.
public enum Contract {
    public static let yaml: Data = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { preconditionFailure("openapi.yaml is missing from the build") }
        return data
    }()
}
