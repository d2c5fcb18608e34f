import GatewayCore
import GatewayTestSupport
import Testing

@Suite("RoutingTable")
struct RoutingTableTests {
    let registry: ProviderRegistry

    init() throws {
        registry = try makeRegistry([
            ScriptedProvider(id: "alpha", channels: [.sms, .voice]),
            ScriptedProvider(id: "beta", channels: [.sms, .email]),
            ScriptedProvider(id: "gamma", channels: [.push]),
        ])
    }

    func request(_ channel: Channel, forced: String? = nil) throws -> StartVerification {
        let destination: Destination =
            switch channel {
            case .email: .email("ana@example.com")
            case .push: .identity("user-1234")
            default: .phone(try PhoneNumber(parsing: "+16505553434"))
            }
        return StartVerification(destination: destination, channel: channel, forcedProvider: forced)
    }

    func describe(_ skip: RoutingTable.Skip) -> String { "\(skip.providerID):\(skip.reason)" }

    func candidateIDs(_ table: RoutingTable, _ request: StartVerification) -> [String] {
        table.candidates(for: request, registry: registry).candidates.map(\.id)
    }

    @Test("a channel with a route uses that route, in its order")
    func channelRoute() throws {
        let table = RoutingTable(routes: [.sms: ["beta", "alpha"]], defaultOrder: ["alpha", "beta"])
        let (candidates, skipped) = table.candidates(for: try request(.sms), registry: registry)
        #expect(candidates.map(\.id) == ["beta", "alpha"])
        #expect(skipped.isEmpty)
    }

    @Test("a channel without a route uses the default order, skipping providers that cannot send it")
    func defaultOrder() throws {
        let table = RoutingTable(routes: [.sms: ["beta"]], defaultOrder: ["beta", "alpha", "gamma"])
        let (candidates, skipped) = table.candidates(for: try request(.voice), registry: registry)
        #expect(candidates.map(\.id) == ["alpha"])
        #expect(
            skipped.map(describe) == [
                "beta:channel_not_supported",
                "gamma:channel_not_supported",
            ])
        #expect(candidateIDs(table, try request(.push)) == ["gamma"])
        #expect(candidateIDs(table, try request(.email)) == ["beta"])
    }

    @Test("a forced provider replaces the route")
    func forcedProvider() throws {
        let table = RoutingTable(routes: [.sms: ["beta", "alpha"]], defaultOrder: ["beta"])
        let (candidates, skipped) = table.candidates(for: try request(.sms, forced: "alpha"), registry: registry)
        #expect(candidates.map(\.id) == ["alpha"])
        #expect(skipped.isEmpty)
    }

    @Test("a forced provider that cannot send the channel is skipped with the reason")
    func forcedProviderWrongChannel() throws {
        let table = RoutingTable(defaultOrder: ["alpha"])
        let (candidates, skipped) = table.candidates(for: try request(.sms, forced: "gamma"), registry: registry)
        #expect(candidates.isEmpty)
        #expect(skipped.map(describe) == ["gamma:channel_not_supported"])
    }

    @Test("an unknown provider is skipped as unknown_provider")
    func unknownProviderSkipped() throws {
        let table = RoutingTable(routes: [.sms: ["ghost", "alpha"]], defaultOrder: [])
        let (candidates, skipped) = table.candidates(for: try request(.sms), registry: registry)
        #expect(candidates.map(\.id) == ["alpha"])
        #expect(skipped.map(describe) == ["ghost:unknown_provider"])
        let forced = table.candidates(for: try request(.sms, forced: "phantom"), registry: registry)
        #expect(forced.candidates.isEmpty)
        #expect(forced.skipped.map(describe) == ["phantom:unknown_provider"])
    }

    @Test("a table naming only known providers for channels they serve has no problems")
    func validTable() {
        let table = RoutingTable(
            routes: [.sms: ["alpha", "beta"], .voice: ["alpha"], .email: ["beta"], .push: ["gamma"]],
            defaultOrder: ["alpha", "beta", "gamma"])
        #expect(table.problems(against: registry).isEmpty)
    }

    @Test("problems name unknown providers in routes and in the default order")
    func unknownProviders() {
        let table = RoutingTable(routes: [.sms: ["alpha", "ghost"]], defaultOrder: ["phantom", "beta"])
        #expect(
            table.problems(against: registry) == [
                "routing: default order names unknown provider `phantom`",
                "routing: route for sms names unknown provider `ghost`",
            ])
    }

    @Test("problems name providers routed for a channel they cannot send, and empty routes")
    func channelMismatch() {
        let table = RoutingTable(
            routes: [.voice: ["beta"], .push: ["alpha", "gamma"], .whatsapp: []], defaultOrder: ["alpha"])
        let problems = table.problems(against: registry)
        #expect(
            Set(problems) == [
                "routing: provider `beta` cannot send voice",
                "routing: provider `alpha` cannot send push",
                "routing: route for whatsapp lists no provider",
            ])
        #expect(problems.count == 3)
    }
}
