import Foundation
import GatewayCore
import HTTPTypes

extension VonageEmulator {
    static let v2Channels: Set<String> = ["sms", "voice", "whatsapp", "email", "silent_auth"]

    // MARK: v2

    func startV2(_ body: Data, now: Date, state: VonageEmulatorState) throws -> TransportResponse {
        guard let request = try? JSONDecoder().decode(VonageWire.StartRequest.self, from: body) else {
            return Self.invalid("body", "The request body is not a valid verification request.")
        }
        guard VonageConfiguration.isValidBrand(request.brand) else { return Self.invalid("brand", "Invalid brand.") }
        guard (1...VonageWire.maxWorkflowLength).contains(request.workflow.count) else {
            return Self.invalid("workflow", "A workflow has 1 to 3 channels.")
        }
        for (index, step) in request.workflow.enumerated() {
            guard Self.v2Channels.contains(step.channel) else {
                return Self.invalid("workflow[\(index)].channel", "Unknown channel.")
            }
            if step.channel == "silent_auth", index > 0 {
                return Self.invalid("workflow[\(index)].channel", "silent_auth must be the first channel.")
            }
            // `from` is required for WhatsApp: a WABA-connected number, E.164 without `+` ([SPEC-V2-CUR] FromWhatsApp).
            if step.channel == "whatsapp", !Self.isValidNumber(step.from ?? "") {
                return Self.invalid("workflow[\(index)].from", "WhatsApp needs a from number.")
            }
            if let redirect = step.redirectURL,
                step.channel != "silent_auth" || !SettingSpec.isHTTPURL(redirect)
            {
                return Self.invalid("workflow[\(index)].redirect_url", "Invalid redirect_url.")
            }
            let valid = step.channel == "email" ? step.to.contains("@") : Self.isValidNumber(step.to)
            guard valid else { return Self.invalid("to", "'to' phone number is invalid") }
        }
        if let timeout = request.channelTimeout, !VonageWire.channelTimeouts.contains(timeout) {
            return Self.invalid("channel_timeout", "Must be from 15 to 900.")
        }
        if let length = request.codeLength, !VonageWire.v2CodeLengths.contains(length) {
            return Self.invalid("code_length", "Must be from 4 to 10.")
        }
        let number = request.workflow[0].to
        do {
            if let live = try state.live(number: number) {
                return Self.problem(
                    409, "concurrent", "Conflict", "Concurrent verifications to the same number are not allowed.",
                    requestID: live.id)
            }
            let length = request.codeLength ?? 4
            var created = VonageEmulatorState.Request(
                id: Self.randomID(), api: "v2", number: number, brand: request.brand,
                steps: request.workflow.map {
                    .init(channel: $0.channel, to: $0.to, status: "unused", redirectURL: $0.redirectURL)
                }, position: 0,
                code: Self.randomCode(length: length), codeLength: length, locale: request.locale,
                channelTimeout: settings.channelTimeout
                    ?? TimeInterval(request.channelTimeout ?? VonageWire.defaultChannelTimeout),
                createdAt: now, stepStartedAt: now, wrongChecks: 0, status: "in_progress", finalizedAt: nil, checks: [])
            beginStep(&created, at: 0, now: now)
            try state.put(created)
            let checkURL = created.current.channel == "silent_auth" ? self.checkURL(created.id) : nil
            return Self.json(202, VonageWire.StartResponse(requestID: created.id, checkURL: checkURL))
        }
    }

