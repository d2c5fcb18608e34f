import Foundation
import GatewayCore
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request NIO's HTTP decoder refused, before routing, in the one error shape.
///
/// Without it Hummingbird answers an empty `400`. A request line or header block over the decoder's
/// limits gets `431`, or `414` when the request line alone is too long; anything else the decoder
/// cannot parse gets `400`. The connection is closed after the answer, as the decoder cannot resume.
/// Only the first request of a connection has its request line measured (that needs the raw bytes,
/// before the decoder, and a byte count cannot tell where a later request starts); an over-long
/// request line later on a kept-alive connection answers `431`.
final class HTTPParseErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Longest request line (method, URI, version) the server reads.
    static let maxRequestLineLength = 8 * 1024

    /// The decoder's limits: one header field (or the request line), and the whole head.
    static let maxHeaderFieldSize = 16 * 1024
    static let maxHeaderListSize = 32 * 1024

    static let uriTooLong = APIError(
        GatewayError(.invalidRequest, "The request URI is longer than \(maxRequestLineLength) bytes."),
        status: .uriTooLong)

    private let requestLine = RequestLineMeter(limit: maxRequestLineLength)
    private var responding = false
    private var answered = false

    func handlerAdded(context: ChannelHandlerContext) {
        // The meter reads raw bytes, so it goes in front of the HTTP decoder.
        try? context.pipeline.syncOperations.addHandler(requestLine, position: .first)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: responding = true
        case .end: responding = false
        case .body: break
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parseError = error as? HTTPParserError, !responding, !answered else {
            context.fireErrorCaught(error)
            return
        }
        answered = true
        let apiError: APIError
        switch parseError {
        case .headerOverflow where requestLine.exceeded:
            apiError = Self.uriTooLong
        case .headerOverflow:
            apiError = APIError(
                GatewayError(.invalidRequest, "The request line or header fields are too large."),
                status: .requestHeaderFieldsTooLarge)
        default:
            apiError = APIError(
                GatewayError(.invalidRequest, "The request is not valid HTTP/1.1."), status: .badRequest)
        }
        let requestID = ErrorMiddleware.newRequestID()
        let body = apiError.body(requestID: requestID)
        var headers = apiError.headers
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = String(body.count)
        headers[.connection] = "close"
        headers[.requestID] = requestID
        context.write(
            wrapOutboundOut(.head(HTTPResponse(status: apiError.status, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(data: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Measures the first request line of a connection from the raw bytes, for ``HTTPParseErrorHandler``.
final class RequestLineMeter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let limit: Int
    private var length = 0
    private var done = false
    /// Whether the first request line ran over the limit (finished or not).
    private(set) var exceeded = false

    init(limit: Int) { self.limit = limit }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return context.fireChannelRead(data) }
        let buffer = unwrapInboundIn(data)
        if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            length += newline - buffer.readableBytesView.startIndex
            done = true
        } else {
            length += buffer.readableBytes
        }
        exceeded = length > limit
        context.fireChannelRead(data)
        // Measured: out of the way for the rest of the connection.
        if done { context.pipeline.syncOperations.removeHandler(context: context, promise: nil) }
    }
}
