#!/usr/bin/env python3
"""Writes docs/openapi.json and Sources/gateway/API/OpenAPIDocument.swift from one description.

Run: python3 scripts/generate_openapi.py   (the Swift file embeds the JSON the server serves)
"""
import json, pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent

import re
# The regions the server knows (PhoneRegion.named), from the generated libphonenumber metadata.
# `001` (non-geographic) is metadata, not a place: PhoneRegion.named refuses it as a region filter.
REGIONS = sorted(set(re.findall(r"^R\t([A-Z]{2})\b", (ROOT / "Sources/GatewayCore/PhoneNumbers/GeneratedPhoneMetadata.swift").read_text(), re.M)))
def region(**extra): return {"$ref": "#/components/schemas/Region", **extra}
# VerificationsController.isLanguageTag: a 2-3 letter language, then subtags of 1-8 letters or digits.
LANGUAGE_TAG = {"type": "string", "minLength": 2, "maxLength": 35, "pattern": "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"}
# AdminController.date: RFC 3339 in the form Foundation's ISO 8601 parser reads (no fractions, offsets up to 18 h).
DATE_TIME = {"type": "string", "format": "date-time", "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](Z|[+-](0[0-9]|1[0-7]):[0-5][0-9]|[+-]18:00)$"}

def ref(name): return {"$ref": f"#/components/schemas/{name}"}
# AppVerificationProof.Kind; `safety_net` is retired (AppVerificationProof.retiredKinds) and refused with its replacement.
PROOF_TYPES = ["recaptcha", "recaptcha_enterprise", "ios_receipt", "play_integrity", "captcha"]
def err(desc): return {"description": desc, "content": {"application/json": {"schema": ref("Error")}}}
def ok(desc, schema, headers=None):
    r = {"description": desc, "content": {"application/json": {"schema": schema}}}
    if headers: r["headers"] = headers
    return r

ERRORS = {
    "400": err("Invalid request: bad JSON, unknown or missing fields, wrong types, bad phone number, unsupported channel, app verification required."),
    "401": err("Missing or invalid API key."),
    "403": err("The API key lacks the scope, the destination is blocked, or app verification failed."),
    "413": err("The request body is too large."),
    "414": err("The request URI is too long (over 8 KiB)."),
    "415": err("The request body is not `application/json` (see the rule in the description above)."),
    "431": err("The request's header fields are too large (one over 16 KiB, or over 32 KiB together)."),
    "502": err("The vendor failed (see error.provider)."),
    "503": err("No provider is available (`no_provider_available`), or the store is unavailable (`store_unavailable`)."),
    "504": err("The vendor did not answer in time."),
}
def errors(*codes): return {c: ERRORS[c] for c in codes}

CALLBACK_DESCRIPTION = ("The vendor's raw request (method, full public URL, headers, body) goes to the provider's plugin, "
    "which checks the vendor's signature (Twilio `X-Twilio-Signature` over the full public URL, Sinch's signed callbacks, "
    "Vonage's signed JWT) and turns the request into updates that the gateway applies. The URL a vendor is given is "
    "`<public_base_url>/callbacks/<provider id>`.")
CALLBACK_BODY = {"required": False, "description": "Whatever the vendor sends (form-encoded or JSON); the gateway passes it unread to the plugin.",
                 "content": {"*/*": {"schema": {}}}}
CALLBACK_RESPONSES = {
    "200": {"description": "Accepted. The body is whatever the vendor expects, often empty.", "content": {"*/*": {"schema": {}}}},
    "401": err("`unauthorized`: the vendor's signature is missing or wrong; nothing changed."),
    "404": err("No provider with this id, or it takes no callbacks."),
    "413": ERRORS["413"],
}

ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^vf_[0-9a-f]{32}$"}}
PROVIDER = {"name": "provider", "in": "path", "required": True, "schema": {"type": "string"}}

# Channel and status names, as GatewayCore spells them (Channel, VerificationStatus).
CHANNELS = ["sms", "voice", "whatsapp", "email", "push", "flashcall", "silent_auth"]
STATUSES = ["pending", "approved", "denied", "canceled", "expired", "max_attempts_reached", "failed", "blocked"]
def channel(**extra): return {"type": "string", "enum": CHANNELS, **extra}
NULLABLE_NEXT_ACTION = {"oneOf": [ref("NextAction"), {"type": "null"}],
                        "description": "What the app must do next; present only while the verification is pending, null otherwise."}
ANY_JSON = {"description": "Any JSON value."}

IDENTITY_SCHEMA = {"type": "string", "minLength": 8, "maxLength": 64, "pattern": "^[A-Za-z0-9-]+$"}
FACTOR_IDENTITY = {"name": "identity", "in": "query", "required": True, "schema": IDENTITY_SCHEMA,
                   "description": "The user identity the factors were enrolled for."}
FACTOR_PROVIDER = {"name": "provider", "in": "query", "required": False, "schema": {"type": "string"},
                   "description": "The provider keeping the factors; every provider that keeps factors when absent."}
FACTOR_ID = {"name": "factor_id", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9]+$"}}