    /// A code check. On a silent-auth step the code is the one the device got from `check_url` and there is
    /// one attempt ([SPEC-V2-CUR] `checkCode`): before the device followed it there is no code (409
    /// `no-code`), and a wrong one ends the request (410). A right code sends the `event` and `summary`
    /// callbacks (completed); a 410 sends none: its answer says it, and a `failed` summary arriving while the
    /// gateway still holds the check would settle the verification as failed before the 410 is read.
    func checkV2(id: String, body: Data, now: Date, state: VonageEmulatorState) throws -> (TransportResponse, [Data]) {
        guard let check = try? JSONDecoder().decode(VonageWire.CheckRequest.self, from: body),
            (4...10).contains(check.code.count)
        else { return (Self.invalid("code", "Invalid code."), []) }
        do {
            guard var request = try state.request(id), request.api == "v2", request.isLive else {
                return (Self.notFoundV2(), [])
            }
            let silent = request.current.channel == "silent_auth"
            let expected: String
            if silent {
                guard let code = request.silentAuthCode else {
                    let detail = "The current workflow step does not support a code."
                    return (Self.problem(409, "no-code", "Conflict", detail), [])
                }
                expected = code
            } else {
                expected = request.code
            }
            if ConstantTime.equals(check.code, expected) {
                let bodies = try finish(&request, status: "completed", now: now, state: state)
                return (Self.json(200, VonageWire.CheckResponse(requestID: id, status: "completed")), bodies)
            }
            request.wrongChecks += 1
            if silent || request.wrongChecks >= VonageWire.maxChecks {
                _ = try finish(&request, status: "failed", now: now, state: state)
                let detail = "An incorrect code has been provided too many times. Workflow terminated."
                return (Self.problem(410, "expired", "Invalid Code", detail), [])
            }
            try state.put(request)
            let detail = "The code you provided does not match the expected value."
            return (Self.problem(400, "invalid-code", "Invalid Code", detail), [])
        }
    }

    /// Ends a live v2 request and its current step with `status` (`completed`, `failed`); returns the
    /// callbacks that tell: the step's `event`, then the `summary`.
    private func finish(
        _ request: inout VonageEmulatorState.Request, status: String, now: Date, state: VonageEmulatorState
    ) throws -> [Data] {
        request.status = status
        request.steps[request.position].status = status
        request.finalizedAt = now
        try state.put(request)
        return [event(request, channel: request.current.channel, status: status, at: now), summary(request, at: now)]
    }

    func cancelV2(id: String, now: Date, state: VonageEmulatorState) throws -> TransportResponse {
        do {
            guard var request = try state.request(id), request.api == "v2", request.isLive else {
                return Self.notFoundV2()
            }
            if let refusal = cancelRefusal(request, now: now) {
                return Self.problem(409, "conflict", "Conflict", refusal)
            }
            request.status = "cancelled"
            request.finalizedAt = now
            try state.put(request)
            return TransportResponse(status: .noContent)
        }
    }

    func nextWorkflowV2(id: String, now: Date, state: VonageEmulatorState) throws -> TransportResponse {
        do {
            guard var request = try state.request(id), request.api == "v2", request.isLive else {
                return Self.notFoundV2()
            }
            guard request.position + 1 < request.steps.count else {
                return Self.problem(409, "conflict", "Conflict", "There are no more events left to trigger.")
            }
            request.steps[request.position].status = "expired"
            beginStep(&request, at: request.position + 1, now: now)
            try state.put(request)
            return TransportResponse(status: .ok)
        }
    }

    /// The device opened `check_url` over its mobile network: Vonage redirects it to the network's check
    /// ([SPEC-V2-CUR] `silentAuthCheck`, "a series of 30x redirects"), here one hop on the emulator.
    func silentAuthRedirect(id: String, state: VonageEmulatorState) throws -> TransportResponse {
        guard try silentAuthRequest(id, state: state) != nil else { return Self.notFoundV2() }
        return Self.redirect(to: silentAuthURL(id, hop: "network"))
    }

    /// The network's check passed: the redirects end in a `code` the backend submits with a normal check,
    /// as `{request_id, code}` (`SilentAuthConfirmationSuccess`), or, with the step's `redirect_url`, as a
    /// last redirect there with `#request_id=…&code=…`. Nothing completes here; the check does.
    func silentAuthNetwork(id: String, state: VonageEmulatorState) throws -> TransportResponse {
        guard var request = try silentAuthRequest(id, state: state) else { return Self.notFoundV2() }
        let code = request.silentAuthCode ?? Self.randomAlphanumeric(length: 6)
        if request.silentAuthCode == nil {
            request.silentAuthCode = code
            try state.put(request)
        }
        if let redirect = request.current.redirectURL {
            var fragment = URLComponents()
            fragment.queryItems = [
                URLQueryItem(name: "request_id", value: id), URLQueryItem(name: "code", value: code),
            ]
            return Self.redirect(to: redirect + "#" + (fragment.percentEncodedQuery ?? ""))
        }
        return Self.json(200, ["request_id": id, "code": code])
    }

