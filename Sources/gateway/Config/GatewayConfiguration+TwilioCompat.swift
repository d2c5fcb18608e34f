import Foundation
import GatewayCore

extension GatewayConfiguration {
    /// The Twilio-compatible front door (docs/twilio-compat.md):
    ///
    /// ```yaml
    /// twilio_compat:
    ///   account_sid: AC0123456789abcdef0123456789abcdef   # answers' account_sid; a Basic user name
    ///   api_key_sids: [SK0123456789abcdef0123456789abcdef] # more Basic user names (optional)
    ///   services:
    ///     - sid: VA0123456789abcdef0123456789abcdef
    ///       friendly_name: Checkout                       # optional, what GET …/Services/{Sid} answers
    ///       providers: [sinch]                            # or: experiment: NAME (from `experiments`)
    ///       fallbacks: [vonage]                           # optional
    ///       failover_on_timeout: false                    # optional
    ///       code_length: 6                                # optional, 4 to 10
    ///       allow_approve: false                          # optional: Status=approved on a verification
    /// ```
    ///
    /// The Basic password is a gateway API key's secret (scope `verify`, or `admin`). Each problem is logged
    /// where it is; a service with one is left out.
    mutating func readTwilioCompat(_ top: ConfigMap, knownProviders: Set<String>) {
        guard let section = top.map("twilio_compat", message: "`twilio_compat` must be a mapping") else { return }
        section.rejectUnknown(["account_sid", "api_key_sids", "services"])
        let accountMessage = "twilio_compat.account_sid must be `AC` and 32 hex digits"
        let account = section.string("account_sid", message: accountMessage)
        if let account, !TwilioCompatSettings.isSID(account, prefix: "AC") {
            section.problem(accountMessage, at: "account_sid")
        } else if !section.has("account_sid") {
            section.problem(accountMessage)
        }
        var settings = TwilioCompatSettings(accountSID: account ?? "")
        if let value = section.value("api_key_sids") {
            let message = "twilio_compat.api_key_sids must be a list of API key SIDs (`SK` and 32 hex digits)"
            for (sid, item) in zip(value.stringList(message: message) ?? [], value.node.items ?? []) {
                if TwilioCompatSettings.isSID(sid, prefix: "SK") {
                    settings.apiKeySIDs.insert(sid)
                } else {
                    value.log.problem(message, at: item.position)
                }
            }
        }
        let servicesMessage = "twilio_compat.services must be a list of {sid, providers or experiment}"
        guard let items = section.list("services", message: servicesMessage) else {
            if !section.has("services") { section.problem(servicesMessage) }
            twilioCompat = settings
            return
        }
        if items.isEmpty { section.problem(servicesMessage, at: "services") }
        var listed: Set<String> = []
        for item in items {
            // A SID listed twice is a problem even when either entry has others of its own.
            if let sid = item.node.member("sid")?.value.string, !listed.insert(sid).inserted {
                item.problem("\(item.name): service `\(sid)` is listed twice")
                continue
            }
            guard let service = readTwilioService(item, knownProviders: knownProviders) else { continue }
            settings.services[service.sid] = service
        }
        twilioCompat = settings
    }

    private func readTwilioService(_ item: ConfigValue, knownProviders: Set<String>) -> TwilioCompatSettings.Service? {
        let at = item.name
        guard let entry = item.map(message: "\(at) must be a mapping with `sid` and `providers` or `experiment`")
        else { return nil }
        entry.rejectUnknown([
            "sid", "friendly_name", "providers", "experiment", "fallbacks", "failover_on_timeout", "code_length",
            "allow_approve",
        ])
        let sidMessage = "\(at).sid must be `VA` and 32 hex digits"
        var sid = entry.string("sid", message: sidMessage)
        if let given = sid, !TwilioCompatSettings.isSID(given, prefix: "VA") {
            entry.problem(sidMessage, at: "sid")
            sid = nil
        } else if !entry.has("sid") {
            entry.problem(sidMessage)
        }
        var valid = sid != nil
        let nameMessage = "\(at).friendly_name must be a string of 1 to 30 characters"
        var friendlyName = "Verification gateway"
        if let name = entry.string("friendly_name", nonEmpty: true, message: nameMessage) {
            if name.count > 30 {
                entry.problem(nameMessage, at: "friendly_name")
            } else {
                friendlyName = name
            }
        }
        var route = Route(name: TwilioCompatSettings.routeName(sid: sid ?? ""), target: .providers([]))
        switch (entry.value("providers"), entry.value("experiment")) {
        case (let list?, nil):
            let message = "\(at).providers must be a non-empty list of provider ids"
            let ids = list.stringList(message: message) ?? []
            if ids.isEmpty {
                list.problem(message)
                valid = false
            }
            for (id, node) in zip(ids, list.node.items ?? []) where !knownProviders.contains(id) {
                list.log.problem("\(at).providers: unknown provider `\(id)`", at: node.position)
                valid = false
            }
            route.target = .providers(ids)
        case (nil, let experiment?):
            let name = experiment.string(nonEmpty: true, message: "\(at).experiment must be an experiment's name")
            if let name, routing?.experiments[name] == nil {
                experiment.problem("\(at).experiment: no experiment named `\(name)` in `experiments`")
                valid = false
            }
            route.target = .experiment(name ?? "")
        case (_?, _?):
            entry.problem("\(at): give `providers` or `experiment`, not both")
            valid = false
        case (nil, nil):
            entry.problem("\(at): give `providers` or `experiment`")
            valid = false
        }
        if let fallbacks = entry.value("fallbacks") {
            let ids = fallbacks.stringList(message: "\(at).fallbacks must be a list of provider ids") ?? []
            for (id, node) in zip(ids, fallbacks.node.items ?? []) where !knownProviders.contains(id) {
                fallbacks.log.problem("\(at).fallbacks: unknown provider `\(id)`", at: node.position)
                valid = false
            }
            route.fallbacks = ids
        }
        route.failoverOnTimeout = entry.bool("failover_on_timeout") ?? false
        let codeLength = entry.int("code_length", in: 4...10)
        let allowsApproval = entry.bool("allow_approve") ?? false
        guard valid, let sid else { return nil }
        return TwilioCompatSettings.Service(
            sid: sid, friendlyName: friendlyName, route: route, codeLength: codeLength, allowsApproval: allowsApproval)
    }
}
