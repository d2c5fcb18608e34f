import GatewayCore
import Testing

@Suite("FaultSwitch")
struct FaultSwitchTests {
    @Test("a new switch injects no fault")
    func startsClear() {
        let faults = FaultSwitch()
        #expect(faults.current == .none)
        #expect(faults.take() == .none)
    }

    @Test("faults without a count stay until changed")
    func persistentFaults() {
        let faults = FaultSwitch()
        let outage = FaultSwitch.Faults(serverErrorStatus: 503)
        faults.set(outage)
        for _ in 0..<5 { #expect(faults.take() == outage) }
        #expect(faults.current == outage)
        faults.clear()
        #expect(faults.take() == .none)
    }

    @Test("remaining counts down with each request and the faults clear after the last one")
    func remainingCountsDown() {
        let faults = FaultSwitch()
        faults.set(FaultSwitch.Faults(latencyMilliseconds: 10, connectionReset: true, remaining: 3))

        let first = faults.take()
        #expect(first.connectionReset)
        #expect(faults.current.remaining == 2)
        let second = faults.take()
        #expect(second.connectionReset)
        #expect(faults.current.remaining == 1)
        let third = faults.take()
        #expect(third.connectionReset)
        #expect(third.latencyMilliseconds == 10)
        #expect(faults.current == .none, "after the last affected request the switch is clear")
        #expect(faults.take() == .none)
    }

    @Test("a count of zero affects no request")
    func zeroRemaining() {
        let faults = FaultSwitch()
        faults.set(FaultSwitch.Faults(serverErrorStatus: 500, remaining: 0))
        #expect(faults.take().serverErrorStatus == nil, "`remaining: 0` means the next 0 requests are affected")
    }

    @Test("concurrent requests consume exactly the counted faults")
    func concurrentTakes() async {
        let faults = FaultSwitch()
        faults.set(FaultSwitch.Faults(serverErrorStatus: 502, remaining: 10))
        let affected = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { faults.take().serverErrorStatus != nil } }
            var count = 0
            for await hit in group where hit { count += 1 }
            return count
        }
        #expect(affected == 10)
        #expect(faults.current == .none)
    }
}