doc = {
  "openapi": "3.1.0",
  "info": {"title": "Verification Gateway API", "version": "1.0.0",
           "description": "One API in front of several phone-verification vendors. Every error has the shape of `Error`. Routes under `/callbacks/` are called by vendors, not by clients, and take no API key.\n\n"
             "**Request bodies.** On `POST`, `PUT` and `PATCH` a `Content-Type`, when sent, must be `application/json` (parameters such as `charset=utf-8` are fine); without one the body must be empty. Otherwise the answer is `415`. So an empty-bodied resend, cancel or provider action needs no header. A JSON object that repeats a key, at any depth, is refused with `400 invalid_request` naming the key. Bodies over 64 KiB get `413`. The vendor callbacks under `/callbacks/` and the sandbox emulators under `/sandbox/<plugin>/` take what vendors send and are exempt.\n\n"
             "**Methods and limits.** A method a path does not serve answers `405` with an `Allow` header listing the ones it does. A request URI over 8 KiB answers `414`; header fields over 16 KiB each or 32 KiB together answer `431` (a request line too long for the HTTP decoder, on a connection's later request, answers `431` too); a request that is not valid HTTP/1.1 answers `400`. All of these come in the `Error` shape and close nothing but that request (the decoder's refusals close the connection)."},
  "servers": [{"url": "http://127.0.0.1:8080"}],
  "security": [{"bearer": []}],
  "paths": {
    "/v1/verifications": {"post": {
      "operationId": "startVerification", "summary": "Start a verification",
      "parameters": [{"name": "Idempotency-Key", "in": "header", "required": False,
                      "description": "Replays return the first response; the code is never sent twice. A request that died holding the key is taken over as soon as its gateway instance is known dead, at the latest after its lease (the start deadline plus 15 s): the retry answers the verification it stored, starts anew if no vendor was called, asks the vendor when one was (Sinch by reference, Twilio by `to`: what it has is answered, `201` replayed; nothing there, once the dead call can no longer arrive, starts anew), or answers `idempotency_outcome_unknown` when the vendor cannot be asked (docs/architecture.md §9.2).",
                      "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"}}],
      "requestBody": {"required": True, "content": {"application/json": {"schema": ref("StartRequest")}}},
      "responses": {"201": ok("Started. A provider that sets a challenge answers `status: pending`, `sends: 0` and `next_action.type` `solve_challenge`: nothing has been sent yet; answer the challenge at `POST /v1/verifications/{id}/challenge`.", ref("Verification")),
                    **errors("400", "401", "403", "413"),
                    "409": err("`idempotency_conflict`: the Idempotency-Key is in use (or its dead request's vendor call may still arrive: retry shortly) or was reused with another body; `idempotency_outcome_unknown`: an earlier request with this key died after calling a vendor that cannot be asked, before its outcome was stored, so a code may have been sent (start again only with a new key)."),
                    "429": err("Rate limited or too many sends."),
                    **errors("502", "503", "504")}}},
    "/v1/verifications/{id}": {"get": {
      "operationId": "getVerification", "summary": "Current state of a verification",
      "parameters": [ID, {"name": "include", "in": "query", "required": False, "schema": {"type": "string", "enum": ["timeline", "events"]},
                          "description": "`timeline` adds the verification's timeline (route, arm, skipped providers, each vendor call with outcome and latency, each check, each vendor update) under `timeline`; `events` is its older name and puts it under `events`."},
                     {"name": "refresh", "in": "query", "required": False, "schema": {"type": "boolean", "default": False},
                      "description": "`true` asks the vendor for its current state and applies what changed (status, channel, next action) before answering. Never spends a check attempt, so it is how a push or silent-auth verification is polled. A verification that is final, has sent nothing yet, or whose provider has no status call is answered from the store."}],
      "responses": {"200": ok("The verification. When it was approved outside a check (vendor callback or refresh), the first answer that sees the approval carries `token` and `provider_tokens`, once, as the check answer does; later answers do not.", ref("CheckResult")),
                    **errors("400", "401"), "404": err("No verification with this id."),
                    "502": err("Refresh only: the vendor failed (see error.provider)."),
                    "503": err("Refresh only: the provider that started the verification is no longer configured."),
                    "504": err("Refresh only: the vendor did not answer in time.")}}},
    "/v1/verifications/{id}/check": {"post": {
      "operationId": "checkVerification", "summary": "Check a code (for a flash call, the caller number the app intercepted)",
      "description": "Checks of one verification are settled one at a time: a concurrent check waits for the one at the vendor, the first right code approves, and every other answer is `already_approved`. A verification whose channel completes without a code at its provider (push; silent_auth where the vendor finishes it, as Sinch) is never completed by a check: read it with `GET /v1/verifications/{id}?refresh=true`. Vonage's silent_auth ends in a code the device gets from the `open_url` redirects: check it here (one attempt; before the device has it, `invalid_state`).",
      "parameters": [ID],
      "requestBody": {"required": True, "content": {"application/json": {"schema": ref("CheckRequest")}}},
      "responses": {"200": ok("Approved, with the signed token and any vendor tokens; or still pending with a new `next_action` when the vendor asks for another step before it approves", ref("CheckResult")),
                    **errors("400", "401"),
                    "403": err("The verification ended `denied` (`denied`) or `blocked` (`destination_blocked`), during this check or before it."),
                    "404": err("No verification with this id."),
                    "409": err("`already_approved` or `canceled`; `invalid_state` while a challenge is unsolved, or when the provider completes this channel without a code (push, and silent_auth where the vendor finishes it: use GET with `refresh=true`), or Vonage silent_auth before the device followed the URL to its code; `concurrent_verification` when another check held the verification for too long."),
                    "410": err("Expired."),
                    "422": err("Incorrect code; `attempts_remaining` says how many tries are left."),
                    "429": err("No attempts left."),
                    "502": err("The vendor failed (see error.provider), or the verification finally failed (`delivery_failed` with `retryable: false`)."),
                    **errors("503", "504")}}},
    "/v1/verifications/{id}/challenge": {"post": {
      "operationId": "answerChallenge", "summary": "Answer the challenge of a `solve_challenge` next action; a right answer sends the code",
      "parameters": [ID],
      "requestBody": {"required": True, "content": {"application/json": {"schema": ref("ChallengeRequest")}}},
      "responses": {"200": ok("The challenge was solved and the code sent; `next_action` is now null, or the next step", ref("Verification")),
                    **errors("400", "401"),
                    "403": err("`app_verification_failed`: the answer was wrong; nothing was sent and the error's `next_action` holds a fresh challenge. Also `denied` or `destination_blocked` for a verification that ended so."),
                    "404": err("No verification with this id."),
                    "409": err("`invalid_state`: the verification has no challenge to answer; or `already_approved`, `canceled`."),
                    "410": err("Expired."), **errors("413"),
                    "429": err("`max_attempts_reached`: too many answers to this verification's challenges; start a new one."),
                    **errors("502", "503", "504")}}},
    "/v1/verifications/{id}/resend": {"post": {
      "operationId": "resendVerification", "summary": "Send the code again (same vendor; channel change where the vendor can)",
      "parameters": [ID],
      "requestBody": {"required": False, "content": {"application/json": {"schema": ref("ResendRequest")}}},
      "responses": {"200": ok("Sent again", ref("Verification")), **errors("400", "401"),
                    "403": err("The verification ended `denied` or `blocked`."),
                    "404": err("No verification with this id."),
                    "409": err("Already approved or canceled; `invalid_state` while a challenge is unsolved (nothing was sent yet)."),
                    "410": err("Expired."), "429": err("Too many sends."), **errors("502", "503", "504")}}},
    "/v1/verifications/{id}/cancel": {"post": {
      "operationId": "cancelVerification", "summary": "Cancel a pending verification",
      "parameters": [ID],
      "requestBody": {"required": False, "content": {"application/json": {"schema": {"type": "object", "additionalProperties": False}}}},
      "responses": {"200": ok("Canceled", ref("Verification")), **errors("400", "401"),
                    "403": err("The verification ended `denied` or `blocked`."),
                    "404": err("No verification with this id."), "409": err("Already approved."),
                    "410": err("Expired."),
                    "429": err("`max_attempts_reached`: the verification already ended with no attempts left; it stays so."),
                    **errors("502", "504")}}},
    "/v1/providers/{provider}/actions/{action}": {"post": {
      "operationId": "providerAction", "summary": "Run a vendor-specific action a plugin declares",
      "parameters": [PROVIDER,
                     {"name": "action", "in": "path", "required": True, "schema": {"type": "string"}}],
      "requestBody": {"required": False, "content": {"application/json": {"schema": {
          "type": "object", "additionalProperties": False,
          "properties": {"input": {"type": "object", "maxProperties": 32, "additionalProperties": ANY_JSON,
                                   "description": "The action's input; values may be any JSON (strings, numbers, booleans, objects, arrays)."}}}}}},
      "responses": {"200": ok("The action's output", {"type": "object", "required": ["provider", "action", "output"], "properties": {
          "provider": {"type": "string"}, "action": {"type": "string"},
          "output": {"type": "object", "additionalProperties": ANY_JSON, "description": "Values may be any JSON."}}}),
          **errors("400", "401"), "404": err("No such provider or action."), **errors("502", "504")}}},
    "/v1/factors/access-tokens": {"post": {
      "operationId": "createFactorAccessToken", "summary": "Get the access token an app's SDK enrols a device factor (Verify Push) with, for a user identity",
      "description": "The backend asks for it and hands it to the app; the app's SDK creates the factor at the vendor with it and verifies it with the device's key. Twilio: `details` carries `service_sid` and `base_url`, which the SDK needs.",
      "requestBody": {"required": True, "content": {"application/json": {"schema": ref("FactorAccessTokenRequest")}}},
      "responses": {"201": ok("The token", ref("FactorAccessToken")), **errors("400", "401"),
                    "404": err("No such provider, or no configured provider keeps device factors."),
                    **errors("413", "502", "504")}}},
    "/v1/factors": {"get": {
      "operationId": "listFactors", "summary": "The device factors enrolled for a user identity",
      "parameters": [FACTOR_IDENTITY, FACTOR_PROVIDER],
      "responses": {"200": ok("The factors, oldest first; none for an identity the vendor does not know", {"type": "object", "required": ["identity", "factors"], "properties": {
          "identity": {"type": "string"}, "factors": {"type": "array", "items": ref("Factor")}}}),
          **errors("400", "401"), "404": err("No such provider, or no configured provider keeps device factors."), **errors("502", "504")}}},
    "/v1/factors/{factor_id}": {
      "get": {
        "operationId": "getFactor", "summary": "One device factor of a user identity",
        "parameters": [FACTOR_ID, FACTOR_IDENTITY, FACTOR_PROVIDER],
        "responses": {"200": ok("The factor", ref("Factor")), **errors("400", "401"),
                      "404": err("No such factor for this identity, or no provider keeps device factors."), **errors("502", "504")}},
      "delete": {
        "operationId": "deleteFactor", "summary": "Remove a device factor of a user identity",
        "parameters": [FACTOR_ID, FACTOR_IDENTITY, FACTOR_PROVIDER],
        "responses": {"204": {"description": "Removed."}, **errors("400", "401"),
                      "404": err("No such factor for this identity, or no provider keeps device factors."), **errors("502", "504")}}},
    "/v1/phone-numbers/{number}": {"get": {
      "operationId": "lookupPhoneNumber", "summary": "Parse, validate and classify a phone number (libphonenumber's metadata)",
      "parameters": [{"name": "number", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1, "maxLength": 64},
                      "description": "As the user typed it: `+442079460958`, `07700 900123` with `region`, `(650) 555-3434 ext. 12`. Percent-encode spaces; `+` may be sent literally or as `%2B`."},
                     {"name": "region", "in": "query", "required": False, "schema": region(),
                      "description": "Where the user is (ISO 3166-1 alpha-2, any case), for national forms."}],
      "responses": {"200": ok("The parsed number; `valid` is false for a number that parses but matches no numbering plan", ref("PhoneNumber")),
                    "400": err("`invalid_phone_number` with a reason (no_digits, too_short, too_long, invalid_country_code, not_a_number), or an unknown region."),
                    **errors("401")}}},
    "/v1/countries": {"get": {
      "operationId": "listCountries", "summary": "Every region with its calling code, localized name, example mobile number and mobile pattern; or, with `provider`, that vendor's own country list",
      "description": "Without `provider`: every region libphonenumber knows, with the configured providers that serve it. With `provider`: the vendor's own list, as its SDK's country picker shows it (IDaaS: the tenant's area codes, read at startup and cached), in the vendor's order, with the vendor's display names, its mobile-number regular expression and the preferred entry.",
      "parameters": [{"name": "lang", "in": "query", "required": False, "schema": {**LANGUAGE_TAG, "default": "en"},
                      "description": "Language of the names (en, zh-CN/zh-Hans, zh-TW/zh-Hant, es, fr, de, ja, pt, ar); other languages fall back to English. With `provider`, the vendor's name in this language when it has one (`zh-Hans` reads `zh-CN`, `zh-Hant` reads `zh-TW`, `en-GB` reads `en`)."},
                     {"name": "provider", "in": "query", "required": False, "schema": {"type": "string", "minLength": 1, "maxLength": 40},
                      "description": "A configured provider id: answer that vendor's own country list (`ProviderCountries`)."}],
      "responses": {"200": ok("The regions, by region code; with `provider`, the vendor's list in its order", {"anyOf": [ref("Countries"), ref("ProviderCountries")]}),
                    "400": err("`invalid_request`: a `lang` that is not a language tag."),
                    "404": err("`not_found`: `provider` names no configured provider, or one that keeps no country list of its own (only IDaaS does); without `provider` the answer lists every region with the providers that serve it."),
                    **errors("401", "502", "504")}}},
    "/v1/routing/dry-run": {"post": {
      "operationId": "routingDryRun", "summary": "Which provider would serve this number and why, sending nothing",
      "requestBody": {"required": True, "content": {"application/json": {"schema": ref("DryRunRequest")}}},
      "responses": {"200": ok("The decision: route, experiment arm, candidates with breaker states, skips", ref("DryRun")),
                    **errors("400", "401")}}},
    "/v1/admin/providers": {"get": {
      "operationId": "adminProviders", "summary": "Providers with their capabilities and circuit breakers (admin scope)",
      "responses": {"200": ok("Providers", {"type": "object", "required": ["providers"], "properties": {
          "providers": {"type": "array", "items": ref("ProviderStatus")}}}),
                    **errors("401"), "403": err("The API key lacks the `admin` scope.")}}},
    "/v1/admin/experiments": {"get": {
      "operationId": "listExperiments", "summary": "The configured experiments and their arms (admin or read scope)",
      "responses": {"200": ok("The experiments, by name", {"type": "object", "required": ["experiments"], "properties": {
          "experiments": {"type": "array", "items": {"type": "object", "required": ["name", "arms"], "properties": {
              "name": {"type": "string"},
              "arms": {"type": "array", "items": {"type": "object", "required": ["name", "provider", "weight", "control"], "properties": {
                  "name": {"type": "string"}, "provider": {"type": "string"}, "weight": {"type": "integer", "minimum": 0},
                  "control": {"type": "boolean"}}}}}}}}}),
                    **errors("401"), "403": err("The API key lacks the `admin` (or, to read, `read`) scope.")}}},
    "/v1/admin/stats": {"get": {
      "operationId": "verificationStats", "summary": "Per vendor starts, approvals, outcomes and errors over the last hour or day, with a series (admin or read scope)",
      "description": "Counted in the store, so every instance answers alike; test numbers are left out. `errors` are the vendor's failures the gateway failed over (by error code) and verifications that failed at the vendor (by status reason). The operator console's overview draws it.",
      "parameters": [{"name": "window", "in": "query", "required": False, "schema": {"type": "string", "enum": ["1h", "24h"], "default": "1h"},
                      "description": "`1h`: 12 buckets of 5 minutes; `24h`: 24 buckets of an hour. The last bucket ends now."}],
      "responses": {"200": ok("The counts", ref("VerificationStats")), **errors("400", "401"),
                    "403": err("The API key lacks the `admin` (or, to read, `read`) scope.")}}},
    "/v1/admin/experiments/{name}": {"get": {
      "operationId": "experimentReport", "summary": "A/B report of an experiment, from the stored verifications (admin scope)",
      "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                     {"name": "from", "in": "query", "required": False, "schema": DATE_TIME},
                     {"name": "to", "in": "query", "required": False, "schema": DATE_TIME},
                     {"name": "country", "in": "query", "required": False, "schema": region()},
                     {"name": "mde", "in": "query", "required": False, "schema": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.05},
                      "description": "Minimum absolute difference in conversion to size the sample for."}],
      "responses": {"200": ok("The report", ref("ExperimentReport")), **errors("400", "401"),
                    "403": err("The API key lacks the `admin` scope."), "404": err("No such experiment.")}}},
    "/v1/admin/blocks": {"get": {
      "operationId": "listPrefixBlocks", "summary": "Number prefixes the SMS-pumping guard blocked, while the block lasts (admin scope)",
      "responses": {"200": ok("The blocks in force", {"type": "object", "required": ["blocks"], "properties": {"blocks": {
                        "type": "array", "items": ref("PrefixBlock")}}}), **errors("400", "401"),
                    "403": err("The API key lacks the `admin` scope.")}}},
    "/v1/admin/blocks/{prefix}": {"delete": {
      "operationId": "liftPrefixBlock", "summary": "Lift a prefix block (admin scope)",
      "parameters": [{"name": "prefix", "in": "path", "required": True,
                      "schema": {"type": "string", "pattern": "^\\+[0-9]{1,15}$"},
                      "description": "The blocked prefix, `+` and digits, URL-encoded (`%2B447400`)."}],
      "responses": {"200": ok("Lifted", {"type": "object", "required": ["prefix", "lifted"], "properties": {
                        "prefix": {"type": "string"}, "lifted": {"const": True}}}), **errors("400", "401"),
                    "403": err("The API key lacks the `admin` scope."), "404": err("No block is in force for this prefix.")}}},
    "/v1/admin/webhooks/deliveries": {"get": {
      "operationId": "listWebhookDeliveries", "summary": "Status-webhook deliveries, newest first (admin scope)",
      "description": "Every delivery of a status webhook to a configured endpoint. A `parked` delivery failed every attempt and waits to be replayed.",
      "parameters": [{"name": "state", "in": "query", "required": False, "schema": {"type": "string", "enum": ["pending", "delivered", "parked"]}},
                     {"name": "limit", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}}],
      "responses": {"200": ok("The deliveries", {"type": "object", "required": ["deliveries"], "properties": {"deliveries": {
                        "type": "array", "items": ref("WebhookDelivery")}}}), **errors("400", "401"),
                    "403": err("The API key lacks the `admin` scope.")}}},
    "/v1/admin/webhooks/deliveries/{id}/replay": {"post": {
      "operationId": "replayWebhookDelivery", "summary": "Send a parked or delivered webhook again, with a fresh attempt count (admin scope)",
      "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
      "responses": {"202": ok("Queued again", ref("WebhookDelivery")), **errors("400", "401"),
                    "403": err("The API key lacks the `admin` scope."), "404": err("No delivery has this id."),
                    "409": err("The delivery is still queued (`invalid_state`).")}}},
    "/metrics": {"get": {"operationId": "metrics", "security": [{}, {"bearer": []}],
      "summary": "Prometheus metrics (open on loopback, an admin key otherwise, per `metrics.access`)",
      "description": "The Prometheus text exposition format. The metrics and their labels are listed in docs/operations.md.",
      "responses": {"200": {"description": "Metrics", "content": {"text/plain": {"schema": {"type": "string"}}}},
                    "401": err("Not from loopback and no API key."), "403": err("The API key lacks the `admin` scope.")}}},
    "/healthz": {"get": {"operationId": "health", "security": [], "summary": "Liveness",
      "responses": {"200": ok("Alive", {"type": "object", "properties": {"status": {"const": "ok"}}})}}},
    "/readyz": {"get": {"operationId": "ready", "security": [], "summary": "Readiness: the store answers",
      "responses": {"200": ok("Ready", {"type": "object", "properties": {"status": {"const": "ready"},
                        "providers": {"type": "array", "items": {"type": "string"}}}}),
                    "503": err("The store is not answering.")}}},
    "/openapi.json": {"get": {"operationId": "openapi", "security": [], "summary": "This document",
      "responses": {"200": {"description": "OpenAPI 3.1 document", "content": {"application/json": {}}}}}},
    "/.well-known/jwks.json": {"get": {"operationId": "jwks", "security": [], "summary": "Keys that verify verification tokens (ES256)",
      "responses": {"200": ok("JWK set", {"type": "object", "required": ["keys"], "properties": {"keys": {"type": "array", "items": {"type": "object"}}}})}}},
    "/callbacks/{provider}": {"post": {
      "operationId": "vendorCallback", "security": [], "summary": "Vendor callback: a vendor reports a verification's progress (no API key)",
      "description": CALLBACK_DESCRIPTION,
      "parameters": [{**PROVIDER, "description": "The provider id, as configured (`twilio`, `twilio-eu`)."}],
      "requestBody": CALLBACK_BODY, "responses": CALLBACK_RESPONSES}},
    "/callbacks/{provider}/{path}": {"post": {
      "operationId": "vendorCallbackPath", "security": [], "summary": "Vendor callback at a sub-path of the provider's callback route (no API key)",
      "description": CALLBACK_DESCRIPTION + " Any sub-path is accepted, including one of several `/`-separated segments (which an OpenAPI path template cannot express); the plugin reads it.",
      "parameters": [{**PROVIDER, "description": "The provider id, as configured."},
                     {"name": "path", "in": "path", "required": True, "schema": {"type": "string"},
                      "description": "The rest of the path after `/callbacks/{provider}/`, handed to the plugin."}],
      "requestBody": CALLBACK_BODY, "responses": CALLBACK_RESPONSES}},
    "/sandbox/outbox": {
      "get": {"operationId": "sandboxOutbox", "security": [], "summary": "Sandbox only: messages the emulators sent, oldest first",
              "parameters": [{"name": "to", "in": "query", "required": False, "schema": {"type": "string"},
                              "description": "Only messages to this recipient (E.164, `+` encoded as `%2B`)."}],
              "responses": {"200": ok("Messages", ref("Outbox")), "404": err("Not in sandbox mode.")}},
      "delete": {"operationId": "sandboxOutboxClear", "security": [], "summary": "Sandbox only: empty the outbox",
              "responses": {"200": ok("Emptied", ref("Outbox")), "404": err("Not in sandbox mode.")}}},
    "/sandbox/faults/{plugin}": {
      "get": {"operationId": "sandboxFaults", "security": [], "summary": "Sandbox only: an emulator's fault switch",
              "parameters": [{"name": "plugin", "in": "path", "required": True, "schema": {"type": "string"}}],
              "responses": {"200": ok("Faults", ref("Faults")), "404": err("No such emulator.")}},
      "put": {"operationId": "sandboxSetFaults", "security": [], "summary": "Sandbox only: make an emulator misbehave",
              "parameters": [{"name": "plugin", "in": "path", "required": True, "schema": {"type": "string"}}],
              "requestBody": {"required": False, "content": {"application/json": {"schema": ref("Faults")}}},
              "responses": {"200": ok("Faults now in force", ref("Faults")), "400": ERRORS["400"], "404": err("No such emulator.")}},
      "delete": {"operationId": "sandboxClearFaults", "security": [], "summary": "Sandbox only: clear an emulator's faults and delivery rate",
              "parameters": [{"name": "plugin", "in": "path", "required": True, "schema": {"type": "string"}}],
              "responses": {"200": ok("The cleared fault switch", ref("Faults")), "404": err("No such emulator.")}}},
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "An API key with the `verify` scope."}},
    "schemas": {
      "StartRequest": {"type": "object", "additionalProperties": False, "required": ["to"], "properties": {
        "to": {"type": "string", "minLength": 1, "maxLength": 254, "description": "A phone number, international (`+14155550100`, `0044 7700 900123`, `+86-13800000000`) or national with `region`; an email address for `email`; a user identity for `push`. The verification always shows E.164. An SMS to a fixed-line, toll-free, premium, shared-cost, UAN or voicemail number is refused with `unsupported_destination`."},
        "region": region(description="Where the user is (ISO 3166-1 alpha-2), for a `to` in national form (`07700 900123` with `GB`)."),
        "channel": channel(default="sms"),
        "fallback_channels": {"type": "array", "maxItems": 4, "uniqueItems": True, "items": channel(),
                              "description": "Channels to use after `channel`, in order; none may equal `channel`. A provider with native workflows runs them itself from one start; for the others a resend that names no channel moves to the next one. Providers that can do neither are skipped by routing."},
        "locales": {"type": "array", "maxItems": 10, "items": LANGUAGE_TAG, "description": "Preferred content languages, most preferred first (IETF tags)."},
        "app_verification": ref("AppVerification"),
        "code_length": {"type": "integer", "minimum": 4, "maximum": 10},
        "client_ref": {"type": "string", "maxLength": 128},
        "metadata": {"type": "object", "maxProperties": 20, "propertyNames": {"maxLength": 64}, "additionalProperties": {"type": "string", "maxLength": 512}},
        "provider": {"type": "string", "minLength": 1, "maxLength": 40, "description": "Force a provider, bypassing routing (tests, support)."},
        "client_context": ref("ClientContext"),
        "channel_options": ref("ChannelOptions"),
        "multi_factor": ref("MultiFactor")}},
      "Region": {"type": "string", "enum": REGIONS, "description": "A region code libphonenumber knows (ISO 3166-1 alpha-2); the server also takes lower case."},
      "AppVerification": {"type": "object", "additionalProperties": False, "required": ["type", "token"],
        "description": "A proof that the request comes from the customer's app.",
        "properties": {
            "type": {"type": "string", "enum": PROOF_TYPES, "description": "`safety_net` is refused with `400 invalid_request` naming `play_integrity`: Google shut SafetyNet Attestation down and Firebase no longer takes its tokens."},
            "token": {"type": "string", "minLength": 1, "maxLength": 8192},
            "secret": {"type": "string", "maxLength": 1024, "description": "Required with `ios_receipt`."}},
        "if": {"properties": {"type": {"const": "ios_receipt"}}, "required": ["type"]}, "then": {"required": ["secret"]}},
      "MultiFactor": {"description": "The multi-factor step the verification is (Firebase): the phone second factor of a sign-in whose first factor answered a pending credential, or enrolling `to` as a second factor of a signed-in user. Routing considers only providers that run the step (`GET /v1/admin/providers`, `multi_factor_types`). The approval's `provider_tokens` are the user's new `idToken` and `refreshToken`. The values are kept with the verification until Firebase finalizes the step, never shown.",
        "oneOf": [
          {"type": "object", "additionalProperties": False, "required": ["type", "pending_credential", "enrollment_id"], "properties": {
            "type": {"const": "sign_in"},
            "pending_credential": {"type": "string", "minLength": 1, "maxLength": 8192, "pattern": "^[!-~]+$", "description": "`mfaPendingCredential` from the first factor's sign-in (for example `accounts:signInWithPassword`)."},
            "enrollment_id": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[!-~]+$", "description": "`mfaEnrollmentId` of the phone factor to verify, from the same answer's `mfaInfo`. Firebase sends the code to the number enrolled under it: `to` must be that number."}}},
          {"type": "object", "additionalProperties": False, "required": ["type", "id_token"], "properties": {
            "type": {"const": "enroll"},
            "id_token": {"type": "string", "minLength": 1, "maxLength": 8192, "pattern": "^[!-~]+$", "description": "The signed-in user's Firebase ID token; `to` becomes the user's second factor."},
            "display_name": {"type": "string", "maxLength": 128, "description": "A name for the factor (\"Work phone\"), one line."}}}]},
      "ClientContext": {"type": "object", "additionalProperties": False,
        "description": "The end user's device as the customer's backend saw it, passed to plugins whose vendor wants it; never logged in full.",
        "properties": {
          "ip": {"type": "string", "maxLength": 45, "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}], "description": "The end user's IPv4 or IPv6 address (not the backend's)."},
          "user_agent": {"type": "string", "maxLength": 512},
          "device_id": {"type": "string", "maxLength": 128, "description": "A stable id of the app installation or device."},
          "platform": {"type": "string", "enum": ["ios", "android", "web"], "description": "The kind of app the user is in. Firebase's reCAPTCHA Enterprise proof is sent with the matching client type (web when absent)."}}},
      "FactorAccessTokenRequest": {"type": "object", "additionalProperties": False, "required": ["identity"], "properties": {
        "identity": {**IDENTITY_SCHEMA, "description": "Your immutable, non-personal user id."},
        "provider": {"type": ["string", "null"], "maxLength": 40, "description": "Required when several providers keep device factors; null is the same as absent."},
        "friendly_name": {"type": ["string", "null"], "maxLength": 64, "description": "A name for the device's factor."},
        "ttl_seconds": {"type": ["integer", "null"], "minimum": 60, "maximum": 300, "description": "The token's lifetime in seconds (default 60); 60 to 300 is the range Twilio, the one vendor keeping factors today, accepts."}}},
      "FactorAccessToken": {"type": "object", "required": ["provider", "identity", "token", "factor_type", "expires_at", "details"], "properties": {
        "provider": {"type": "string"}, "identity": {"type": "string"}, "token": {"type": "string"},
        "factor_type": {"type": "string", "examples": ["push"]}, "expires_at": {"type": "string", "format": "date-time"},
        "details": {"type": "object", "additionalProperties": ANY_JSON, "description": "What else the SDK needs (Twilio: `service_sid`, `base_url`, `access_token_sid`)."}}},
      "Factor": {"type": "object", "required": ["id", "provider", "identity", "type", "friendly_name", "status", "created_at", "updated_at", "details"], "properties": {
        "id": {"type": "string", "description": "The vendor's factor id (Twilio `YF…`): `channel_options.factor_id` of a push verification."},
        "provider": {"type": "string"}, "identity": {"type": "string"}, "type": {"type": "string", "examples": ["push"]},
        "friendly_name": {"type": ["string", "null"]},
        "status": {"type": "string", "enum": ["unverified", "verified"], "description": "Only a verified factor can be challenged."},
        "created_at": {"type": ["string", "null"], "format": "date-time"}, "updated_at": {"type": ["string", "null"], "format": "date-time"},
        "details": {"type": "object", "additionalProperties": ANY_JSON, "description": "Vendor facts (app id, notification platform), never secrets."}}},
      "ChannelOptions": {"type": "object", "additionalProperties": False,
        "description": "Options for channels that need more than a destination (push). Plugins read the ones their vendor takes.",
        "properties": {
          "factor_id": {"type": "string", "maxLength": 64, "description": "The enrolled push factor to challenge; the identity's only factor when absent."},
          "prompt": {"type": "object", "additionalProperties": False, "required": ["message"], "properties": {
            "message": {"type": "string", "minLength": 1, "maxLength": 256, "description": "What the push shows."},
            "details": {"type": "array", "maxItems": 10, "description": "Label and value pairs shown under the message, in order.",
                        "items": {"type": "object", "additionalProperties": False, "required": ["label", "value"], "properties": {
                          "label": {"type": "string", "minLength": 1, "maxLength": 64},
                          "value": {"type": "string", "minLength": 1, "maxLength": 256}}}},
            "hidden_details": {"type": "object", "maxProperties": 20, "additionalProperties": {"type": "string", "maxLength": 256},
                               "description": "Facts kept with the push and not shown to the user."}}}}},
      "CheckRequest": {"type": "object", "additionalProperties": False, "required": ["code"], "properties": {
        "code": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[!-~]+$",
                 "description": "The code the user received, without spaces; for a flash call, the caller number the app intercepted."},
        "client_context": ref("ClientContext")}},
      "ChallengeRequest": {"type": "object", "additionalProperties": False, "required": ["answer"], "properties": {
        "answer": {"type": "object", "description": "The app's answer, in the form the provider's plugin defines for its challenge `kind` (for a slider captcha, the slider's position and the challenge's token)."},
        "client_context": ref("ClientContext")}},
      "ResendRequest": {"type": "object", "additionalProperties": False, "properties": {
        "channel": channel(description="Another channel to send over. Without it the channel stays, except that a provider without native workflows moves to the next of `fallback_channels`, if any is left."),
        "app_verification": {**ref("AppVerification"), "description": "A fresh proof, for vendors that send a new code only with one (Firebase, once its resend wait has passed)."},
        "client_context": ref("ClientContext")}},
      "NextAction": {"description": "What the app must do next. The client switches on `type` and reads the member named by it.",
        "oneOf": [
          {"type": "object", "additionalProperties": False, "required": ["type", "solve_challenge"], "properties": {
            "type": {"const": "solve_challenge"},
            "solve_challenge": {"type": "object", "required": ["kind", "data", "expires_at"],
              "description": "Solve a challenge and post the answer to `POST /v1/verifications/{id}/challenge`. Nothing has been sent yet.",
              "properties": {"kind": {"type": "string", "description": "The plugin's name for the kind of challenge (`slider_captcha`)."},
                             "data": {"description": "Any JSON: what the app needs to show the challenge."},
                             "expires_at": {"type": ["string", "null"], "format": "date-time"}}}}},
          {"type": "object", "additionalProperties": False, "required": ["type", "intercept_call"], "properties": {
            "type": {"const": "intercept_call"},
            "intercept_call": {"type": "object", "required": ["caller_pattern", "timeout_seconds"],
              "description": "A missed call will arrive; the app intercepts it and checks the caller number as the code.",
              "properties": {"caller_pattern": {"type": "string", "description": "The caller number with `*` for the digits that are the code, or a regular expression where the vendor gives one."},
                             "timeout_seconds": {"type": "integer", "description": "How long the app should wait for the call."}}}}},
          {"type": "object", "additionalProperties": False, "required": ["type", "open_url"], "properties": {
            "type": {"const": "open_url"},
            "open_url": {"type": "object", "required": ["url", "cellular_only"],
              "description": "The app opens the URL and follows its redirects. Where the vendor finishes it (Sinch) the verification then completes without a code (read it with `refresh=true`); where the redirects end in a code (Vonage: `{request_id, code}`), the backend checks that code, with one attempt.",
              "properties": {"url": {"type": "string"},
                             "cellular_only": {"type": "boolean", "description": "Open it over the mobile network (silent network authentication)."}}}}},
          {"type": "object", "additionalProperties": False, "required": ["type", "await_approval"], "properties": {
            "type": {"const": "await_approval"},
            "await_approval": {"type": "object", "required": ["message", "expires_at"],
              "description": "The user approves or denies a prompt on an enrolled device; the result arrives by callback or refresh.",
              "properties": {"message": {"type": ["string", "null"]},
                             "expires_at": {"type": ["string", "null"], "format": "date-time"}}}}}]},
      "Verification": {"type": "object", "required": ["id", "status", "to", "channel", "provider", "expires_at", "attempts_remaining", "sends", "created_at", "updated_at", "next_action", "fallback_channels", "status_reason"],
        "properties": {
          "id": {"type": "string"},
          "status": {"type": "string", "enum": STATUSES},
          "to": {"type": "string"}, "channel": channel(description="The channel in use; the vendor may move it (a workflow's next step)."),
          "provider": {"type": "string"},
          "next_action": NULLABLE_NEXT_ACTION,
          "fallback_channels": {"type": "array", "items": channel(), "description": "Fallback channels not used yet, in order."},
          "status_reason": {"type": ["string", "null"], "maxLength": 64, "description": "The vendor's bounded reason code for the last status it reported (`DENIED`, `Fraud`), if any."},
          "content_language": {"type": ["string", "null"]},
          "expires_at": {"type": "string", "format": "date-time"},
          "attempts_remaining": {"type": "integer"}, "sends": {"type": "integer"},
          "created_at": {"type": "string", "format": "date-time"}, "updated_at": {"type": "string", "format": "date-time"},
          "experiment_arm": {"type": ["string", "null"]}, "client_ref": {"type": ["string", "null"]},
          "experiment": {"type": ["string", "null"]},
          "route": {"type": ["string", "null"], "description": "The routing rule that matched: a configured route's name, `channel:<channel>`, `default`, `forced` or `test_number`."},
          "test_number": {"type": "boolean", "description": "A configured test number: no vendor was called."},
          "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
          "timeline": {"type": "array", "items": {"type": "object", "properties": {
              "kind": {"type": "string"}, "at": {"type": "string", "format": "date-time"},
              "detail": {"type": "object", "additionalProperties": {"type": "string"}}}}},
          "events": {"type": "array", "items": {"type": "object", "properties": {
              "kind": {"type": "string"}, "at": {"type": "string", "format": "date-time"},
              "detail": {"type": "object", "additionalProperties": {"type": "string"}}}}}}},
      "CheckResult": {"allOf": [ref("Verification"), {"type": "object", "properties": {
          "token": {"type": "string", "description": "ES256 JWT, verifiable with /.well-known/jwks.json; present in the answer that approved (a check), or in the first GET after an approval by callback or refresh, and only there."},
          "provider_tokens": {"type": "object", "additionalProperties": ANY_JSON, "description": "The vendor's tokens (values may be any JSON); present with `token`."}}}]},
      "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object",
          "required": ["code", "message", "retryable", "request_id"], "properties": {
            "code": {"type": "string", "enum": []},
            "message": {"type": "string"},
            "retryable": {"type": "boolean", "description": "Whether the same request may succeed later. False for a verification that finally failed, even though `delivery_failed` is otherwise retryable."},
            "request_id": {"type": "string"},
            "attempts_remaining": {"type": "integer"}, "retry_after": {"type": "integer"},
            "next_action": {**ref("NextAction"), "description": "The step the app must take now, when the error comes with one (a wrong challenge answer comes with a fresh challenge)."},
            "provider": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string"}, "code": {"type": ["string", "null"]}, "status": {"type": ["integer", "null"]}}}}}}},
      "PhoneNumber": {"type": "object",
        "required": ["input", "valid", "possible", "e164", "region", "country_code", "national_number", "type", "international", "national", "sms_capable"],
        "properties": {
          "input": {"type": "string"}, "valid": {"type": "boolean"}, "possible": {"type": "boolean"},
          "e164": {"type": "string"}, "region": {"type": ["string", "null"], "description": "`001` for non-geographic numbers; null when no region claims an invalid number."},
          "country_code": {"type": "integer"}, "national_number": {"type": "string"},
          "type": {"type": "string", "enum": ["fixed_line", "mobile", "fixed_line_or_mobile", "toll_free", "premium_rate", "shared_cost", "voip", "personal_number", "pager", "uan", "voicemail", "unknown"]},
          "international": {"type": "string"}, "national": {"type": "string"},
          "sms_capable": {"type": "boolean", "description": "False when the gateway would refuse an SMS to this number's type."},
          "extension": {"type": "string", "description": "Present when the input had one; never sent to a vendor."}}},
      "Countries": {"type": "object", "required": ["lang", "countries"], "properties": {
          "lang": {"type": "string"},
          "countries": {"type": "array", "items": {"type": "object",
            "required": ["region", "calling_code", "name", "example_mobile", "mobile_pattern", "national_prefix"], "properties": {
              "region": {"type": "string"}, "calling_code": {"type": "integer"}, "name": {"type": "string"},
              "example_mobile": {"type": ["string", "null"], "description": "E.164"},
              "mobile_pattern": {"type": ["string", "null"], "description": "Regular expression the whole national significant number of a mobile matches."},
              "national_prefix": {"type": ["string", "null"]},
              "providers": {"type": "array", "description": "Configured providers that serve the region, with the phone channels each can send.",
                            "items": {"type": "object", "properties": {"id": {"type": "string"}, "channels": {"type": "array", "items": {"type": "string"}}}}}}}}}},
      "ProviderCountries": {"type": "object", "required": ["lang", "provider", "preferred_region", "countries"], "properties": {
          "lang": {"type": "string"}, "provider": {"type": "string"},
          "preferred_region": {"type": ["string", "null"], "description": "The region of the vendor's preferred entry (the country picker's default)."},
          "countries": {"type": "array", "description": "In the vendor's order.", "items": {"type": "object",
            "required": ["region", "calling_code", "calling_code_suffixes", "name", "names", "mobile_regex", "mobile_regex_input", "preferred", "example_mobile"], "properties": {
              "region": {"type": ["string", "null"], "description": "ISO 3166-1 alpha-2, as the vendor names it."},
              "calling_code": {"type": "integer"},
              "calling_code_suffixes": {"type": "array", "items": {"type": "string"}, "description": "IDaaS `areaCodeSuffixes`."},
              "name": {"type": "string", "description": "The vendor's name in `lang`, else the gateway's."},
              "names": {"type": "object", "additionalProperties": {"type": "string"}, "description": "The vendor's names by language tag (IDaaS `displayMapping`)."},
              "mobile_regex": {"type": ["string", "null"], "description": "The vendor's regular expression for a mobile number, verbatim (IDaaS `mobileRegex`)."},
              "mobile_regex_input": {"type": ["string", "null"], "description": "The form `mobile_regex` is matched against, such as `+86-<number>`."},
              "preferred": {"type": "boolean", "description": "The vendor's preferred entry (IDaaS `preferredAreaCode`)."},
              "example_mobile": {"type": ["string", "null"], "description": "E.164, from libphonenumber's metadata for the region."}}}}}},
      "DryRunRequest": {"type": "object", "additionalProperties": False, "required": ["to"], "properties": {
          "to": {"type": "string", "minLength": 1, "maxLength": 254}, "channel": channel(default="sms"), "region": region(),
          "provider": {"type": "string", "maxLength": 40},
          "app_verification": {"type": "object", "required": ["type"], "description": "Only `type` is read: whether a proof would be sent.",
                               "properties": {"type": {"type": "string", "enum": PROOF_TYPES}}},
          "multi_factor": {"type": "object", "required": ["type"], "description": "Only `type` is read: which providers run the step.",
                           "properties": {"type": {"type": "string", "enum": ["sign_in", "enroll"]}}},
          "api_key": {"type": "string", "maxLength": 64, "description": "Route as if this API key name had asked (default: the caller's)."}}},
      "DryRun": {"type": "object", "required": ["route", "provider", "candidates", "skipped", "test_number"], "properties": {
          "route": {"type": "string"}, "experiment": {"type": ["string", "null"]}, "arm": {"type": ["string", "null"]},
          "country": {"type": ["string", "null"]}, "provider": {"type": ["string", "null"]},
          "test_number": {"type": "boolean"}, "failover_on_timeout": {"type": "boolean"},
          "candidates": {"type": "array", "items": {"type": "object", "properties": {
              "provider": {"type": "string"}, "breaker": {"type": "string", "enum": ["closed", "open", "half_open"]},
              "would_try": {"type": "boolean"}, "skip_reason": {"type": ["string", "null"]}, "price": {"type": ["number", "null"]}}}},
          "skipped": {"type": "array", "items": {"type": "object", "properties": {"provider": {"type": "string"}, "reason": {"type": "string"}}}},
          "error": {"type": "object", "description": "What a start would answer without calling anyone.",
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}},
      "ProviderStatus": {"type": "object", "properties": {
          "id": {"type": "string"}, "channels": {"type": "array", "items": {"type": "string"}},
          "requires_app_verification": {"type": "boolean"}, "app_verification_types": {"type": "array", "items": {"type": "string"}},
          "multi_factor_types": {"type": "array", "items": {"type": "string", "enum": ["sign_in", "enroll"]}, "description": "The `multi_factor` steps the provider runs."},
          "issues_tokens": {"type": "boolean"}, "supports_resend": {"type": "boolean"}, "supports_cancel": {"type": "boolean"},
          "excluded_countries": {"type": "array", "items": {"type": "string"}}, "actions": {"type": "array", "items": {"type": "string"}},
          "breakers": {"type": "array", "items": {"type": "object", "properties": {
              "country": {"type": "string", "description": "Region, or `*` for destinations without one."},
              "state": {"type": "string", "enum": ["closed", "open", "half_open"]},
              "consecutive_failures": {"type": "integer"}, "recent_requests": {"type": "integer"},
              "recent_failures": {"type": "integer"}, "open_until": {"type": ["string", "null"], "format": "date-time"},
              "cooldown_seconds": {"type": "number"}}}}}},
      "ExperimentReport": {"type": "object", "required": ["experiment", "arms"], "properties": {
          "experiment": {"type": "string"}, "from": {"type": ["string", "null"]}, "to": {"type": ["string", "null"]},
          "country": {"type": ["string", "null"]}, "minimum_effect": {"type": "number"},
          "arms": {"type": "array", "items": {"type": "object", "properties": {
              "name": {"type": "string"}, "provider": {"type": "string"}, "control": {"type": "boolean"}, "weight": {"type": "integer"},
              "starts": {"type": "integer"}, "approvals": {"type": "integer"}, "conversion": {"type": ["number", "null"]},
              "conversion_95": {"type": ["array", "null"], "items": {"type": "number"}, "description": "Wilson score interval."},
              "time_to_approve_p50_seconds": {"type": ["number", "null"]}, "time_to_approve_p90_seconds": {"type": ["number", "null"]},
              "failovers": {"type": "integer"}, "errors": {"type": "object", "additionalProperties": {"type": "integer"}},
              "cost": {"type": ["number", "null"]}, "cost_per_approval": {"type": ["number", "null"]},
              "z": {"type": ["number", "null"]}, "p_value": {"type": ["number", "null"], "description": "Two-sided pooled two-proportion z-test against the control."},
              "sample_size_per_arm": {"type": ["integer", "null"]}, "sample_still_needed": {"type": ["integer", "null"]}}}}}},
      "WebhookDelivery": {"type": "object", "required": ["id", "event_id", "endpoint", "type", "verification_id", "state", "attempts",
                                                       "next_attempt_at", "last_error", "created_at", "delivered_at", "payload"], "properties": {
        "id": {"type": "string"}, "event_id": {"type": "string", "description": "`evt_…`: the same for every endpoint and attempt."},
        "endpoint": {"type": "string"},
        "type": {"type": "string", "enum": ["verification.approved", "verification.denied", "verification.expired", "verification.failed",
                                            "verification.canceled", "verification.channel_changed"]},
        "verification_id": {"type": "string"}, "state": {"type": "string", "enum": ["pending", "delivered", "parked"]},
        "attempts": {"type": "integer", "minimum": 0},
        "next_attempt_at": {"type": ["string", "null"], "format": "date-time"},
        "last_error": {"type": ["string", "null"]},
        "created_at": {"type": "string", "format": "date-time"},
        "delivered_at": {"type": ["string", "null"], "format": "date-time"},
        "payload": {"type": "object", "description": "The body as sent: `{id, type, created_at, data}`."}}},
      "VerificationStats": {"type": "object", "required": ["window", "window_seconds", "bucket_seconds", "since", "until", "providers"], "properties": {
          "window": {"type": "string", "enum": ["1h", "24h"]}, "window_seconds": {"type": "integer"},
          "bucket_seconds": {"type": "integer"}, "since": DATE_TIME, "until": DATE_TIME,
          "providers": {"type": "array", "items": {"type": "object",
              "required": ["id", "starts", "approvals", "conversion", "statuses", "errors", "error_count", "series"], "properties": {
              "id": {"type": "string"}, "starts": {"type": "integer", "minimum": 0}, "approvals": {"type": "integer", "minimum": 0},
              "conversion": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
              "statuses": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "Verifications by status."},
              "errors": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "Errors by code."},
              "error_count": {"type": "integer", "minimum": 0},
              "series": {"type": "object", "required": ["starts", "approvals", "errors"], "properties": {
                  "starts": {"type": "array", "items": {"type": "integer"}}, "approvals": {"type": "array", "items": {"type": "integer"}},
                  "errors": {"type": "array", "items": {"type": "integer"}}}}}}}}},
      "PrefixBlock": {"type": "object", "required": ["prefix", "blocked_at", "until", "starts", "approvals", "verification_id"], "properties": {
          "prefix": {"type": "string", "description": "`+` and the first digits of the numbers blocked."},
          "blocked_at": {"type": "string", "format": "date-time"}, "until": {"type": "string", "format": "date-time"},
          "starts": {"type": "integer", "minimum": 0, "description": "Starts to the prefix in the window when it was blocked."},
          "approvals": {"type": "integer", "minimum": 0, "description": "Approvals among them."},
          "verification_id": {"type": ["string", "null"], "description": "The refused start that tripped the guard, kept as a `blocked` verification: `GET /v1/verifications/{id}?include=timeline` shows the block."}}},
      "Outbox": {"type": "object", "required": ["messages"], "properties": {"messages": {"type": "array", "items": {
          "type": "object", "required": ["provider", "kind", "channel", "to", "code", "text", "language", "sent_at"], "properties": {
            "provider": {"type": "string"},
            "kind": {"type": "string", "enum": ["sms", "voice", "whatsapp", "email", "push", "flash_call", "silent_auth"], "description": "How the message reaches the user."},
            "channel": {"type": "string", "description": "The vendor's name for the channel."}, "to": {"type": "string"},
            "code": {"type": ["string", "null"], "description": "The code the user would type; for a flash call, the caller number; null for a push."},
            "text": {"type": "string"},
            "language": {"type": ["string", "null"], "description": "The language `text` is written in: the one the verification reports (English where the sandbox has no phrase for it)."},
            "sent_at": {"type": "string", "format": "date-time"}}}}}},
      "Faults": {"type": "object", "additionalProperties": False,
        "description": "A `PUT` replaces the faults (fields left out take their defaults) and keeps the delivery rate unless given. Switches hit every request; rates hit a share, drawn from `seed` and each request's position since the `PUT`. `error_rate`, `reset_rate` and `malformed_rate` must add up to at most 1, and `latency_ms` plus `latency_jitter_ms` to at most 60000 (else 400).",
        "properties": {
          "latency_ms": {"type": "integer", "minimum": 0, "maximum": 60000, "default": 0, "description": "Added before every answer."},
          "latency_jitter_ms": {"type": "integer", "minimum": 0, "maximum": 60000, "default": 0,
                                "description": "Up to this much more latency, drawn uniformly per request from `seed`."},
          "server_error_status": {"type": ["integer", "null"], "minimum": 500, "maximum": 599,
                                  "description": "Every request is answered with this status and the vendor's error body."},
          "malformed_body": {"type": "boolean", "default": False, "description": "Every request is answered 200 with a body that is not the vendor's, without being handled."},
          "connection_reset": {"type": "boolean", "default": False, "description": "Every request's connection drops after it is read, without being handled."},
          "error_rate": {"type": "number", "minimum": 0, "maximum": 1, "default": 0,
                         "description": "Share of requests answered with `error_status` and the vendor's error body, without being handled (nothing is sent)."},
          "error_status": {"type": "integer", "minimum": 500, "maximum": 599, "default": 503, "description": "The status `error_rate` answers with."},
          "reset_rate": {"type": "number", "minimum": 0, "maximum": 1, "default": 0,
                         "description": "Share of requests whose connection drops after the emulator handled them: the vendor acted (a start sent its message) and the answer is lost."},
          "malformed_rate": {"type": "number", "minimum": 0, "maximum": 1, "default": 0,
                             "description": "Share of requests answered 200 with a body that is not the vendor's, after the emulator handled them."},
          "seed": {"type": "integer", "minimum": 0, "maximum": 2147483647, "default": 0,
                   "description": "Seeds which requests the rates pick and the latency jitter: the same faults and seed replay the same sequence."},
          "remaining": {"type": ["integer", "null"], "minimum": 1, "maximum": 1000000, "description": "How many requests the faults above affect; then they clear."},
          "delivery_rate": {"type": "number", "minimum": 0, "maximum": 1, "default": 1,
                            "description": "Share of accepted messages that reach the phone (the outbox); the rest are accepted by the vendor and lost, as a carrier may lose them. Persistent: not cleared by `remaining`."},
          "delivery_seed": {"type": "integer", "minimum": 0, "maximum": 2147483647, "default": 0,
                            "description": "Seeds which messages are lost, so a simulation can be repeated."}}},
    }},
}