    /// The live v2 request `id` while its silent-auth step is in progress.
    private func silentAuthRequest(_ id: String, state: VonageEmulatorState) throws -> VonageEmulatorState.Request? {
        guard let request = try state.request(id), request.api == "v2", request.isLive,
            request.current.channel == "silent_auth"
        else { return nil }
        return request
    }

    static func redirect(to location: String) -> TransportResponse {
        var headers = HTTPFields()
        headers[.location] = location
        return TransportResponse(status: .found, headerFields: headers)
    }

    static func randomAlphanumeric(length: Int) -> String {
        let characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<length).map { _ in characters.randomElement() ?? "0" })
    }

    /// Why a cancel is refused now: within the first 30 s, or once the second step has begun.
    func cancelRefusal(_ request: VonageEmulatorState.Request, now: Date) -> String? {
        if now.timeIntervalSince(request.createdAt) < settings.cancelWindow {
            return "Verification request ['\(request.id)'] can't be cancelled within the first 30 seconds."
        }
        if request.position > 0 {
            return
                "Verification request ['\(request.id)'] can't be cancelled now. Too many attempts to re-deliver have already been made."
        }
        return nil
    }

    static func invalid(_ name: String, _ reason: String) -> TransportResponse {
        problem(
            422, "invalid-params", "Invalid params", "The value of one or more parameters is invalid.",
            invalid: [.init(name: name, reason: reason)])
    }

    static func notFoundV2() -> TransportResponse {
        problem(404, "not-found", "Not Found", "Request not found or already verified.")
    }

    // MARK: v1

    func startV1(_ fields: [String: String], now: Date, state: VonageEmulatorState) throws -> TransportResponse {
        guard let number = fields["number"], !number.isEmpty else { return Self.v1(status: "2", "Missing number") }
        guard let brand = fields["brand"], !brand.isEmpty else { return Self.v1(status: "2", "Missing brand") }
        guard brand.count <= 18 else { return Self.v1(status: "3", "Invalid value for brand") }
        guard Self.isValidNumber(number) else { return Self.v1(status: "3", "Invalid value for number") }
        let workflowID = fields["workflow_id"].map { Int($0) } ?? 1
        guard let workflowID, let channels = VonageWire.v1Workflows[workflowID] else {
            return Self.v1(status: "3", "Invalid value for workflow_id")
        }
        let length = fields["code_length"].map { Int($0) } ?? 4
        guard let length, VonageWire.v1CodeLengths.contains(length) else {
            return Self.v1(status: "3", "Invalid value for code_length")
        }
        if let lg = fields["lg"], !VonageWire.v1Languages.contains(lg) {
            return Self.v1(status: "3", "Invalid value for lg")
        }
        if fields["pin_code"] != nil {
            return Self.v1(status: "20", "This account does not support the parameter: pin_code.")
        }
        do {
            if let live = try state.live(number: number) {
                return Self.v1(
                    status: "10", "Concurrent verifications to the same number are not allowed", requestID: live.id)
            }
            var created = VonageEmulatorState.Request(
                id: UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(), api: "v1", number: number,
                brand: brand,
                steps: channels.map { .init(channel: $0 == .voice ? "tts" : "sms", to: number, status: "unused") },
                position: 0, code: Self.randomCode(length: length), codeLength: length, locale: fields["lg"],
                channelTimeout: settings.channelTimeout ?? 300, createdAt: now, stepStartedAt: now, wrongChecks: 0,
                status: "in_progress", finalizedAt: nil, checks: [])
            beginStep(&created, at: 0, now: now)
            try state.put(created)
            return Self.json(200, VonageWire.V1Response(status: "0", requestID: created.id))
        }
    }

    func checkV1(_ fields: [String: String], now: Date, state: VonageEmulatorState) throws -> TransportResponse {
        guard let id = fields["request_id"], !id.isEmpty else { return Self.v1(status: "2", "Missing request_id") }
        guard let code = fields["code"], (4...6).contains(code.count) else {
            return Self.v1(status: "3", "Invalid value for code")
        }
        do {
            guard var request = try state.request(id), request.api == "v1", request.isLive else {
                return Self.v1(
                    status: "6", "The requestId '\(id)' does not exist or its no longer active.", requestID: id)
            }
            let valid = ConstantTime.equals(code, request.code)
            request.checks.append(.init(at: now, code: code, valid: valid))
            if valid {
                request.status = "completed"
                request.finalizedAt = now
                try state.put(request)
                var answer = VonageWire.V1Response(status: "0", requestID: id)
                answer.eventID = request.id.prefix(16).uppercased()
                answer.price = "0.10000000"
                answer.currency = "EUR"
                return Self.json(200, answer)
            }
            request.wrongChecks += 1
            if request.wrongChecks >= VonageWire.maxChecks {
                request.status = "failed"
                request.finalizedAt = now
                try state.put(request)
                return Self.v1(status: "17", "The wrong code was provided too many times", requestID: id)
            }
            try state.put(request)
            return Self.v1(status: "16", "The code inserted does not match the expected value", requestID: id)
        }
    }

    func searchV1(_ fields: [String: String], state: VonageEmulatorState) throws -> TransportResponse {
        guard let id = fields["request_id"], !id.isEmpty else { return Self.v1(status: "2", "Missing request_id") }
        guard let request = try state.request(id), request.api == "v1" else {
            return Self.v1(status: "101", "No response found")
        }
        let word: String
        switch request.status {
        case "in_progress": word = "IN PROGRESS"
        case "completed": word = "SUCCESS"
        case "failed": word = "FAILED"
        case "expired": word = "EXPIRED"
        default: word = "CANCELLED"
        }
        var answer = VonageWire.V1Response(status: word, requestID: id)
        answer.accountID = VonageSandbox.accountID
        answer.number = request.number
        answer.senderID = "verify"
        answer.price = "0.10000000"
        answer.currency = "EUR"
        answer.dateSubmitted = VonageWire.v1Date(request.createdAt)
        answer.dateFinalized = request.finalizedAt.map(VonageWire.v1Date)
        let started = request.steps.filter { $0.initiatedAt != nil }
        answer.firstEventDate = started.first?.initiatedAt.map(VonageWire.v1Date)
        answer.lastEventDate = started.last?.initiatedAt.map(VonageWire.v1Date)
        answer.events = started.enumerated().map {
            .init(type: $0.element.channel, id: "\(request.id.prefix(8))\($0.offset)")
        }
        answer.checks = request.checks.map {
            .init(dateReceived: VonageWire.v1Date($0.at), code: $0.code, status: $0.valid ? "VALID" : "INVALID")
        }
        return Self.json(200, answer)
    }

    func controlV1(_ fields: [String: String], now: Date, state: VonageEmulatorState) throws -> TransportResponse {
        guard let id = fields["request_id"], !id.isEmpty else { return Self.v1(status: "2", "Missing request_id") }
        guard let command = fields["cmd"] else { return Self.v1(status: "2", "Missing cmd") }
        guard command == "cancel" || command == "trigger_next_event" else {
            return Self.v1(status: "3", "Invalid value for cmd")
        }
        do {
            guard var request = try state.request(id), request.api == "v1", request.isLive else {
                return Self.v1(status: "6", "The requestId '\(id)' does not exist or its no longer active.")
            }
            if command == "cancel" {
                if let refusal = cancelRefusal(request, now: now) { return Self.v1(status: "19", refusal) }
                request.status = "cancelled"
                request.finalizedAt = now
            } else {
                guard request.position + 1 < request.steps.count else {
                    return Self.v1(status: "19", "No more events are left to execute for the request ['\(id)']")
                }
                request.steps[request.position].status = "expired"
                beginStep(&request, at: request.position + 1, now: now)
            }
            try state.put(request)
            var answer = VonageWire.V1Response(status: "0")
            answer.command = command
            return Self.json(200, answer)
        }
    }
}
