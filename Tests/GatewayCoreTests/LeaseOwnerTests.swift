import Foundation
import GatewayCore
import GatewayTestSupport
import Synchronization
import Testing

/// Instances as a test says they are: `dead` ones are dead, every other is alive.
final class FixedLeaseOwners: LeaseOwners {
    let instanceID: String
    private let deadOnes: Mutex<Set<String>>
    private let asked = Mutex(0)

    init(_ instanceID: String, dead: Set<String> = []) {
        self.instanceID = instanceID
        deadOnes = Mutex(dead)
    }

    func isDead(_ id: String) async -> Bool {
        asked.withLock { $0 += 1 }
        return deadOnes.withLock { $0.contains(id) }
    }

    var questions: Int { asked.withLock { $0 } }
}

@Suite("Leases carry their instance")
struct LeaseOwnerTests {
    /// A verification whose check `owner` was at the vendor when its instance died: one attempt reserved,
    /// the lease running for another 30 seconds.
    static func leftByACrash(_ h: ServiceHarness, owner: String) async throws -> String {
        let id = try await h.service.start(try .sms()).id
        let modified = try await h.store.modify(id: id, durability: .answered) { record in
            var next = record
            next.attempts += 1
            next.checkLeaseUntil = h.clock.now.addingTimeInterval(30)
            next.checkLeaseOwner = owner
            next.checkLeaseHoldsAttempt = true
            next.version += 1
            return next
        }
        #expect(modified.written != nil)
        return id
    }

    @Test("a check takes over at once the lease of a dead instance, and its attempt is given back")
    func deadOwnersLeaseIsTakenOver() async throws {
        let provider = ScriptedProvider(id: "alpha")
        provider.scriptCheck(.succeed(.approved))
        let owners = FixedLeaseOwners("in_live", dead: ["in_dead"])
        let h = try ServiceHarness([provider], leaseOwners: owners)
        let id = try await Self.leftByACrash(h, owner: "in_dead")
        let began = ContinuousClock.now
        let outcome = try await h.check(id, "123456")
        #expect(ContinuousClock.now - began < .seconds(5))
        #expect(outcome.record.status == .approved)
        let stored = try await h.stored(id)
        // One attempt: the dead check's was given back before this one reserved its own.
        #expect(stored.attempts == 1)
        #expect(stored.checkLeaseUntil == nil && stored.checkLeaseOwner == nil && !stored.checkLeaseHoldsAttempt)
        #expect(provider.calls(.check).count == 1)
    }

    @Test("a dead instance's lease on the last attempt does not refuse the right code")
    func deadOwnersLastAttempt() async throws {
        let provider = ScriptedProvider(id: "alpha")
        provider.scriptCheck(.succeed(.wrongCode), .succeed(.wrongCode), .succeed(.wrongCode), .succeed(.wrongCode))
        provider.scriptCheck(.succeed(.approved))
        let h = try ServiceHarness([provider], leaseOwners: FixedLeaseOwners("in_live", dead: ["in_dead"]))
        let id = try await h.service.start(try .sms()).id
        for _ in 0..<4 { await expectAsyncGatewayError(.incorrectCode) { try await h.check(id, "000000") } }
        _ = try await h.store.modify(id: id, durability: .answered) { record in
            var next = record
            next.attempts += 1
            next.checkLeaseUntil = h.clock.now.addingTimeInterval(30)
            next.checkLeaseOwner = "in_dead"
            next.checkLeaseHoldsAttempt = true
            next.version += 1
            return next
        }
        #expect(try await h.check(id, "123456").record.status == .approved)
        #expect(try await h.stored(id).attempts == 5)
    }

    @Test("a live instance's lease is waited for, and once it lapses its attempt stays spent")
    func liveOwnersLeaseIsKept() async throws {
        let provider = ScriptedProvider(id: "alpha")
        provider.scriptCheck(.succeed(.approved))
        let owners = FixedLeaseOwners("in_live")
        let h = try ServiceHarness([provider], leaseOwners: owners)
        let id = try await Self.leftByACrash(h, owner: "in_other")
        // The lease lapses on the manual clock; the check waits (polling) until then.
        let check = inFlight { () throws(GatewayError) in try await h.check(id, "123456") }
        while owners.questions == 0 { await Task.yield() }
        h.clock.advance(by: 31)
        let outcome = try await check.value.get()
        #expect(outcome.record.status == .approved)
        #expect(try await h.stored(id).attempts == 2)
    }

    @Test("a lease is taken in this instance's name and given back by the check's end")
    func leasesCarryTheOwner() async throws {
        let provider = ScriptedProvider(id: "alpha")
        let store = InMemoryVerificationStore()
        let h = try ServiceHarness([provider], store: store, leaseOwners: FixedLeaseOwners("in_me"))
        let id = try await h.service.start(try .sms()).id
        let gate = ScriptedGate()
        provider.scriptCheck(
            .run {
                await gate.wait()
                return .approved
            })
        let check = inFlight { () throws(GatewayError) in try await h.check(id, "123456") }
        var held = try await h.stored(id)
        while held.checkLeaseUntil == nil {
            await Task.yield()
            held = try await h.stored(id)
        }
        #expect(held.checkLeaseOwner == "in_me" && held.checkLeaseHoldsAttempt && held.attempts == 1)
        gate.open()
        _ = try await check.value.get()
        let done = try await h.stored(id)
        #expect(done.checkLeaseOwner == nil && !done.checkLeaseHoldsAttempt)
    }
}
