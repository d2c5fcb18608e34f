import Logging

/// An emulator that keeps the context it was built with: its clock, outbox, logger and callback sender are the
/// context's, so it stores the context and what is its vendor's only.
public protocol ContextEmulator: VendorEmulator {
    var context: EmulatorContext { get }
}

extension ContextEmulator {
    package var clock: any WallClock { context.clock }
    package var outbox: SandboxOutbox { context.outbox }
    package var logger: Logger { context.logger }
    package var callbacks: CallbackSender { context.callbacks }
}
