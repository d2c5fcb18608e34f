extension StoreSchema {
    /// Every step, oldest first. Shipped steps are never edited: a change is a new step at the end.
    static let steps: [SchemaStep] = [
        SchemaStep(
            "verifications, events, idempotency keys, api keys",
            [
                .create(
                    SchemaTable(
                        "verifications",
                        [
                            .key("id", .text), .required("destination_kind", .text),
                            .required("destination_value", .text), .required("channel", .text),
                            .required("provider_id", .text), .optional("provider_reference", .text),
                            .required("provider_state", .text), .required("status", .text),
                            .required("attempts", .integer), .required("max_attempts", .integer),
                            .required("sends", .integer), .required("created_at", .real),
                            .required("updated_at", .real), .required("expires_at", .real),
                            .optional("content_language", .text), .required("locales", .text),
                            .optional("experiment_arm", .text), .optional("client_reference", .text),
                            .required("metadata", .text), .optional("api_key_id", .text),
                            .required("version", .integer),
                        ])),
                .index(
                    SchemaIndex(
                        "verifications_provider_reference", on: "verifications", ["provider_id", "provider_reference"])),
                .index(SchemaIndex("verifications_created_at", on: "verifications", ["created_at"])),
                .create(
                    SchemaTable(
                        "verification_events",
                        [
                            SchemaColumn("seq", .sequence), .required("verification_id", .text),
                            .required("kind", .text),
                            .required("at", .real), .required("detail", .text),
                        ])),
                .index(
                    SchemaIndex(
                        "verification_events_verification_id", on: "verification_events", ["verification_id"],
                        thenRowKey: "seq")),
                .create(
                    SchemaTable(
                        "idempotency_keys",
                        [
                            .required("scope", .text), .required("key", .text), .required("fingerprint", .text),
                            .required("created_at", .real), .optional("status", .integer), .optional("body", .blob),
                        ], constraints: ["PRIMARY KEY (scope, key)"])),
            ]),
        SchemaStep(
            "routing: route, experiment, failovers, test numbers",
            [
                .add(.optional("route", .text), to: "verifications"),
                .add(.optional("experiment", .text), to: "verifications"),
                .add(.required("failovers", .text, default: "'[]'"), to: "verifications"),
                .add(.required("test_number", .integer, default: "0"), to: "verifications"),
                .index(SchemaIndex("verifications_experiment", on: "verifications", ["experiment", "created_at"])),
            ]),
        SchemaStep(
            "contracts v2: next action, fallback channels, challenges, pending tokens, check lease",
            [
                .add(.optional("next_action", .text), to: "verifications"),
                .add(.required("fallback_channels", .text, default: "'[]'"), to: "verifications"),
                .add(.required("challenge_attempts", .integer, default: "0"), to: "verifications"),
                .add(.required("token_pending", .integer, default: "0"), to: "verifications"),
                .add(.required("pending_tokens", .text, default: "'{}'"), to: "verifications"),
                .add(.optional("check_lease_until", .real), to: "verifications"),
                .add(.optional("status_reason", .text), to: "verifications"),
            ]),
        SchemaStep(
            "rate-limit counters",
            [
                .create(
                    SchemaTable(
                        "rate_counters",
                        [
                            .key("key", .text), .required("window_start", .integer), .required("expires_at", .real),
                            .required("count", .integer),
                        ], withoutRowID: true)),
                .index(SchemaIndex("rate_counters_expires_at", on: "rate_counters", ["expires_at"])),
            ]),
        SchemaStep(
            "pumping guard: prefix blocks",
            [
                .create(
                    SchemaTable(
                        "prefix_blocks",
                        [
                            .key("prefix", .text), .required("blocked_at", .real), .required("until", .real),
                            .required("starts", .integer), .required("approvals", .integer),
                            .optional("verification_id", .text),
                        ], withoutRowID: true))
            ]),
        SchemaStep(
            "API keys managed with gateway keys",
            [
                .create(
                    SchemaTable(
                        "api_keys",
                        [
                            .key("id", .text), SchemaColumn("hash", .text, "NOT NULL UNIQUE"), .required("name", .text),
                            .required("scopes", .text), .optional("countries", .text), .required("created_at", .real),
                            .optional("revoked_at", .real),
                        ]))
            ]),
        SchemaStep(
            "API keys: their own start limit", [.add(.optional("starts_per_hour", .integer), to: "api_keys")]),
        SchemaStep(
            "status webhooks: the event-log cursor and the delivery queue",
            [
                .create(
                    SchemaTable(
                        "webhook_cursor",
                        [SchemaColumn("id", .integer, "PRIMARY KEY CHECK (id = 1)"), .required("seq", .integer)])),
                .create(
                    SchemaTable(
                        "webhook_deliveries",
                        [
                            .key("id", .text), .required("event_id", .text), .required("endpoint", .text),
                            .required("type", .text), .required("verification_id", .text), .required("payload", .blob),
                            .required("state", .text), .required("attempts", .integer),
                            .required("next_attempt_at", .real), .optional("last_error", .text),
                            .required("created_at", .real), .optional("delivered_at", .real),
                        ], constraints: ["UNIQUE (endpoint, event_id)"])),
                .index(SchemaIndex("webhook_deliveries_due", on: "webhook_deliveries", ["state", "next_attempt_at"])),
                .index(SchemaIndex("webhook_deliveries_created", on: "webhook_deliveries", ["created_at"])),
            ]),
        // A claim made before leases has no record of how far it got: it is taken as having called a vendor.
        SchemaStep(
            "idempotency claims with a lease, their progress, pruning",
            [
                .add(.optional("token", .text), to: "idempotency_keys"),
                .add(.optional("lease_until", .real), to: "idempotency_keys"),
                .add(.required("stage", .integer, default: "0"), to: "idempotency_keys"),
                .add(.optional("verification_id", .text), to: "idempotency_keys"),
                .statement("UPDATE idempotency_keys SET stage = 1 WHERE status IS NULL"),
                .index(SchemaIndex("idempotency_keys_created_at", on: "idempotency_keys", ["created_at"])),
            ]),
        SchemaStep(
            "lease owners: instance heartbeats, the owner of a check lease",
            [
                .create(
                    SchemaTable(
                        "gateway_instances",
                        [
                            .key("id", .text), .required("host", .text), .required("pid", .integer),
                            .required("started_at", .real), .required("heartbeat_at", .real),
                        ])),
                .add(.optional("check_lease_owner", .text), to: "verifications"),
                .add(.required("check_lease_attempt", .integer, default: "0"), to: "verifications"),
            ]),
        // A claim made before owners names none: it passes on only when its lease lapses, as before.
        SchemaStep(
            "idempotency claims name their instance and the vendor call a takeover may ask",
            [
                .add(.optional("owner", .text), to: "idempotency_keys"),
                .add(.optional("provider_id", .text), to: "idempotency_keys"),
                .add(.optional("call_begun_at", .real), to: "idempotency_keys"),
            ]),
        // Verifications started before client secrets have none: only an API key reaches them.
        SchemaStep(
            "client secrets: the hash of a verification's secret",
            [.add(.optional("client_secret_hash", .text), to: "verifications")]),
        // Adaptive routes: counts per route, context, provider and time bucket (the evidence the bandit reads),
        // the context a verification was learned in, and the index a sticky start looks up open verifications by.
        SchemaStep(
            "adaptive routing: evidence, a verification's context, open verifications by destination",
            [
                .create(
                    SchemaTable(
                        "adaptive_evidence",
                        [
                            .required("route", .text), .required("context", .text), .required("provider_id", .text),
                            .required("bucket_start", .integer), .required("bucket_seconds", .integer),
                            .required("starts", .integer), .required("approvals", .integer),
                            .required("failures", .integer),
                        ], constraints: ["PRIMARY KEY (route, context, provider_id, bucket_start, bucket_seconds)"],
                        withoutRowID: true)),
                .index(SchemaIndex("adaptive_evidence_bucket_start", on: "adaptive_evidence", ["bucket_start"])),
                .add(.optional("adaptive_context", .text), to: "verifications"),
                .index(
                    SchemaIndex(
                        "verifications_destination", on: "verifications", ["destination_value", "created_at"])),
            ]),
        // Operator console sessions: a cookie secret's hash, the key it was opened with (by hash), its expiry.
        SchemaStep(
            "operator console sessions",
            [
                .create(
                    SchemaTable(
                        "console_sessions",
                        [
                            .key("id", .text), .required("key_hash", .text), .required("created_at", .real),
                            .required("expires_at", .real),
                        ])),
                .index(SchemaIndex("console_sessions_expires_at", on: "console_sessions", ["expires_at"])),
            ]),
        // The console's figures: a verification's country (set from its number when written; rows from before
        // this step keep NULL, they are not backfilled), the vendor and latency of a vendor call on its event
        // row (older events keep NULL), and refusals counted per kind and minute.
        SchemaStep(
            "console figures: country, vendor call latency, refusal counts",
            [
                .add(.optional("country", .text), to: "verifications"),
                .add(.optional("provider_id", .text), to: "verification_events"),
                .add(.optional("latency_ms", .integer), to: "verification_events"),
                .create(
                    SchemaTable(
                        "refusal_counts",
                        [.required("kind", .text), .required("bucket_start", .integer), .required("count", .integer)],
                        constraints: ["PRIMARY KEY (kind, bucket_start)"], withoutRowID: true)),
                .index(SchemaIndex("refusal_counts_bucket_start", on: "refusal_counts", ["bucket_start"])),
            ]),
        // The segments an accepted send of the gateway's own code was billed in, on its vendor call's event row
        // (NULL for Verify vendors' calls and for events from before this step), for the console's cost.
        SchemaStep(
            "billed segments of own-code sends",
            [.add(.optional("segments", .integer), to: "verification_events")]),
        // When each own-code message on a route with delivery failover must be reported delivered by
        // (docs/routing.md, "Delivery failover"): a row per verification and send, removed once acted on.
        SchemaStep(
            "delivery deadlines",
            [
                .create(
                    SchemaTable(
                        "delivery_deadlines",
                        [
                            .required("verification_id", .text), .required("send", .integer),
                            .required("provider_id", .text), .required("message_id", .text),
                            .required("due_at", .real),
                        ],
                        constraints: ["PRIMARY KEY (verification_id, send)"], withoutRowID: true)),
                .index(SchemaIndex("delivery_deadlines_due", on: "delivery_deadlines", ["due_at"])),
            ]),
        // Own-code delivery outcomes per provider, country, minute, outcome and send-to-delivered bucket
        // (docs/own-codes.md, "Delivery figures"): the console's delivery rate and times. A number without a
        // country is kept as ''.
        SchemaStep(
            "delivery tallies",
            [
                .create(
                    SchemaTable(
                        "delivery_counts",
                        [
                            .required("provider_id", .text), .required("country", .text),
                            .required("minute", .integer), .required("outcome", .text),
                            .required("latency_ms", .integer), .required("count", .integer),
                        ],
                        constraints: ["PRIMARY KEY (provider_id, country, minute, outcome, latency_ms)"],
                        withoutRowID: true)),
                .index(SchemaIndex("delivery_counts_minute", on: "delivery_counts", ["minute"])),
            ]),
        // Webhook endpoints a receiver disabled by answering 410 Gone (docs/operations.md, "Status webhooks"),
        // shared by every instance; a row per endpoint name, removed when an operator enables it again.
        SchemaStep(
            "disabled webhook endpoints",
            [
                .create(
                    SchemaTable(
                        "webhook_endpoints_disabled",
                        [.key("endpoint", .text), .required("disabled_at", .real), .required("reason", .text)]))
            ]),
        // Retention (docs/operations.md, "Retention"): what a verification whose number was anonymized shows
        // (NULL on every other row; its destination_value then holds the number's keyed hash), and how far each
        // retention task that keeps the row (event pruning, anonymizing) has gone, by (created_at, id).
        SchemaStep(
            "retention: anonymized destinations, task progress",
            [
                .add(.optional("destination_masked", .text), to: "verifications"),
                .create(
                    SchemaTable(
                        "retention_progress",
                        [.key("task", .text), .required("created_at", .real), .required("id", .text)])),
            ]),
        // The risk step's marks on a verification (docs/network-signals.md): JSON, NULL when it marked nothing.
        SchemaStep("risk marks", [.add(.optional("risk", .text), to: "verifications")]),
    ]
}
