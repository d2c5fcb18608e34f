import Synchronization

/// Rows of a plugin's ``VendorErrorTable`` armed for its emulator's next calls: the emulator answers the next
/// call of the row's operation (any call, for a row without one) with the vendor's own error answer for that
/// row, once, instead of handling it. The provider conformance suite reaches every row this way, including
/// those no sandbox scenario produces (a low balance, a barred account), and checks each maps as its row says.
///
/// A test seam, in the package only: the sandbox's HTTP fault switch (``FaultSwitch``) stays the operators' one.
package final class EmulatorErrorSwitch: Sendable {
    private let armed = Mutex<[VendorErrorRow]>([])

    package init() {}

    /// Answers the next matching call with `row`'s error.
    package func arm(_ row: VendorErrorRow) {
        armed.withLock { $0.append(row) }
    }

    /// The armed row for a call of `operation`, taken (it answers once); `nil` when none is armed for it.
    package func take(operation: String) -> VendorErrorRow? {
        armed.withLock { rows in
            guard let index = rows.firstIndex(where: { $0.operation == nil || $0.operation == operation }) else {
                return nil
            }
            return rows.remove(at: index)
        }
    }

    /// Disarms every row.
    package func clear() {
        armed.withLock { $0.removeAll() }
    }
}