# Statuses every operation can answer, listed on each so a client (and schemathesis) sees them all:
# what a vendor's answer can map to (GatewayError.Code.httpStatus) on operations that call a vendor,
# 401 where an API key is needed, 413 and 415 where a body is read, 414 and 431 everywhere (the HTTP
# decoder's limits, before routing) and 400 (not valid HTTP).
VENDOR_STATUSES = {
    "400": "The vendor refused the request as invalid (`invalid_request`, `invalid_phone_number`, `unsupported_channel`, `unsupported_destination`, `app_verification_required`).",
    "403": "`app_verification_failed`, `destination_blocked`, `denied`, `account_locked` or `forbidden`.",
    "404": "No verification with this id, or the vendor no longer knows it.",
    "409": "`already_approved`, `canceled`, `invalid_state` or `concurrent_verification`.",
    "410": "`expired`.",
    "422": "`incorrect_code`, `not_enrolled` or `invalid_token`.",
    "429": "`rate_limited`, `max_sends_reached` or `max_attempts_reached`.",
    "502": "The vendor failed (see error.provider).",
    "503": "No provider is available (`no_provider_available`), or the store is unavailable (`store_unavailable`).",
    "504": "The vendor did not answer in time.",
}
VENDOR_OPERATIONS = {"startVerification", "getVerification", "checkVerification", "answerChallenge",
                     "resendVerification", "cancelVerification", "providerAction"}
