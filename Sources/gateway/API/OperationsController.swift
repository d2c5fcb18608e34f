import Foundation
import GatewayCore
import Hummingbird

/// `/healthz`, `/readyz`, `/openapi.json`, `/openapi.yaml`, `/.well-known/jwks.json`: no API key needed.
struct OperationsController: Sendable {
    let service: VerificationService
    let signer: VerificationTokenSigner

    func addRoutes(to router: some RouterMethods<GatewayRequestContext>) {
        router.get("healthz") { _, _ in JSONResponse.response(["status": "ok"]) }
        router.get("readyz") { _, _ in
            do {
                // A read of an id that cannot exist proves the store answers.
                _ = try await service.store.record(id: "vf_00000000000000000000000000000000")
                return JSONResponse.response([
                    "status": "ready", "providers": .array(service.registry.providerIDs.map(JSONValue.string)),
                ])
            } catch {
                throw APIError(GatewayError(.internal, "The store is not answering."), status: .serviceUnavailable)
            }
        }
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: try OpenAPIDocument.json.get())))
        }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.yaml)))
        }
        router.get(".well-known/jwks.json") { _, _ in JSONResponse.response(signer.jwks) }
    }
}
