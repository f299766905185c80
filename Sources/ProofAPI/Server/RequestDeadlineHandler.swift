import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Bounds how long a client may take over a request and stops reading what the server will not use.
///
/// - From a request's head to the end of its body, at most `timeout`: a client dripping its body
///   (a byte every few seconds stays under any idle timeout) is disconnected at the deadline.
/// - A response finished while its request's body is still arriving (a 401, 413 or 415 answered
///   before the body was read) is sent with `Connection: close` and the connection is closed, so
///   the rest of the body is never read.
///
/// Sits in each HTTP/1 connection's pipeline after the HTTP codec (Hummingbird's
/// `additionalChannelHandlers`), one instance per connection.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let timeout: TimeAmount
    /// A request's head arrived and its end has not.
    private var receiving = false
    /// The response being written answers a request still arriving.
    private var closeAfterResponse = false
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            receiving = true
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: timeout) {
                loopBound.value.close(promise: nil)
            }
        case .end:
            receiving = false
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where receiving:
            closeAfterResponse = true
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closeAfterResponse:
            closeAfterResponse = false
            deadline?.cancel()
            deadline = nil
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        default:
            context.write(data, promise: promise)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
