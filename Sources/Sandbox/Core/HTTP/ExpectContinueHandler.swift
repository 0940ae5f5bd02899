import HTTPTypes
import NIOCore
import NIOHTTPTypes
import StageKit

/// Answers `Expect: 100-continue` with an interim `100 Continue`, which Hummingbird 2.28 never
/// sends.
///
/// curl sends the expectation for bodies over 1 MiB and then waits up to a second for the interim
/// response before sending the body anyway, which cost the sandbox more than half its throughput.
/// The handler sits between the HTTP codec and Hummingbird (one instance per connection, added
/// through `HTTP1Channel.Configuration.additionalChannelHandlers`) and writes the interim response
/// as soon as the request head arrives. The request itself passes through unchanged; should the
/// route reject it without reading the body, Hummingbird drains the body as for any request.
///
/// Clients that send `Expect: 100-continue` wait for the interim response before sending anything
/// more, so it cannot interleave with the response to an earlier pipelined request.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = self.unwrapInboundIn(data),
            let expectation = head.headerFields[.expect],
            expectation.lowercased() == "100-continue"
        {
            context.writeAndFlush(self.wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
