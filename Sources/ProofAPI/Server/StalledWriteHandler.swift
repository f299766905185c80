import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client stopped reading a response.
///
/// A response written faster than the client reads fills the socket and then the channel's
/// buffer, and the channel turns unwritable; the handler writing the body (an export, holding an
/// export slot, a database connection and its snapshot) then waits for it to drain. The idle
/// timeout does not see this — bytes are pending, nothing is idle — so a client that opens a
/// download and never reads would hold all of that for ever. When the channel stays unwritable
/// for `timeout` without a single drain, this closes the connection: the pending write fails, the
/// body ends, and everything it held is given back. A slow client that keeps reading makes the
/// channel writable again every time its buffer drains, and is never cut.
///
/// Sits in each HTTP/1 connection's pipeline (Hummingbird's `additionalChannelHandlers`), one
/// instance per connection.
final class StalledWriteHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    let timeout: TimeAmount
    private var stall: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stall?.cancel()
            stall = nil
        } else if stall == nil {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            stall = context.eventLoop.scheduleTask(in: timeout) {
                loopBound.value.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stall?.cancel()
        stall = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stall?.cancel()
        stall = nil
        context.fireChannelInactive()
    }
}