for path, item in doc["paths"].items():
    for method, op in item.items():
        responses = op["responses"]
        if op["operationId"] in VENDOR_OPERATIONS:
            for status, description in VENDOR_STATUSES.items():
                responses.setdefault(status, err(description))
        if "requestBody" in op and not path.startswith("/callbacks/"):
            responses.setdefault("413", ERRORS["413"])
            responses.setdefault("415", ERRORS["415"])
        if op.get("security") != []:
            responses.setdefault("401", ERRORS["401"])
            # Keys and state live in the store: a shared PostgreSQL that is down answers 503 on every API call.
            responses.setdefault("503", err("The store is unavailable (`store_unavailable`); retry shortly."))
        responses.setdefault("400", err("The request is not valid HTTP/1.1, or a parameter is invalid."))
        responses.setdefault("414", ERRORS["414"])
        responses.setdefault("431", ERRORS["431"])
        op["responses"] = dict(sorted(responses.items()))

# The error codes come from the Swift taxonomy, so the document cannot drift from it.
src = (ROOT / "Sources/GatewayCore/Model/GatewayError.swift").read_text()
codes = []
for m in re.finditer(r'^\s*case (`?\w+`?)(?: = "(\w+)")?\s*$', src, re.M):
    name, raw = m.group(1).strip("`"), m.group(2)
    if raw is None:
        if name in ("caller", "verification", "blocked", "gateway"): continue
        raw = name
    if raw in ("provider_transient", "provider_permanent"): continue
    codes.append(raw)
doc["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]["enum"] = codes

text = json.dumps(doc, indent=2, sort_keys=False)
(ROOT / "docs").mkdir(exist_ok=True)
(ROOT / "docs/openapi.json").write_text(text + "\n")
swift = ("// swift-format-ignore-file\n"
         "// Generated by scripts/generate_openapi.py from the same description as docs/openapi.json. Do not edit.\n"
         "enum OpenAPIDocument {\n    static let json = #\"\"\"\n" + text + "\n\"\"\"#\n}\n")
(ROOT / "Sources/gateway/API/OpenAPIDocument.swift").write_text(swift)
print(f"wrote docs/openapi.json ({len(codes)} error codes) and Sources/gateway/API/OpenAPIDocument.swift")
