#!/usr/bin/env python3
"""Issue 29: the plugins' wire traffic, checked against the vendors' own API descriptions.

Starts a sandbox gateway whose Twilio, Vonage (v2 and legacy v1), Sinch, Firebase and Telnyx providers have their
`base_url` (and the CAMARA provider its `api_root`, `token_url` and `authorize_url`) pointed at a recording proxy
run here (another free loopback port). The proxy forwards each call to the gateway's own emulator under
`/sandbox/<vendor>` and records the request and the answer. The script
then drives the gateway's public API over every vendor and channel (starts, wrong and right codes, resends,
cancels, refreshes, the vendors' error paths the emulators can produce) and validates every recorded
request and every emulator answer against the vendor's document:

* Twilio Verify v2, Vonage Verify v1 and v2, Sinch Verification, Telnyx Verify v2, and for the messaging plugins
  (the gateway's own codes) Twilio's 2010-04-01 API (`Messages.json`), Vonage's SMS API and Telnyx Messaging v2
  (`POST /messages`): the OpenAPI files in
  `--specs` (`../shared/specs` beside the repository; never copied into it).
* CAMARA (the `camara` plugin: SIM Swap as the starts' risk signal and its `sim_swap_date` action, Number
  Verification as its `silent_auth`): SIM Swap 2.1.0 and Number Verification 2.1.0, the OpenAPI files in
  `--specs`. The operator's OpenID Connect token and authorization endpoints, which the plugin also calls through
  the proxy, are in neither document; they are counted under ALLOW (`camara:oidc-endpoint`), not validated.
* Firebase (Identity Toolkit v1, and v2 for the multi-factor methods): the discovery documents that ship in
  google-api-python-client (`googleapiclient/discovery_cache/documents/identitytoolkit.v1.json` and `.v2.json`);
  they are not OpenAPI, so a small validator reads their `schemas` and `methods` here.

A request must match a documented path and method (after the server's base path), carry the documented
required path, query and header parameters and no undocumented query parameter, and its body (form or JSON,
of a documented media type) must validate against the request schema. An answer's status must be documented
and its body must validate against the schema for that status.

How the documents are read (the interpretation, stated once):

* A server URL's variables: one that begins the URL (CAMARA's `{apiRoot}`) stands for the scheme, host and any
  path of the operator's choosing, which is what the plugin's `api_root` gives and the vendor prefix strips from
  the recorded path; it is dropped. Any other takes its default. The rest of the URL's path is the base path.
* OpenAPI 3.0 schemas become JSON Schema: `$ref`s are inlined, `nullable: true` adds `null`, and OpenAPI-only
  keywords (discriminator, example, x-…) are dropped after use.
* `allOf` is merged into one object schema (the union of the parts' properties and required lists) before
  validating, and an `additionalProperties: false` beside (or inside a part of) the `allOf` applies to that
  merged set. Read literally, Sinch's `VerificationStartRequestSms` (`additionalProperties: false` beside
  `allOf: [Base, {smsOptions}]`) refuses every body, including `identity` and `method`; the merged reading is
  evidently what Sinch means (its SDKs send exactly that).
* `oneOf` with a `discriminator`: the branch is chosen by the discriminator's value (an unknown value is
  invalid) and the body validates against that branch alone. `oneOf` without one passes when a branch
  validates (Vonage v1 answers `oneOf: [success, error]` of overlapping open schemas, which strict `oneOf`
  would refuse for matching both).
* Unknown properties: in requests, an object schema that lists `properties` and says nothing of
  `additionalProperties` refuses other properties (a field the vendor does not document is a bug in the
  plugin). In answers, likewise (an emulator answer with a field the vendor does not document is a fidelity
  bug), except where ALLOW below names an exception with its reason.
* CAMARA's documents secure every operation with an `openIdConnect` scheme and the scopes it needs (SIM Swap's
  check: `sim-swap:check` or `sim-swap`; retrieve-date: `sim-swap:retrieve-date` or `sim-swap`; verify:
  `number-verification:verify`): the request must carry an access token, `Authorization: Bearer …` (the CAMARA
  security profile), and where the token's own answer from the token endpoint was recorded, the scopes it
  granted (its `scope`, RFC 6749 §5.1, or the scopes asked for when the answer leaves it out) must hold one of
  the operation's requirements. A token issued elsewhere is opaque: only its presence is checked.
* Sinch's document names the signed header `Authentication`; Sinch (and its SDKs) use `Authorization`.
  The request must carry `Authorization` (`Application …` or `Basic …`).
* Where a document has no answer for a status the vendor really returns (Twilio and Sinch describe no error
  answers at all), the answer is checked against the vendor's published error object (ERROR_SCHEMAS below,
  with the page it comes from), and counted under an explicit allow-list entry, never skipped silently.

Usage: python3 scripts/wire_check.py --specs ../shared/specs [--self-test]
`--self-test` also breaks recorded requests and answers one way each (a required field dropped, an unknown
field added, a wrong type, an undocumented path, an undocumented status) and fails unless the validator
refuses every broken copy. Exits non-zero on any invalid request or answer, or when a vendor recorded no
traffic. Needs `pyyaml`, `jsonschema` and `google-api-python-client` (for its discovery document).
"""
import argparse, copy, http.client, http.server, json, os, re, shutil, socketserver, subprocess, sys, tempfile
import threading, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway  # noqa: E402

try:
    import jsonschema
    import yaml
except ImportError as error:  # pragma: no cover
    raise SystemExit(f"wire_check needs pyyaml and jsonschema ({error}); pip install pyyaml jsonschema")

ROOT = sandbox_gateway.ROOT
KEY = sandbox_gateway.KEY

# --------------------------------------------------------------------------------------------------------
# Allow-list: what a vendor really does that its document does not describe. Each entry names the reason;
# a record that uses one is counted as `allowed` in the summary (and listed with --verbose), never dropped.
# --------------------------------------------------------------------------------------------------------
ALLOW = {
    # Twilio's OpenAPI describes only successful answers (201/200/204) and no error body at all; Twilio's
    # errors are `{"code", "message", "more_info", "status"}` (twilio.com/docs/usage/twilios-response,
    # "Exceptions"). Error answers are checked against that object (ERROR_SCHEMAS["twilio"]).
    "twilio:error-status": "Twilio's document describes no error answers; checked against Twilio's published error object",
    # Sinch's document describes only 200 answers; its `Error` schema is attached to no status. Error
    # answers are checked against that `Error` schema (components.schemas.Error, properties closed), with
    # one reading: the schema types `errorCode` as a string, while every example on Sinch's error-code page
    # (developers.sinch.com/docs/verification/api-reference/errors) and Sinch's own answers carry a number
    # (40003, 40400, ...); a whole number is accepted there too (the plugin reads both, SinchWire.ErrorBody).
    "sinch:error-status": "Sinch's document attaches its Error schema to no status; checked against it (errorCode a string or a whole number)",
    # Sinch's status answer schemas (VerificationStatusResponse) map sms, flashcall, callout and whatsapp;
    # a seamless (data) verification's status has no branch, though Sinch answers it (method `seamless`).
    # It is checked against the status base schema (VerificationStatusResponseBase) plus `method` (seamless)
    # and `price`, the one field every other branch adds; no `source` (the OTP sources, intercepted or
    # manual, mean nothing for a data verification) and no call fields.
    "sinch:seamless-status": "Sinch's status schema has no `seamless` branch; checked against the base status schema",
    # Open finding (reported, not fixed here): after `next_workflow` the Vonage emulator refuses a v2 cancel
    # with 409 "can't be cancelled now. Too many attempts to re-deliver have already been made." (the v1
    # rule, status 19, VonageEmulator+Handlers.swift cancelRefusal). Vonage's v2 document has no 409 for
    # `DELETE /v2/verify/{request_id}` (204, 401, 402, 404, 500). Until it is settled which status Vonage v2
    # really answers, this one answer is allowed and its body is still checked against Vonage's 409 problem
    # schema (components.responses.ErrorResponse409).
    "vonage-v2:cancel-409": "Vonage's v2 document has no 409 for DELETE; the emulator's cancel refusal is an open finding",
    # The discovery document of Identity Toolkit describes no error answers; Google APIs answer errors as
    # `{"error": {"code", "message", "errors": [...], "status", "details"}}` (cloud.google.com/apis/design/errors).
    "firebase:error-status": "the discovery document describes no error answers; checked against Google's error object",
    # Telnyx's Verify document declares only 400 (`verify_GenericErrorResponse`) for its operations; Telnyx
    # answers other statuses too (401, 404, 422, 5xx; docs/vendors/telnyx.md §8.1, the SDK's exception per
    # status). Those answers are checked against the same `verify_Errors` schema, properties closed.
    "telnyx:error-status": "Telnyx's Verify document declares only 400 errors and its Messages document only 4XX; other "
                           "error statuses are checked against verify_Errors or messaging_Errors",
    # Vonage's SMS API answers a refused send in HTTP 200 with a `messages` element of `status` and `error-text`
    # (its `ErrorMessage` schema, docs/vendors/vonage-sms.md §3), but the document's `SMS.messages` items are
    # `Message`, which has no `error-text`. A refused part is checked against `ErrorMessage`, an accepted one
    # against `Message`.
    "vonage:sms-refused-part": "Vonage's SMS document types every messages element as Message; a refused one is checked against ErrorMessage",
    # The camara plugin gets its access tokens from the operator's OpenID Connect token endpoint (form,
    # `private_key_jwt`) and sends the device to its authorization endpoint; both are OpenID Connect's (RFC 6749,
    # OIDC Core), described by neither CAMARA document, which only name them through `openIdConnectUrl`. They
    # travel through the proxy with the API calls (the plugin's `token_url` and `authorize_url` are on it) and
    # are counted under the API they serve (the client-credentials token: SIM Swap; the authorization and the
    # code's token: Number Verification), never validated against a document.
    "camara:oidc-endpoint": "the OpenID Connect token and authorization endpoints are in neither CAMARA document; not validated",
}

ERROR_SCHEMAS = {
    "twilio": {
        "type": "object", "required": ["code", "message", "status"], "additionalProperties": False,
        "properties": {"code": {"type": "integer"}, "message": {"type": "string"},
                       "more_info": {"type": "string"}, "status": {"type": "integer"},
                       "details": {"type": "object"}}},
    "firebase": {
        "type": "object", "required": ["error"], "additionalProperties": False,
        "properties": {"error": {
            "type": "object", "required": ["code", "message"], "additionalProperties": False,
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "status": {"type": "string"},
                           "errors": {"type": "array", "items": {
                               "type": "object", "additionalProperties": False,
                               "properties": {"message": {"type": "string"}, "domain": {"type": "string"},
                                              "reason": {"type": "string"}}}},
                           "details": {"type": "array"}}}}},
}

# The Telnyx sandbox's fixed values (Sources/Plugins/Telnyx, TelnyxSandbox).
TELNYX_KEY = "KEYSANDBOX0TELNYX0000000000000001"
TELNYX_PROFILE = "4900017a-0000-4000-8000-7e1a7e1a0001"
TELNYX_MESSAGING_PROFILE = "4000eba1-0000-4000-8000-7e1a7e1a0002"
# The CAMARA sandbox's client key (Sources/Plugins/Camara, CamaraSandbox.privateKeyDER, which the gateway prints
# as `camara sandbox settings:` in sandbox mode): the PKCS #8 DER, in base64, of the P-256 key whose scalar is
# the bytes 1 to 32. The emulator's token endpoint takes client assertions signed by this key only.
CAMARA_KEY = ("MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyChRANCAARRXD1u"
              "ueOWuQTT/sp/VP3NDMHpl783XcpRWtCmw7QDX0U2vjpQ8xj7+aVHWQKiIVAr7w1X4IxTsswKVvF9n5NU")

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


# --------------------------------------------------------------------------------------------------------
# OpenAPI 3.0 schema -> JSON Schema
# --------------------------------------------------------------------------------------------------------
class SchemaReader:
    """Turns OpenAPI schemas of one document into JSON Schema with the interpretation above."""

    def __init__(self, document):
        self.document = document

    def resolve(self, node):
        seen = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if ref in seen:
                raise ValueError("circular $ref " + ref)
            seen.add(ref)
            target = self.document
            for part in ref.lstrip("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def convert(self, schema, strict, depth=0):
        """JSON Schema for `schema`; `strict`: objects with properties refuse unknown ones unless stated."""
        if depth > 40:
            return {}
        schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return {}
        schema = dict(schema)
        if "allOf" in schema:
            schema = self.merge_all_of(schema)
        out = {}
        if "oneOf" in schema or "anyOf" in schema:
            branches = schema.get("oneOf") or schema.get("anyOf")
            discriminator = schema.get("discriminator")
            if discriminator:
                name = discriminator["propertyName"]
                mapping = discriminator.get("mapping") or {}
                if not mapping:
                    for branch in branches:
                        if "$ref" in branch:
                            mapping[branch["$ref"].rsplit("/", 1)[-1]] = branch["$ref"]
                cases = []
                for value, ref in mapping.items():
                    cases.append({"if": {"properties": {name: {"const": value}}, "required": [name]},
                                  "then": self.convert({"$ref": ref}, strict, depth + 1)})
                out["allOf"] = cases
                out["required"] = [name]
                out["properties"] = {name: {"enum": list(mapping)}}
                out["type"] = "object"
                return out
            # No discriminator: a branch must validate (see the module's comment).
            out["anyOf"] = [self.convert(b, strict, depth + 1) for b in branches]
            return out
        kind = schema.get("type")
        if kind:
            out["type"] = [kind, "null"] if schema.get("nullable") else kind
        if "enum" in schema:
            out["enum"] = list(schema["enum"]) + ([None] if schema.get("nullable") and None not in schema["enum"] else [])
        for key in ("minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
                    "exclusiveMaximum", "minItems", "maxItems", "uniqueItems", "required", "multipleOf",
                    "minProperties", "maxProperties", "const"):
            if key in schema:
                out[key] = schema[key]
        # OpenAPI 3.0's boolean exclusiveMinimum/Maximum.
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if out.get(key) is True:
                out[key] = out.pop(bound)
            elif out.get(key) is False:
                del out[key]
        if "items" in schema:
            out["items"] = self.convert(schema["items"], strict, depth + 1)
        properties = schema.get("properties")
        if properties is not None:
            out["properties"] = {k: self.convert(v, strict, depth + 1) for k, v in properties.items()}
            if kind is None:
                out["type"] = "object"
        extra = schema.get("additionalProperties")
        if extra is False:
            out["additionalProperties"] = False
        elif isinstance(extra, dict):
            out["additionalProperties"] = self.convert(extra, strict, depth + 1)
        elif extra is None and strict and properties:
            out["additionalProperties"] = False
        return out

    def merge_all_of(self, schema):
        """One object schema from `allOf` parts (nested allOf too); see the module's comment."""
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        properties = dict(merged.get("properties") or {})
        required = list(merged.get("required") or [])
        closed = merged.get("additionalProperties") is False
        for part in schema["allOf"]:
            part = self.resolve(part)
            if "allOf" in part:
                part = self.merge_all_of(part)
            for key, value in (part.get("properties") or {}).items():
                # The later part's property wins (Sinch's status branches narrow `method` to their value).
                properties[key] = value
            required += [r for r in part.get("required") or [] if r not in required]
            closed = closed or part.get("additionalProperties") is False
            for key, value in part.items():
                if key not in ("properties", "required", "additionalProperties", "description", "title") \
                        and key not in merged:
                    merged[key] = value
        merged["properties"] = properties
        if required:
            merged["required"] = required
        merged["type"] = "object"
        if closed:
            merged["additionalProperties"] = False
        return merged


# --------------------------------------------------------------------------------------------------------
# The vendors' documents
# --------------------------------------------------------------------------------------------------------
class Operation:
    def __init__(self, vendor, method, template, regex, parameters, request_body, responses, security, reader):
        self.vendor, self.method, self.template, self.regex = vendor, method, template, regex
        self.parameters, self.request_body, self.responses = parameters, request_body, responses
        self.security, self.reader = security, reader

    @property
    def name(self):
        return f"{self.method.upper()} {self.template}"


def template_regex(template):
    pattern = ""
    for piece in re.split(r"(\{[^}]+\})", template):
        if piece.startswith("{"):
            pattern += f"(?P<{re.sub(r'[^A-Za-z0-9_]', '_', piece[1:-1])}>[^/]+)"
        else:
            pattern += re.escape(piece)
    return re.compile("^" + pattern + "$")


class OpenAPIDocument:
    def __init__(self, vendor, path):
        with open(path) as f:
            self.document = yaml.safe_load(f)
        self.vendor = vendor
        self.reader = SchemaReader(self.document)
        servers = self.document.get("servers") or [{"url": ""}]
        self.base_path = urllib.parse.urlsplit(server_url(servers[0])).path.rstrip("/")
        self.operations = []
        for template, item in self.document["paths"].items():
            shared = [self.reader.resolve(p) for p in item.get("parameters") or []]
            for method, op in item.items():
                if method not in HTTP_METHODS:
                    continue
                own = [self.reader.resolve(p) for p in op.get("parameters") or []]
                names = {(p["in"], p["name"]) for p in own}
                parameters = own + [p for p in shared if (p["in"], p["name"]) not in names]
                body = self.reader.resolve(op["requestBody"]) if "requestBody" in op else None
                responses = {str(k): self.reader.resolve(v) for k, v in (op.get("responses") or {}).items()}
                security = op.get("security", self.document.get("security"))
                self.operations.append(Operation(vendor, method, template, template_regex(template), parameters,
                                                 body, responses, security, self.reader))
        # A literal segment beats a parameter (`/Attempts/Summary` before `/Attempts/{Sid}`).
        self.operations.sort(key=lambda o: o.template.count("{"))

    def find(self, method, path):
        if not path.startswith(self.base_path):
            return None, None
        rest = path[len(self.base_path):] or "/"
        for op in self.operations:
            match = op.regex.match(rest)
            if match and op.method == method.lower():
                return op, match.groupdict()
        return None, None


def server_url(server):
    """A server's URL with its variables substituted (see the module's comment): one that begins the URL (CAMARA's
    `{apiRoot}`, the operator's scheme, host and perhaps a path) is dropped, since the recorded path has it
    stripped with the vendor prefix; any other takes its default. Left literal, `{apiRoot}/sim-swap/v2` would be
    taken for a path that no request has."""
    url = server.get("url", "")
    for name, variable in (server.get("variables") or {}).items():
        placeholder = "{" + name + "}"
        url = url.replace(placeholder, "" if url.startswith(placeholder) else str(variable.get("default", "")))
    if url.startswith("/"):
        return url
    return url if "://" in url else "/" + url


def coerce(value, schema):
    """A form or query string as the JSON value its schema describes."""
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
        if kind == "boolean":
            return {"true": True, "false": False}.get(value, value)
    except ValueError:
        return value
    return value


def errors_of(schema, instance):
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(body)'}: {e.message[:240]}"
            for e in validator.iter_errors(instance)]


def media(content_type):
    return (content_type or "").split(";")[0].strip().lower()


class Finding:
    def __init__(self):
        self.problems, self.allowed = [], []


def validate_openapi(doc, record, vendor, grants=None):
    """(request problems, answer problems, allowed entries) for one recorded exchange; `grants`: access token ->
    the scopes the recorded token answers granted it (camara_grants)."""
    request, response = record["request"], record["response"]
    req_problems, ans_problems, allowed = [], [], []
    op, path_params = doc.find(request["method"], request["path"])
    if op is None:
        return [f"no operation {request['method']} {request['path']} in the document"], [], []
    reader = op.reader
    headers = {k.lower(): v for k, v in request["headers"].items()}
    query = urllib.parse.parse_qs(request["query"], keep_blank_values=True)
    # Parameters.
    known_query = set()
    for p in op.parameters:
        schema = reader.convert(p.get("schema") or {}, strict=True)
        where, name = p["in"], p["name"]
        if where == "path":
            value = urllib.parse.unquote(path_params.get(re.sub(r"[^A-Za-z0-9_]", "_", name), ""))
            for e in errors_of(schema, coerce(value, schema)):
                req_problems.append(f"path parameter {name}: {e}")
        elif where == "query":
            known_query.add(name)
            if name not in query:
                if p.get("required"):
                    req_problems.append(f"required query parameter {name} missing")
                continue
            values = query[name]
            value = [coerce(v, schema.get("items") or {}) for v in values] if schema.get("type") == "array" \
                else coerce(values[-1], schema)
            for e in errors_of(schema, value):
                req_problems.append(f"query parameter {name}: {e}")
        elif where == "header":
            if name.lower() == "authentication" and vendor == "sinch":
                continue  # named `Authentication` by the document, `Authorization` by Sinch (module comment)
            if name.lower() not in headers:
                if p.get("required"):
                    req_problems.append(f"required header {name} missing")
                continue
            for e in errors_of(schema, coerce(headers[name.lower()], schema)):
                req_problems.append(f"header {name}: {e}")
    for name in query:
        if name not in known_query:
            req_problems.append(f"undocumented query parameter {name}")
    # Security: one of the schemes must be present.
    if op.security:
        schemes = doc.document.get("components", {}).get("securitySchemes", {})
        satisfied = False
        for requirement in op.security:
            if all(security_present(schemes.get(name, {}), headers, query, vendor, scopes, grants)
                   for name, scopes in requirement.items()):
                satisfied = True
        granted = token_scopes(headers, grants)
        if not satisfied and granted is not None and any(
                schemes.get(name, {}).get("type") in ("openIdConnect", "oauth2")
                for requirement in op.security for name in requirement):
            # A bearer token whose grant was recorded, without the scopes the operation needs.
            req_problems.append(f"the access token was granted `{' '.join(sorted(granted))}`; {op.name} needs "
                                + " or ".join("`" + " ".join(s for v in requirement.values() for s in v) + "`"
                                              for requirement in op.security))
        elif not satisfied:
            req_problems.append("no credentials of a documented scheme (" +
                                ", ".join("+".join(r) for r in op.security) + ")")
    # Body.
    body = request["body"]
    if op.request_body is None:
        if body:
            req_problems.append("a body where the operation takes none")
    else:
        content = op.request_body.get("content") or {}
        kind = media(headers.get("content-type"))
        if not body:
            if op.request_body.get("required"):
                req_problems.append("required body missing")
        elif kind not in content:
            req_problems.append(f"body of type {kind or '(none)'}; the document takes {', '.join(content)}")
        else:
            schema = reader.convert(content[kind].get("schema") or {}, strict=True)
            if kind == "application/x-www-form-urlencoded":
                fields = urllib.parse.parse_qs(body.decode(), keep_blank_values=True)
                instance = {}
                for name, values in fields.items():
                    prop = (schema.get("properties") or {}).get(name, {})
                    if prop.get("type") == "array":
                        instance[name] = [coerce(v, prop.get("items") or {}) for v in values]
                    else:
                        if len(values) > 1:
                            req_problems.append(f"form field {name} repeated but not an array")
                        instance[name] = coerce(values[-1], prop)
            else:
                try:
                    instance = json.loads(body)
                except ValueError:
                    instance = None
                    req_problems.append("body is not JSON")
            if instance is not None:
                req_problems += [f"body {e}" for e in errors_of(schema, instance)]
    # Answer.
    status = str(response["status"])
    documented = op.responses.get(status) or op.responses.get(status[0] + "XX") or op.responses.get("default")
    answer_headers = {k.lower(): v for k, v in response["headers"].items()}
    raw = response["body"]
    if documented is None and vendor == "vonage" and op.method == "delete" and status == "409":
        allowed.append("vonage-v2:cancel-409")
        documented = reader.resolve(doc.document["components"]["responses"]["ErrorResponse409"])
    if documented is None:
        entry = f"{vendor}:error-status"
        if response["status"] >= 400 and entry in ALLOW:
            allowed.append(entry)
            schema = ERROR_SCHEMAS.get(vendor)
            if schema is None and vendor == "telnyx":  # Telnyx: its verify_Errors or messaging_Errors schema (ALLOW)
                schemas = doc.document["components"]["schemas"]
                name = "messaging_Errors" if "messaging_Errors" in schemas else "verify_Errors"
                schema = reader.convert(schemas[name], strict=True)
            if schema is None:  # Sinch: its own Error schema, errorCode a string or a whole number (ALLOW)
                schema = reader.convert(doc.document["components"]["schemas"]["Error"], strict=True)
                schema["properties"]["errorCode"] = {"type": ["string", "integer"]}
            ans_problems += check_json_answer(schema, raw, answer_headers)
        else:
            ans_problems.append(f"status {status} is not documented for {op.name} "
                                f"(documented: {', '.join(op.responses)})")
        return req_problems, ans_problems, allowed
    content = documented.get("content") or {}
    if not content:
        if raw.strip():
            ans_problems.append(f"a body for status {status}, which the document gives none")
        return req_problems, ans_problems, allowed
    kind = media(answer_headers.get("content-type"))
    if kind not in content:
        ans_problems.append(f"answer of type {kind or '(none)'}; documented: {', '.join(content)}")
        return req_problems, ans_problems, allowed
    schema_node = content[kind].get("schema") or {}
    # Sinch's status answer for a seamless verification: no branch in the document (ALLOW).
    if vendor == "sinch" and request["method"] == "GET" and "status" in json.dumps(schema_node).lower():
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("method") == "seamless" \
                and reader.resolve(schema_node).get("discriminator"):
            allowed.append("sinch:seamless-status")
            base = copy.deepcopy(doc.document["components"]["schemas"]["VerificationStatusResponseBase"])
            base["properties"]["method"] = {"type": "string", "enum": ["seamless"]}
            sms = doc.document["components"]["schemas"]["VerificationStatusResponseSms"]
            base["properties"]["price"] = sms["allOf"][1]["properties"]["price"]
            schema_node = base
    # The SMS API's refused parts: ErrorMessage elements in `messages` (ALLOW).
    if vendor == "vonage" and op.template.startswith("/sms/"):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        parts = parsed.get("messages") if isinstance(parsed, dict) else None
        if isinstance(parts, list) and any(isinstance(p, dict) and p.get("status") != "0" for p in parts):
            allowed.append("vonage:sms-refused-part")
            schemas = doc.document["components"]["schemas"]
            answer = copy.deepcopy(reader.resolve(schemas["SMS"]))
            answer["properties"]["messages"] = {
                "type": "array", "items": {"oneOf": [schemas["Message"], schemas["ErrorMessage"]]}}
            ans_problems += check_json_answer(reader.convert(answer, strict=True), raw, answer_headers)
            for index, part in enumerate(parts):
                if isinstance(part, dict) and part.get("status") != "0":
                    for e in errors_of(reader.convert(schemas["ErrorMessage"], strict=True), part):
                        ans_problems.append(f"refused part {index}: {e}")
            return req_problems, ans_problems, allowed
    ans_problems += check_json_answer(reader.convert(schema_node, strict=True), raw, answer_headers)
    return req_problems, ans_problems, allowed


def token_scopes(headers, grants):
    """The scopes a recorded token answer granted the request's bearer token, or None when unknown."""
    auth = headers.get("authorization", "")
    if not auth.lower().startswith("bearer "):
        return None
    return (grants or {}).get(auth[7:].strip())


def security_present(scheme, headers, query, vendor, scopes=(), grants=None):
    kind = scheme.get("type")
    auth = headers.get("authorization", "")
    if kind in ("openIdConnect", "oauth2"):
        # An access token (module comment); its scopes where its grant was recorded.
        if not (auth.lower().startswith("bearer ") and auth[7:].strip()):
            return False
        granted = token_scopes(headers, grants)
        return granted is None or set(scopes or ()) <= granted
    if kind == "http":
        return auth.lower().startswith(scheme.get("scheme", "").lower() + " ")
    if kind == "apiKey":
        if scheme.get("in") == "header":
            name = scheme["name"].lower()
            if vendor == "sinch" and name == "authentication":
                return auth.startswith("Application ")  # Sinch's `Authorization: Application key:signature`
            return name in headers
        if scheme.get("in") == "query":
            return scheme["name"] in query
    return False


def check_json_answer(schema, raw, headers):
    kind = media(headers.get("content-type"))
    if not raw.strip():
        return ["empty answer where the document describes a body"]
    if kind and not kind.endswith("json"):
        return [f"answer of type {kind}, not JSON"]
    try:
        instance = json.loads(raw)
    except ValueError:
        return ["answer is not JSON"]
    return [f"answer {e}" for e in errors_of(schema, instance)]


# --------------------------------------------------------------------------------------------------------
# Firebase: the Identity Toolkit discovery document
# --------------------------------------------------------------------------------------------------------
class DiscoveryDocument:
    """A reader for a Google API discovery document's `methods` and `schemas`."""

    def __init__(self, path):
        with open(path) as f:
            self.document = json.load(f)
        self.base_path = "/" + self.document.get("servicePath", "").strip("/")
        self.base_path = self.base_path.rstrip("/")
        self.methods = []
        self.collect(self.document)

    def collect(self, node):
        for method in (node.get("methods") or {}).values():
            template = "/" + method.get("flatPath", method["path"])
            self.methods.append((method["httpMethod"], template_regex(template), method))
        for child in (node.get("resources") or {}).values():
            self.collect(child)

    def convert(self, schema, depth=0):
        """JSON Schema for a discovery schema; properties are closed (the document lists them all)."""
        if depth > 30:
            return {}
        if "$ref" in schema:
            return self.convert(self.document["schemas"][schema["$ref"]], depth + 1)
        out = {}
        kind = schema.get("type")
        if kind and kind != "any":
            out["type"] = kind
        if kind == "string" and schema.get("format") in ("int64", "uint64"):
            out["pattern"] = r"^-?[0-9]+$"  # 64-bit integers travel as decimal strings in Google's JSON
        if "enum" in schema:
            out["enum"] = schema["enum"]
        if "items" in schema:
            out["items"] = self.convert(schema["items"], depth + 1)
        if "properties" in schema:
            out["properties"] = {k: self.convert(v, depth + 1) for k, v in schema["properties"].items()}
            out["additionalProperties"] = False
        if isinstance(schema.get("additionalProperties"), dict):
            out["additionalProperties"] = self.convert(schema["additionalProperties"], depth + 1)
        return out

    def find(self, method, path):
        if not path.startswith(self.base_path):
            return None, None
        rest = path[len(self.base_path):]
        for http_method, regex, spec in self.methods:
            match = regex.match(rest)
            if match and http_method == method:
                return spec, match.groupdict()
        return None, None


def validate_discovery(doc, record, vendor):
    request, response = record["request"], record["response"]
    req_problems, ans_problems, allowed = [], [], []
    spec, _ = doc.find(request["method"], request["path"])
    if spec is None:
        return [f"no method {request['method']} {request['path']} in the discovery document"], [], []
    headers = {k.lower(): v for k, v in request["headers"].items()}
    query = urllib.parse.parse_qs(request["query"], keep_blank_values=True)
    parameters = dict(doc.document.get("parameters") or {})
    parameters.update(spec.get("parameters") or {})
    for name, values in query.items():
        p = parameters.get(name)
        if p is None or p.get("location") != "query":
            req_problems.append(f"undocumented query parameter {name}")
            continue
        schema = {k: v for k, v in doc.convert(p).items()}
        for e in errors_of(schema, coerce(values[-1], schema)):
            req_problems.append(f"query parameter {name}: {e}")
    for name, p in parameters.items():
        if p.get("required") and p.get("location") == "query" and name not in query:
            req_problems.append(f"required query parameter {name} missing")
    # Credentials: without OAuth scopes, an API key (`key`) must name the project.
    if "key" not in query and not headers.get("authorization") and "x-goog-api-key" not in headers:
        req_problems.append("no API key (`key`) and no Authorization")
    body = request["body"]
    if "request" in spec:
        if media(headers.get("content-type")) != "application/json":
            req_problems.append(f"body of type {headers.get('content-type')}; the API takes application/json")
        try:
            instance = json.loads(body or b"null")
        except ValueError:
            instance = None
            req_problems.append("body is not JSON")
        if instance is not None:
            req_problems += [f"body {e}" for e in errors_of(doc.convert(spec["request"]), instance)]
    elif body:
        req_problems.append("a body where the method takes none")
    answer_headers = {k.lower(): v for k, v in response["headers"].items()}
    if response["status"] == 200:
        if "response" in spec:
            ans_problems += check_json_answer(doc.convert(spec["response"]), response["body"], answer_headers)
    elif response["status"] >= 400:
        allowed.append("firebase:error-status")
        ans_problems += check_json_answer(ERROR_SCHEMAS["firebase"], response["body"], answer_headers)
    else:
        ans_problems.append(f"status {response['status']}: a discovery method answers 200 or an error")
    return req_problems, ans_problems, allowed


# --------------------------------------------------------------------------------------------------------
# The recording proxy
# --------------------------------------------------------------------------------------------------------
class Recorder:
    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.records = []
        self.lock = threading.Lock()


def make_proxy(recorder):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            split = urllib.parse.urlsplit(self.path)
            forward = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            connection = http.client.HTTPConnection("127.0.0.1", recorder.upstream_port, timeout=60)
            try:
                connection.request(self.command, self.path, body=body or None, headers=forward)
                answer = connection.getresponse()
                answer_body = answer.read()
                status, answer_headers = answer.status, answer.getheaders()
            except (OSError, http.client.HTTPException) as error:
                status, answer_headers, answer_body = 599, [], str(error).encode()
            finally:
                connection.close()
            with recorder.lock:
                recorder.records.append({
                    "request": {"method": self.command, "path": split.path, "query": split.query,
                                "headers": dict(self.headers.items()), "body": body},
                    "response": {"status": status, "headers": dict(answer_headers), "body": answer_body},
                })
            if status == 599:
                self.close_connection = True
                return
            self.send_response(status)
            for name, value in answer_headers:
                if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer_body)))
            self.end_headers()
            self.wfile.write(answer_body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    return Server(("127.0.0.1", 0), Handler)


# --------------------------------------------------------------------------------------------------------
# Driving the gateway
# --------------------------------------------------------------------------------------------------------
class Driver:
    def __init__(self, base):
        self.base = base
        self.counter = 0
        self.failures = []

    def call(self, method, path, body=None):
        return sandbox_gateway.call(self.base, method, path, body)

    def via_call(self, method, path, headers):
        """A call straight to an emulator through the recording proxy (`self.via` + `path`)."""
        url = urllib.parse.urlsplit(self.via + path)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        try:
            connection.request(method, url.path, headers=headers)
            response = connection.getresponse()
            raw = response.read()
            try:
                return response.status, json.loads(raw) if raw else {}
            except ValueError:
                return response.status, {"raw": raw[:200].decode(errors="replace")}
        finally:
            connection.close()

    def start(self, provider, to, channel="sms", expect=(201,), **extra):
        body = {"to": to, "provider": provider, "channel": channel, **extra}
        status, answer = self.call("POST", "/v1/verifications", body)
        if status not in expect:
            self.failures.append(f"start {provider} {channel} {to}: {status} {answer}")
        return status, answer

    def code(self, to):
        for _ in range(50):
            code = sandbox_gateway.code_for(self.base, to)
            if code:
                return code
            time.sleep(0.1)
        self.failures.append(f"no code in the outbox for {to}")
        return "000000"

    def check(self, vid, code, expect=None):
        status, answer = self.call("POST", f"/v1/verifications/{vid}/check", {"code": code})
        if expect is not None and status not in expect:
            self.failures.append(f"check {vid}: {status} {answer}")
        return status, answer

    def expect(self, what, status, answer, allowed):
        if status not in allowed:
            self.failures.append(f"{what}: {status} {answer}")


def drive_twilio(d):
    for channel, to in (("sms", "+14155550301"), ("voice", "+14155550302"), ("whatsapp", "+14155550303")):
        status, v = d.start("twilio", to, channel, locales=["fr-FR"])
        if status != 201:
            continue
        d.check(v["id"], "000000" if d.code(to) != "000000" else "111111", expect=(422,))
        d.expect("twilio refresh", *d.call("GET", f"/v1/verifications/{v['id']}?refresh=true"), (200,))
        d.check(v["id"], d.code(to), expect=(200,))
        # Twilio forgets an approved verification: its status fetch answers 20404.
        d.call("GET", f"/v1/verifications/{v['id']}?refresh=true")
    status, v = d.start("twilio", "verify@example.com", "email")
    if status == 201:
        d.expect("twilio email check", *d.check(v["id"], d.code("verify@example.com")), (200,))
    status, v = d.start("twilio", "+14155550304")
    if status == 201:
        d.expect("twilio resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend", {"channel": "voice"}), (200,))
        d.expect("twilio cancel", *d.call("POST", f"/v1/verifications/{v['id']}/cancel", {}), (200,))
        d.expect("twilio check after cancel", *d.check(v["id"], "123456"), (409, 410, 404, 422))
    status, v = d.start("twilio", "+14155550306")
    if status == 201:  # Twilio's fifth send is its last: 60203 after that
        for _ in range(6):
            if d.call("POST", f"/v1/verifications/{v['id']}/resend", {})[0] != 200:
                break
    # A number Twilio's lookup does not know (its 60200 for To).
    d.start("twilio", "+44740090001", expect=(201, 400, 422, 502))
    status, v = d.start("twilio", "+14155550305", code_length=8)
    if status == 201:
        for _ in range(6):  # past Twilio's attempts: its 60202 answer
            s, a = d.check(v["id"], "00000000")
            if s not in (422,):
                break


def drive_twilio_lookup(d):
    """What the gateway asks Twilio after an instance died during a start (docs/architecture.md §9.2): the
    number's pending verification, `GET …/Verifications/{To}` with the `To` in the SID's place (percent-encoded,
    as Twilio's helper libraries send it), sent here through the proxy as the plugin sends it (the gateway only
    sends it on a takeover): found while pending, Twilio's 20404 once none is."""
    status, v = d.start("twilio", "+14155550308")
    if status != 201:
        return
    sid = "VA5a4db0c5a4db0c5a4db0c5a4db0c0001"
    path = f"/twilio/v2/Services/{sid}/Verifications/{urllib.parse.quote('+14155550308', safe='')}"
    token = "AC5a4db0c5a4db0c5a4db0c5a4db0c0001:" + os.environ["WIRE_TWILIO_TOKEN"]
    import base64
    headers = {"Authorization": "Basic " + base64.b64encode(token.encode()).decode(), "Accept": "application/json"}
    d.expect("twilio lookup by To (pending)", *d.via_call("GET", path, headers), (200,))
    d.check(v["id"], d.code("+14155550308"), expect=(200,))
    d.expect("twilio lookup by To (none pending)", *d.via_call("GET", path, headers), (404,))


def drive_twilio_push(d):
    """Verify Push: a simulated phone (scripts/push_device.py, needs `cryptography`) enrols a factor with the
    access token from the API, approves one push and denies another; the factors are listed, fetched and
    removed. The phone's own calls reach the emulator through the proxy too (the token's base_url is the
    provider's), so they are checked against Twilio's document as well."""
    try:
        import push_device
    except ImportError as error:
        d.failures.append(f"Twilio push not driven: {error} (pip install cryptography)")
        return
    device = push_device.Device("wire-check-" + os.urandom(6).hex())
    factor = device.enrol(d.base, KEY, "twilio")
    for answer in ("approved", "denied"):
        started = push_device.start_push(d.base, KEY, device.identity, "twilio")
        d.expect("twilio push refresh", *d.call("GET", f"/v1/verifications/{started['id']}?refresh=true"), (200,))
        push = device.pushes(d.base)[-1]
        code, _, _ = device.answer(push["challenge_sid"], answer)
        d.expect(f"twilio push {answer}", code, {}, (200,))
        d.expect("twilio push read", *d.call("GET", f"/v1/verifications/{started['id']}?refresh=true"), (200,))
    started = push_device.start_push(d.base, KEY, device.identity, "twilio")
    d.expect("twilio push resend", *d.call("POST", f"/v1/verifications/{started['id']}/resend", {}), (200, 409, 422))
    d.expect("twilio factors", *d.call("GET", f"/v1/factors?identity={device.identity}&provider=twilio"), (200,))
    d.expect("twilio factor", *d.call("GET", f"/v1/factors/{factor}?identity={device.identity}&provider=twilio"),
             (200,))
    d.expect("twilio factor delete",
             *d.call("DELETE", f"/v1/factors/{factor}?identity={device.identity}&provider=twilio"), (200, 204))
    d.start("twilio", device.identity, "push", expect=(422,))  # no factor left: Twilio's 60390 path


def drive_faults(d):
    """Each vendor's own error body: its emulator answers one call with a 500 (the fault switch)."""
    proof = {"type": "recaptcha", "token": "wire-check-token"}
    for plugin, provider, to, extra in (("twilio", "twilio", "+14155550307", {}),
                                        ("vonage", "vonage", "+14155550045", {}),
                                        ("sinch", "sinch", "+46701230307", {}),
                                        ("firebase", "firebase", "+447400123406", {"app_verification": proof})):
        d.expect(f"{plugin} fault", *sandbox_gateway.call(d.base, "PUT", f"/sandbox/faults/{plugin}",
                                                          {"server_error_status": 500, "remaining": 1}), (200,))
        d.start(provider, to, expect=(502, 503), **extra)
        sandbox_gateway.call(d.base, "DELETE", f"/sandbox/faults/{plugin}")


def drive_vonage(d, provider, base_number):
    to = f"+14155550{base_number}1"
    status, v = d.start(provider, to, "sms", fallback_channels=["voice"])
    if status == 201:
        d.check(v["id"], "0000" if d.code(to) != "0000" else "1111", expect=(422,))
        d.expect(f"{provider} refresh", *d.call("GET", f"/v1/verifications/{v['id']}?refresh=true"), (200,))
        d.check(v["id"], d.code(to), expect=(200,))
        d.expect(f"{provider} refresh approved", *d.call("GET", f"/v1/verifications/{v['id']}?refresh=true"), (200,))
    to = f"+14155550{base_number}2"
    status, v = d.start(provider, to, "sms", fallback_channels=["voice"])
    if status == 201:
        d.expect(f"{provider} resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend", {}), (200,))
        d.expect(f"{provider} resend none left", *d.call("POST", f"/v1/verifications/{v['id']}/resend", {}),
                 (200, 409, 422))
        d.expect(f"{provider} cancel", *d.call("POST", f"/v1/verifications/{v['id']}/cancel", {}), (200, 409))
        d.check(v["id"], "9999")
    to = f"+14155550{base_number}3"
    status, v = d.start(provider, to, "voice")
    if status == 201:
        for _ in range(4):  # three wrong codes: Vonage's own limit
            s, _ = d.check(v["id"], "0000")
            if s != 422:
                break
        d.call("GET", f"/v1/verifications/{v['id']}?refresh=true")
    if provider == "vonage":
        to = f"+14155550{base_number}4"
        status, v = d.start(provider, to, "sms", fallback_channels=["voice", "email"], expect=(201, 400, 422))
        status, v = d.start(provider, "verify@example.com", "email", expect=(201, 400, 422))
        if status == 201:
            d.check(v["id"], d.code("verify@example.com"), expect=(200,))
        to = f"+14155550{base_number}6"
        status, v = d.start(provider, to, "whatsapp", fallback_channels=["sms"])
        if status == 201:
            d.check(v["id"], d.code(to), expect=(200,))
        # Silent authentication first, then SMS: the app opens the URL (the device's call, sent as given).
        status, v = d.start(provider, f"+14155550{base_number}5", "silent_auth", fallback_channels=["sms"])
        if status == 201:
            url = ((v.get("next_action") or {}).get("open_url") or {}).get("url")
            if url:
                split = urllib.parse.urlsplit(url)
                sandbox_gateway.call(f"{split.scheme}://{split.netloc}", "GET",
                                     split.path + ("?" + split.query if split.query else ""), key=None)
            d.expect("vonage silent auth read", *d.call("GET", f"/v1/verifications/{v['id']}"), (200,))


def drive_sinch(d):
    for channel, to in (("sms", "+46701230301"), ("voice", "+46701230302"), ("whatsapp", "+46701230303")):
        status, v = d.start("sinch", to, channel, locales=["sv-SE"])
        if status != 201:
            continue
        d.check(v["id"], "0000" if d.code(to) != "0000" else "1111", expect=(422,))
        d.expect("sinch refresh", *d.call("GET", f"/v1/verifications/{v['id']}?refresh=true"), (200,))
        d.check(v["id"], d.code(to), expect=(200,))
    to = "+46701230304"
    status, v = d.start("sinch", to, "flashcall")
    if status == 201:
        d.check(v["id"], "+46000000000", expect=(422,))
        d.check(v["id"], d.code(to), expect=(200,))
    to = "+46701230305"
    status, v = d.start("sinch", to, "silent_auth")
    if status == 201:
        url = ((v.get("next_action") or {}).get("open_url") or {}).get("url")
        if url:
            # The device's request, sent to the gateway itself (it is not the plugin's traffic).
            split = urllib.parse.urlsplit(url)
            sandbox_gateway.call(d.base, "GET", split.path + ("?" + split.query if split.query else ""), key=None)
        d.expect("sinch seamless refresh", *d.call("GET", f"/v1/verifications/{v['id']}?refresh=true"), (200,))
        d.expect("sinch status_by_identity seamless",
                 *d.call("POST", "/v1/providers/sinch/actions/status_by_identity",
                         {"input": {"number": to, "method": "seamless"}}), (200, 404))
    to = "+46701230306"
    status, v = d.start("sinch", to)
    if status == 201:
        d.expect("sinch resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend", {}), (200,))
        d.expect("sinch by reference", *d.call("POST", "/v1/providers/sinch/actions/status_by_reference",
                                               {"input": {"reference": v["id"]}}), (200,))
        d.expect("sinch by identity", *d.call("POST", "/v1/providers/sinch/actions/status_by_identity",
                                              {"input": {"number": to, "method": "sms"}}), (200,))
        d.expect("sinch cancel", *d.call("POST", f"/v1/verifications/{v['id']}/cancel", {}), (200, 409, 422))
    d.call("POST", "/v1/providers/sinch/actions/status_by_id", {"input": {"id": "1234567890"}})
    # Sinch's own refusals: the fraud check and an error code the emulator answers for its number.
    status, v = d.start("sinch", "+46700000666", expect=(201, 403, 422))
    if status == 201:  # the fraud check denies it: nothing is sent, and the check reads Sinch's DENIED
        d.check(v["id"], "0000")
    d.start("sinch", "+46700402001", expect=(400, 402, 403, 422, 429, 502, 503))


def drive_telnyx(d):
    """Every channel by id, wrong and right codes, refreshes, a resend, checks by number, Telnyx's errors."""
    for index, channel in enumerate(("sms", "voice", "flashcall", "whatsapp")):
        to = f"+1415555080{index}"
        status, v = d.start("telnyx", to, channel)
        if status == 201:
            d.check(v["id"], "00000" if d.code(to) != "00000" else "11111", expect=(422,))
            d.expect(f"telnyx {channel} refresh", *d.call("GET", f"/v1/verifications/{v['id']}?refresh=true"), (200,))
            d.check(v["id"], d.code(to), expect=(200,))
            d.expect(f"telnyx {channel} refresh approved",
                     *d.call("GET", f"/v1/verifications/{v['id']}?refresh=true"), (200,))
    status, v = d.start("telnyx", "+14155550810")
    if status == 201:
        d.expect("telnyx resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend", {}), (200,))
        d.check(v["id"], d.code("+14155550810"), expect=(200,))
        d.check(v["id"], d.code("+14155550810"), expect=(409, 404, 422))  # accepted: Telnyx answers 404 10005
    status, v = d.start("telnyx-by-number", "+14155550811")
    if status == 201:
        d.check(v["id"], "00000" if d.code("+14155550811") != "00000" else "11111", expect=(422,))
        d.check(v["id"], d.code("+14155550811"), expect=(200,))
    # Telnyx's own errors through the emulator: a wrong key (401 10009), an unknown profile (422 10017).
    d.start("telnyx-wrong-key", "+14155550812", expect=(502, 503))
    d.start("telnyx-other-profile", "+14155550813", expect=(502, 503, 422))
    d.via_call("GET", "/telnyx/v2/verifications/00000000-0000-4000-8000-000000000000",
               {"Authorization": "Bearer " + TELNYX_KEY})


def drive_firebase(d):
    proof = {"type": "recaptcha", "token": "wire-check-token"}
    to = "+447400123401"
    status, v = d.start("firebase", to, app_verification=proof, locales=["fr-FR"])
    if status == 201:
        d.check(v["id"], "000000" if d.code(to) != "000000" else "111111", expect=(422,))
        d.expect("firebase resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend",
                                            {"app_verification": proof}), (200,))
        d.check(v["id"], d.code(to), expect=(200,))
    d.start("firebase", "+447400123402", app_verification={"type": "recaptcha", "token": "invalid"},
            expect=(400, 403, 422))
    d.start("firebase", "+447400123403", app_verification={"type": "play_integrity", "token": "wire-check"},
            expect=(201, 400, 422))
    d.start("firebase", "+447400123404", app_verification={"type": "ios_receipt", "token": "receipt",
                                                          "secret": "secret"}, expect=(201, 400, 422))
    drive_firebase_second_factor(d, proof)
    # Firebase's test number (configured on the provider): the send goes without a proof, nothing is sent.
    status, v = d.start("firebase", "+16505550100")
    if status == 201:
        d.check(v["id"], "654321", expect=(422,))
        d.check(v["id"], "123456", expect=(200,))
    to = "+447400123405"
    status, v = d.start("firebase", to, app_verification=proof)
    if status == 201:
        for _ in range(6):
            s, _ = d.check(v["id"], "000000")
            if s != 422:
                break


def drive_firebase_second_factor(d, proof):
    """Multi-factor (Identity Toolkit v2): an enrollment and a sign-in through the API, with a wrong code, a
    resend (the provider's `resend_after_seconds` is 0 here, so it starts the step again) and the strings of a
    stale pending credential, an unknown factor and a number already enrolled. The first factor (the emulator's email and password sign-in)
    goes to the emulator directly, as an app's would, so only the plugin's calls are recorded."""
    toolkit = "/sandbox/firebase/identitytoolkit.googleapis.com"
    key = "AIzaSyD-sandbox-verification-gateway001"
    email, password, to = f"wire-{os.urandom(4).hex()}@example.com", "correct horse battery", "+447400123407"
    s, _ = sandbox_gateway.call(d.base, "POST", f"{toolkit}/v1/accounts:signUp",
                                {"email": email, "password": password, "emailVerified": True}, key="owner")
    d.expect("firebase admin sign-up", s, {}, (200,))

    def first_factor():
        return sandbox_gateway.call(d.base, "POST", f"{toolkit}/v1/accounts:signInWithPassword?key={key}",
                                    {"email": email, "password": password, "returnSecureToken": True}, key=None)[1]

    id_token = first_factor().get("idToken", "")
    status, v = d.start("firebase", to, app_verification=proof,
                        multi_factor={"type": "enroll", "id_token": id_token, "display_name": "wire check"})
    if status == 201:
        d.check(v["id"], "000000" if d.code(to) != "000000" else "111111", expect=(422,))
        d.check(v["id"], d.code(to), expect=(200,))
    answer = first_factor()
    factor = (answer.get("mfaInfo") or [{}])[0].get("mfaEnrollmentId", "")
    step = {"type": "sign_in", "pending_credential": answer.get("mfaPendingCredential", ""), "enrollment_id": factor}
    status, v = d.start("firebase", to, app_verification=proof, multi_factor=step)
    if status == 201:
        d.expect("firebase second factor resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend",
                                                          {"app_verification": proof}), (200,))
        d.check(v["id"], d.code(to), expect=(200,))
    d.start("firebase", to, app_verification=proof, expect=(422,),
            multi_factor=dict(step, pending_credential="stale-credential"))
    d.start("firebase", to, app_verification=proof, expect=(422,), multi_factor=dict(step, enrollment_id="nope"))
    d.start("firebase", to, app_verification=proof, expect=(400,),
            multi_factor={"type": "enroll", "id_token": id_token})


def drive_twilio_messaging(d):
    """The gateway's own codes through Twilio Programmable Messaging: from a number, from an alphanumeric sender
    (GB), through a Messaging Service, a resend, and the emulator's 5xx (Twilio's error object)."""
    for provider, to in (("twilio_messaging", "+14155550901"), ("twilio_messaging", "+447400123901"),
                         ("twilio_messaging_service", "+14155550902")):
        status, v = d.start(provider, to)
        if status != 201:
            continue
        d.expect(f"{provider} resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend", {}), (200,))
        d.check(v["id"], d.code(to), expect=(200,))
    d.call("PUT", "/sandbox/faults/twilio_messaging", {"server_error_status": 503, "remaining": 1})
    d.start("twilio_messaging", "+14155550903", expect=(502, 503))
    d.call("DELETE", "/sandbox/faults/twilio_messaging")


def drive_vonage_sms(d):
    """The gateway's own codes through Vonage's SMS API: a number sender, an alphanumeric one with a unicode
    message (GB, Japanese), a resend through it from a Twilio-sent code, and a refused part (a wrong secret)."""
    status, v = d.start("vonage_sms", "+14155550911")
    if status == 201:
        d.check(v["id"], d.code("+14155550911"), expect=(200,))
    d.start("vonage_sms", "+447400123911", locales=["ja"])
    status, v = d.start("twilio_messaging", "+14155550912")
    if status == 201:
        d.expect("resend through vonage_sms", *d.call(
            "POST", f"/v1/verifications/{v['id']}/resend", {"provider": "vonage_sms"}), (200,))
    d.start("vonage_sms-wrong-secret", "+14155550913", expect=(502, 503))


def drive_telnyx_messaging(d):
    """The gateway's own codes through Telnyx Messaging: a number sender, an alphanumeric one with the messaging
    profile and a unicode message (GB, Japanese), a resend through it from a Twilio-sent code, a wrong API key
    (Telnyx's errors object) and the emulator's 5xx."""
    status, v = d.start("telnyx_messaging", "+14155550921")
    if status == 201:
        d.expect("telnyx_messaging resend", *d.call("POST", f"/v1/verifications/{v['id']}/resend", {}), (200,))
        d.check(v["id"], d.code("+14155550921"), expect=(200,))
    d.start("telnyx_messaging", "+447400123921", locales=["ja"])
    status, v = d.start("twilio_messaging", "+14155550922")
    if status == 201:
        d.expect("resend through telnyx_messaging", *d.call(
            "POST", f"/v1/verifications/{v['id']}/resend", {"provider": "telnyx_messaging"}), (200,))
    d.start("telnyx_messaging-wrong-key", "+14155550923", expect=(502, 503))
    d.call("PUT", "/sandbox/faults/telnyx_messaging", {"server_error_status": 503, "remaining": 1})
    d.start("telnyx_messaging", "+14155550924", expect=(502, 503))
    d.call("DELETE", "/sandbox/faults/telnyx_messaging")


def drive_camara(d):
    """CAMARA through the `camara` provider: SIM Swap as every phone start's risk signal (the configuration's
    `risk:`), a recent change refused (403 `recent_sim_swap`, nothing sent), none (the start goes on), a number the
    operator does not cover (its 404 IDENTIFIER_NOT_FOUND; the start goes on, `on_signal_unavailable` being
    `allow`); retrieve-date through the `sim_swap_date` action; and Number Verification as a `silent_auth` start
    whose URL the device opens (through the proxy to the emulator's authorization endpoint, then redirected to the
    gateway's `/callbacks/camara`, where the gateway exchanges the code and asks `verify`): the device on the
    number's own connection (approved) and on another number's (failed). The network is set through the
    emulator's sandbox controls on the gateway itself, not through the proxy (they are not the plugin's calls)."""
    def network(number, **settings):
        path = "/sandbox/camara/sandbox/numbers/" + urllib.parse.quote(number, safe="")
        d.expect(f"camara sandbox control {number}", *sandbox_gateway.call(d.base, "PUT", path, settings, key=None),
                 (200,))

    def open_silent_url(what, answer):
        url = ((answer.get("next_action") or {}).get("open_url") or {}).get("url")
        if not url:
            d.failures.append(f"{what}: no next_action.open_url.url in {answer}")
            return
        # The device's request, as given: to the operator's authorization endpoint (the proxy), which redirects
        # to the gateway's callback; urllib follows the redirect.
        split = urllib.parse.urlsplit(url)
        d.expect(what, *sandbox_gateway.call(f"{split.scheme}://{split.netloc}", "GET",
                                             split.path + ("?" + split.query if split.query else ""), key=None),
                 (200,))

    def reads(what, vid, expected):
        status, answer = d.call("GET", f"/v1/verifications/{vid}")
        if status != 200 or answer.get("status") != expected:
            d.failures.append(f"{what}: expected {expected}, read {status} {answer}")

    # A SIM changed an hour ago: within the 72 hours of the risk rule, the start is refused.
    network("+447400555001", sim_changed_hours_ago=1)
    status, answer = d.start("twilio", "+447400555001", expect=(403,))
    if status == 403 and "recent_sim_swap" not in json.dumps(answer):
        d.failures.append(f"camara recent swap: 403 without recent_sim_swap: {answer}")
    # A SIM never changed in the sandbox (since 2020): the start goes on.
    d.start("twilio", "+447400555002")
    # A number the operator does not cover: SIM Swap answers 404 IDENTIFIER_NOT_FOUND, the start goes on.
    network("+447400555005", covered=False)
    d.start("twilio", "+447400555005")
    # retrieve-date, through the provider's action.
    status, answer = d.call("POST", "/v1/providers/camara/actions/sim_swap_date",
                            {"input": {"phone_number": "+447400555001"}})
    d.expect("camara sim_swap_date", status, answer, (200,))
    if status == 200 and not (answer.get("output") or {}).get("latest_sim_change"):
        d.failures.append(f"camara sim_swap_date: no latest_sim_change in {answer}")
    # Number Verification: the device on its own number's mobile data, then on another number's.
    status, v = d.start("camara", "+447400555003", "silent_auth")
    if status == 201:
        open_silent_url("camara silent auth (own connection)", v)
        reads("camara silent auth (own connection)", v["id"], "approved")
    network("+447400555004", network_number="+447400555099")
    status, v = d.start("camara", "+447400555004", "silent_auth")
    if status == 201:
        open_silent_url("camara silent auth (another number's connection)", v)
        reads("camara silent auth (another number's connection)", v["id"], "failed")


VENDORS = ("twilio", "vonage-v2", "vonage-v1", "sinch", "firebase", "telnyx", "twilio-messaging", "vonage-sms",
           "telnyx-messaging", "camara-sim-swap", "camara-number-verification")

# The camara plugin's OpenID Connect endpoints (under its `token_url` and `authorize_url`): in neither document
# (ALLOW["camara:oidc-endpoint"]).
CAMARA_OIDC = ("/sandbox/camara/token", "/sandbox/camara/authorize")


def vendor_of(path):
    """Which document a recorded path belongs to, and the path the document describes."""
    if path.startswith("/sandbox/twilio_messaging/"):
        return "twilio-messaging", path[len("/sandbox/twilio_messaging"):]
    if path.startswith("/sandbox/vonage_sms/"):
        return "vonage-sms", path[len("/sandbox/vonage_sms"):]
    if path.startswith("/sandbox/telnyx_messaging/"):
        return "telnyx-messaging", path[len("/sandbox/telnyx_messaging"):]
    if path.startswith("/sandbox/twilio/"):
        return "twilio", path[len("/sandbox/twilio"):]
    if path.startswith("/sandbox/vonage/v2/"):
        return "vonage-v2", path[len("/sandbox/vonage"):]
    if path.startswith("/sandbox/vonage/verify"):
        return "vonage-v1", path[len("/sandbox/vonage"):]
    if path.startswith("/sandbox/vonage/"):
        return "vonage-v2", path[len("/sandbox/vonage"):]
    if path.startswith("/sandbox/sinch/"):
        return "sinch", path[len("/sandbox/sinch"):]
    if path.startswith("/sandbox/telnyx/"):
        return "telnyx", path[len("/sandbox/telnyx"):]
    if path.startswith("/sandbox/camara/sim-swap/"):
        return "camara-sim-swap", path[len("/sandbox/camara"):]
    if path.startswith("/sandbox/camara/number-verification/"):
        return "camara-number-verification", path[len("/sandbox/camara"):]
    prefix = "/sandbox/firebase/identitytoolkit.googleapis.com"
    if path.startswith(prefix):
        return "firebase", path[len(prefix):]
    return None, path


def discovery_path(explicit):
    if explicit:
        return explicit
    try:
        import googleapiclient
    except ImportError:
        raise SystemExit("the Firebase check needs google-api-python-client (its discovery document), "
                         "or --firebase-discovery FILE")
    return os.path.join(os.path.dirname(googleapiclient.__file__), "discovery_cache", "documents",
                        "identitytoolkit.v1.json")


class IdentityToolkitDocuments:
    """The v1 and v2 discovery documents, each answering for the paths under its version."""

    def __init__(self, v1_path):
        self.v1 = DiscoveryDocument(v1_path)
        self.v2 = DiscoveryDocument(v1_path.replace("identitytoolkit.v1.json", "identitytoolkit.v2.json"))

    def for_path(self, path):
        return self.v2 if path.startswith("/v2/") else self.v1


def load_documents(specs, discovery):
    files = {"twilio": "twilio_verify_v2.yaml", "vonage-v2": "vonage_verify_v2.yaml",
             "vonage-v1": "vonage_verify_v1.yaml", "sinch": "sinch_verification_v1.yaml",
             "telnyx": "telnyx_verify_v2.yaml", "twilio-messaging": "twilio_api_v2010.yaml",
             "vonage-sms": "vonage_sms.yaml", "telnyx-messaging": "telnyx_messaging_v2.yaml",
             "camara-sim-swap": "camara_sim_swap_v2.yaml",
             "camara-number-verification": "camara_number_verification_v2.yaml"}
    missing = [f for f in files.values() if not os.path.isfile(os.path.join(specs, f))]
    if missing:
        raise SystemExit(f"vendor specs missing in {specs}: {', '.join(missing)} (give --specs ../shared/specs)")
    docs = {v: OpenAPIDocument(v, os.path.join(specs, f)) for v, f in files.items()}
    docs["firebase"] = IdentityToolkitDocuments(discovery)
    return docs


def camara_oidc_vendor(record):
    """The API a call to the camara plugin's token or authorization endpoint serves (ALLOW), or None: the
    client-credentials token is SIM Swap's (two-legged), the authorization and its code's token Number
    Verification's (three-legged)."""
    request = record["request"]
    if request["path"] not in CAMARA_OIDC:
        return None
    form = urllib.parse.parse_qs(request["body"].decode(errors="replace")) if request["body"] else {}
    if request["path"].endswith("/token") and form.get("grant_type") == ["client_credentials"]:
        return "camara-sim-swap"
    return "camara-number-verification"


def camara_grants(records):
    """Access token -> the scopes granted it, from the recorded answers of the camara plugin's token endpoint:
    the answer's `scope` (RFC 6749 §5.1), or the scopes the request asked for when the answer leaves it out."""
    grants = {}
    for record in records:
        request, response = record["request"], record["response"]
        if not request["path"].endswith("/camara/token") or response["status"] != 200:
            continue
        try:
            answer = json.loads(response["body"])
        except ValueError:
            continue
        asked = urllib.parse.parse_qs(request["body"].decode(errors="replace")).get("scope", [None])[-1]
        scope = answer.get("scope") if isinstance(answer, dict) else None
        if isinstance(answer, dict) and answer.get("access_token") and (scope or asked) is not None:
            grants[answer["access_token"]] = set((scope or asked).split())
    return grants


def validate(docs, record, grants=None):
    oidc = camara_oidc_vendor(record)
    if oidc is not None:  # OpenID Connect, in neither CAMARA document: counted, not validated (ALLOW)
        return oidc, [], [], ["camara:oidc-endpoint"]
    vendor, path = vendor_of(record["request"]["path"])
    if vendor is None:
        return None, [f"a call to {path}, which no vendor document covers"], [], []
    local = dict(record, request=dict(record["request"], path=path))
    if vendor == "firebase":
        return (vendor,) + validate_discovery(docs[vendor].for_path(path), local, vendor)
    return (vendor,) + validate_openapi(docs[vendor], local, vendor.split("-")[0], grants)


# --------------------------------------------------------------------------------------------------------
# Self-test: broken copies of recorded exchanges must be refused
# --------------------------------------------------------------------------------------------------------
def mutations(records):
    """(description, broken record, 'request' or 'answer') for the first usable record of each kind."""
    out = []

    def first(predicate):
        return next((r for r in records if predicate(r)), None)

    def with_form(record, change):
        broken = copy.deepcopy(record)
        fields = urllib.parse.parse_qsl(broken["request"]["body"].decode(), keep_blank_values=True)
        broken["request"]["body"] = urllib.parse.urlencode(change(fields)).encode()
        return broken

    def with_json(record, part, change):
        broken = copy.deepcopy(record)
        value = json.loads(broken[part]["body"])
        change(value)
        broken[part]["body"] = json.dumps(value).encode()
        return broken

    twilio_start = first(lambda r: r["request"]["path"].endswith("/Verifications") and r["request"]["method"] == "POST"
                         and r["response"]["status"] == 201)
    if twilio_start:
        out.append(("Twilio start without its required To", with_form(
            twilio_start, lambda f: [(k, v) for k, v in f if k != "To"]), "request"))
        out.append(("Twilio start with an unknown field", with_form(
            twilio_start, lambda f: f + [("Unknown", "1")]), "request"))
        broken = copy.deepcopy(twilio_start)
        broken["request"]["headers"] = {k: v for k, v in broken["request"]["headers"].items()
                                        if k.lower() != "authorization"}
        out.append(("Twilio start without credentials", broken, "request"))
        out.append(("Twilio answer whose valid is a string", with_json(
            twilio_start, "response", lambda v: v.__setitem__("valid", "yes")), "answer"))
        broken = copy.deepcopy(twilio_start)
        broken["request"]["path"] = broken["request"]["path"].replace("/Verifications", "/Verificationz")
        out.append(("Twilio call to an undocumented path", broken, "request"))
    vonage2 = first(lambda r: r["request"]["path"].endswith("/v2/verify") and r["response"]["status"] == 202)
    if vonage2:
        out.append(("Vonage v2 start whose workflow has a channel Vonage does not have", with_json(
            vonage2, "request", lambda v: v["workflow"][0].__setitem__("channel", "pigeon")), "request"))
        out.append(("Vonage v2 start whose brand is a number", with_json(
            vonage2, "request", lambda v: v.__setitem__("brand", 7)), "request"))
        broken = copy.deepcopy(vonage2)
        broken["response"]["status"] = 418
        out.append(("Vonage v2 answer with an undocumented status", broken, "answer"))
        out.append(("Vonage v2 answer without request_id", with_json(
            vonage2, "response", lambda v: v.pop("request_id")), "answer"))
    vonage1 = first(lambda r: r["request"]["path"].endswith("/verify/json"))
    if vonage1:
        out.append(("Vonage v1 start without number", with_form(
            vonage1, lambda f: [(k, v) for k, v in f if k != "number"]), "request"))
    sinch = first(lambda r: r["request"]["path"].endswith("/verification/v1/verifications")
                  and r["response"]["status"] == 200)
    if sinch:
        out.append(("Sinch start without identity", with_json(
            sinch, "request", lambda v: v.pop("identity")), "request"))
        out.append(("Sinch start with an unknown top-level field", with_json(
            sinch, "request", lambda v: v.__setitem__("surprise", True)), "request"))
        out.append(("Sinch start with an unknown method", with_json(
            sinch, "request", lambda v: v.__setitem__("method", "pigeon")), "request"))
        out.append(("Sinch answer with an unknown field", with_json(
            sinch, "response", lambda v: v.__setitem__("surprise", 1)), "answer"))
    telnyx = first(lambda r: r["request"]["path"].endswith("/v2/verifications/sms") and r["response"]["status"] == 200)
    if telnyx:
        out.append(("Telnyx start without its required verify_profile_id", with_json(
            telnyx, "request", lambda v: v.pop("verify_profile_id")), "request"))
        out.append(("Telnyx start whose timeout_secs is a string", with_json(
            telnyx, "request", lambda v: v.__setitem__("timeout_secs", "300")), "request"))
        out.append(("Telnyx answer whose status is not Telnyx's", with_json(
            telnyx, "response", lambda v: v["data"].__setitem__("status", "approved")), "answer"))
    firebase = first(lambda r: r["request"]["path"].endswith("accounts:sendVerificationCode")
                     and r["response"]["status"] == 200)
    if firebase:
        out.append(("Firebase send with an unknown field", with_json(
            firebase, "request", lambda v: v.__setitem__("phone", "+1")), "request"))
        out.append(("Firebase send whose phoneNumber is a number", with_json(
            firebase, "request", lambda v: v.__setitem__("phoneNumber", 447400123401)), "request"))
        out.append(("Firebase answer with an unknown field", with_json(
            firebase, "response", lambda v: v.__setitem__("surprise", 1)), "answer"))
        broken = copy.deepcopy(firebase)
        broken["request"]["query"] = ""
        out.append(("Firebase send without its API key", broken, "request"))
    second = first(lambda r: r["request"]["path"].endswith("/v2/accounts/mfaSignIn:start")
                   and r["response"]["status"] == 200)
    if second:
        out.append(("Firebase second-factor start with an unknown field in phoneSignInInfo", with_json(
            second, "request", lambda v: v["phoneSignInInfo"].__setitem__("phone", "+1")), "request"))
        out.append(("Firebase second-factor answer without its phoneResponseInfo object", with_json(
            second, "response", lambda v: v.__setitem__("phoneResponseInfo", "session")), "answer"))
    messaging = first(lambda r: r["request"]["path"].endswith("/Messages.json") and r["response"]["status"] == 201)
    if messaging:
        out.append(("Twilio Messaging create without its required To", with_form(
            messaging, lambda f: [(k, v) for k, v in f if k != "To"]), "request"))
        out.append(("Twilio Messaging create with an unknown field", with_form(
            messaging, lambda f: f + [("Urgent", "true")]), "request"))
        out.append(("Twilio Messaging answer whose num_segments is a number", with_json(
            messaging, "response", lambda v: v.__setitem__("num_segments", 1)), "answer"))
    sms = first(lambda r: r["request"]["path"].endswith("/sms/json") and b'"status":"0"' in r["response"]["body"])
    if sms:
        out.append(("Vonage SMS send without its required text", with_form(
            sms, lambda f: [(k, v) for k, v in f if k != "text"]), "request"))
        out.append(("Vonage SMS send whose ttl is below the API's floor", with_form(
            sms, lambda f: [(k, "1000" if k == "ttl" else v) for k, v in f]), "request"))
        out.append(("Vonage SMS answer whose part has an unknown field", with_json(
            sms, "response", lambda v: v["messages"][0].__setitem__("surprise", 1)), "answer"))
    telnyx_message = first(lambda r: r["request"]["path"].endswith("/telnyx_messaging/v2/messages")
                           and r["response"]["status"] == 200)
    if telnyx_message:
        out.append(("Telnyx Messaging send without its required to", with_json(
            telnyx_message, "request", lambda v: v.pop("to")), "request"))
        out.append(("Telnyx Messaging send whose type is not SMS or MMS", with_json(
            telnyx_message, "request", lambda v: v.__setitem__("type", "RCS")), "request"))
        out.append(("Telnyx Messaging answer whose parts is a string", with_json(
            telnyx_message, "response", lambda v: v["data"].__setitem__("parts", "1")), "answer"))
    swap_check = first(lambda r: r["request"]["path"].endswith("/camara/sim-swap/v2/check")
                       and r["response"]["status"] == 200)
    if swap_check:
        out.append(("CAMARA SIM swap check whose maxAge is below the API's 1 hour", with_json(
            swap_check, "request", lambda v: v.__setitem__("maxAge", 0)), "request"))
        out.append(("CAMARA SIM swap check whose phoneNumber is not E.164", with_json(
            swap_check, "request", lambda v: v.__setitem__("phoneNumber", "07400555002")), "request"))
        out.append(("CAMARA SIM swap check with an unknown field", with_json(
            swap_check, "request", lambda v: v.__setitem__("msisdn", v.get("phoneNumber"))), "request"))
        broken = copy.deepcopy(swap_check)
        broken["request"]["headers"] = {k: v for k, v in broken["request"]["headers"].items()
                                        if k.lower() != "authorization"}
        out.append(("CAMARA SIM swap check without its access token", broken, "request"))
        broken = copy.deepcopy(swap_check)
        broken["request"]["headers"] = {k: "Basic Z2F0ZXdheTpzYW5kYm94" if k.lower() == "authorization" else v
                                        for k, v in broken["request"]["headers"].items()}
        out.append(("CAMARA SIM swap check with Basic credentials, not a bearer token", broken, "request"))
        out.append(("CAMARA SIM swap answer whose swapped is a string", with_json(
            swap_check, "response", lambda v: v.__setitem__("swapped", "false")), "answer"))
        broken = copy.deepcopy(swap_check)
        broken["request"]["path"] = broken["request"]["path"].replace("/v2/check", "/v1/check")
        out.append(("CAMARA SIM swap check on another version's path", broken, "request"))
    swap_date = first(lambda r: r["request"]["path"].endswith("/camara/sim-swap/v2/retrieve-date")
                      and r["response"]["status"] == 200)
    if swap_date:
        out.append(("CAMARA retrieve-date with check's maxAge", with_json(
            swap_date, "request", lambda v: v.__setitem__("maxAge", 72)), "request"))
        out.append(("CAMARA retrieve-date answer without its required (nullable) latestSimChange", with_json(
            swap_date, "response", lambda v: v.pop("latestSimChange")), "answer"))
        out.append(("CAMARA retrieve-date answer whose monitoredPeriod is a string", with_json(
            swap_date, "response", lambda v: v.__setitem__("monitoredPeriod", "120")), "answer"))
    swap_error = first(lambda r: "/camara/sim-swap/v2/" in r["request"]["path"] and r["response"]["status"] == 404)
    if swap_error:
        out.append(("CAMARA SIM swap 404 whose code is not one of Generic404's", with_json(
            swap_error, "response", lambda v: v.__setitem__("code", "NOT_COVERED")), "answer"))
        out.append(("CAMARA SIM swap 404 whose status is not 404", with_json(
            swap_error, "response", lambda v: v.__setitem__("status", 400)), "answer"))
        out.append(("CAMARA SIM swap 404 without its message", with_json(
            swap_error, "response", lambda v: v.pop("message")), "answer"))
        broken = copy.deepcopy(swap_error)
        broken["response"]["status"] = 409
        out.append(("CAMARA SIM swap answer with an undocumented status", broken, "answer"))
    verify = first(lambda r: r["request"]["path"].endswith("/camara/number-verification/v2/verify")
                   and r["response"]["status"] == 200)
    if verify:
        out.append(("CAMARA verify with both phoneNumber and hashedPhoneNumber", with_json(
            verify, "request", lambda v: v.__setitem__("phoneNumber", "+447400555003")), "request"))
        out.append(("CAMARA verify whose hashedPhoneNumber is not SHA-256 hex", with_json(
            verify, "request", lambda v: v.__setitem__("hashedPhoneNumber", "+447400555003")), "request"))
        out.append(("CAMARA verify with an empty body object", with_json(
            verify, "request", lambda v: v.clear()), "request"))
        broken = copy.deepcopy(verify)
        broken["request"]["headers"] = {k: v for k, v in broken["request"]["headers"].items()
                                        if k.lower() != "authorization"}
        out.append(("CAMARA verify without its access token", broken, "request"))
        if swap_check:
            two_legged = next(v for k, v in swap_check["request"]["headers"].items() if k.lower() == "authorization")
            broken = copy.deepcopy(verify)
            broken["request"]["headers"] = {k: two_legged if k.lower() == "authorization" else v
                                            for k, v in broken["request"]["headers"].items()}
            out.append(("CAMARA verify with SIM Swap's two-legged token (no number-verification:verify)", broken,
                        "request"))
        out.append(("CAMARA verify answer whose devicePhoneNumberVerified is a string", with_json(
            verify, "response", lambda v: v.__setitem__("devicePhoneNumberVerified", "true")), "answer"))
        out.append(("CAMARA verify answer with share's devicePhoneNumber beside it", with_json(
            verify, "response", lambda v: v.__setitem__("devicePhoneNumber", "+447400555003")), "answer"))
        broken = copy.deepcopy(verify)
        broken["response"]["status"] = 404
        out.append(("CAMARA verify answer with a status its operation does not document (404)", broken, "answer"))
    return out


def self_test(docs, records):
    cases = mutations(records)
    grants = camara_grants(records)
    missed = []
    for description, broken, part in cases:
        _, req, ans, _ = validate(docs, broken, grants)
        problems = req if part == "request" else ans
        if problems:
            print(f"  self-test: refused as expected: {description}: {problems[0]}")
        else:
            missed.append(description)
            print(f"  self-test: NOT REFUSED: {description}")
    # Every vendor must have contributed at least one broken copy.
    return len(cases), missed


# --------------------------------------------------------------------------------------------------------
def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--specs", default=os.path.join(ROOT, "..", "shared", "specs"),
                        help="directory with the vendors' OpenAPI files (default ../shared/specs)")
    parser.add_argument("--firebase-discovery", help="identitytoolkit.v1.json (default: google-api-python-client's)")
    parser.add_argument("--gateway", help="gateway binary (default: swift build --product gateway)")
    parser.add_argument("--self-test", action="store_true", help="also show the validator refuses broken traffic")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the data directory and the recorded traffic")
    args = parser.parse_args()

    specs = os.path.abspath(args.specs)
    if not os.path.isdir(specs):
        raise SystemExit(f"no vendor specs at {specs}: give --specs DIR (CI reads ../shared/specs)")
    docs = load_documents(specs, discovery_path(args.firebase_discovery))
    binary = args.gateway or sandbox_gateway.build()

    work = tempfile.mkdtemp(prefix="wire-check-")
    data_dir = os.path.join(work, "data")
    os.makedirs(data_dir)
    gateway_port = sandbox_gateway.free_port()
    recorder = Recorder(gateway_port)
    proxy = make_proxy(recorder)
    proxy_port = proxy.server_address[1]
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    via = f"http://127.0.0.1:{proxy_port}/sandbox"
    config = f"""sandbox: true
providers:
  - {{id: twilio, plugin: twilio, settings: {{account_sid: AC5a4db0c5a4db0c5a4db0c5a4db0c0001,
      auth_token_env: WIRE_TWILIO_TOKEN, service_sid: VA5a4db0c5a4db0c5a4db0c5a4db0c0001,
      base_url: "{via}/twilio"}}}}
  - {{id: vonage, plugin: vonage, settings: {{api_key: 5a4db0c1, api_secret_env: WIRE_VONAGE_SECRET,
      brand: Gateway, signature_secret_env: WIRE_VONAGE_SIGNATURE, base_url: "{via}/vonage",
      whatsapp_from: "14155550100"}}}}
  - {{id: vonage-legacy, plugin: vonage, settings: {{api: v1, api_key: 5a4db0c1, api_secret_env: WIRE_VONAGE_SECRET,
      brand: Gateway, base_url: "{via}/vonage"}}}}
  - {{id: sinch, plugin: sinch, settings: {{application_key: 5a4db0c0-5a4d-4b0c-8a4d-b0c05a4d0001,
      application_secret_env: WIRE_SINCH_SECRET, base_url: "{via}/sinch", foreign_request_events: allow}}}}
  - {{id: firebase, plugin: firebase, settings: {{api_key_env: WIRE_FIREBASE_KEY, project_id: demo-verification-gateway,
      base_url: "{via}/firebase/identitytoolkit.googleapis.com", test_numbers: "+16505550100=123456",
      resend_after_seconds: "0"}}}}
  - {{id: telnyx, plugin: telnyx, settings: {{api_key_env: WIRE_TELNYX_KEY, verify_profile_id: "{TELNYX_PROFILE}",
      timeout_secs: "600", base_url: "{via}/telnyx/v2"}}}}
  - {{id: telnyx-by-number, plugin: telnyx, settings: {{api_key_env: WIRE_TELNYX_KEY, verify_by: phone_number,
      verify_profile_id: "{TELNYX_PROFILE}", base_url: "{via}/telnyx/v2"}}}}
  - {{id: telnyx-wrong-key, plugin: telnyx, settings: {{api_key_env: WIRE_VONAGE_SECRET,
      verify_profile_id: "{TELNYX_PROFILE}", base_url: "{via}/telnyx/v2"}}}}
  - {{id: telnyx-other-profile, plugin: telnyx, settings: {{api_key_env: WIRE_TELNYX_KEY,
      verify_profile_id: "0f0f0f0f-0000-4000-8000-000000000001", base_url: "{via}/telnyx/v2"}}}}
  - {{id: twilio_messaging, plugin: twilio_messaging, settings: {{account_sid: AC5a4db0c5a4db0c5a4db0c5a4db0c0001,
      auth_token_env: WIRE_TWILIO_TOKEN, base_url: "{via}/twilio_messaging"}},
     senders: {{default: "+15005550006", GB: Acme}}}}
  - {{id: twilio_messaging_service, plugin: twilio_messaging, settings: {{
      account_sid: AC5a4db0c5a4db0c5a4db0c5a4db0c0001, auth_token_env: WIRE_TWILIO_TOKEN,
      base_url: "{via}/twilio_messaging"}}, senders: {{default: MG0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a}}}}
  - {{id: vonage_sms, plugin: vonage_sms, settings: {{api_key: 5a4db0c1, api_secret_env: WIRE_VONAGE_SECRET,
      base_url: "{via}/vonage_sms"}}, senders: {{default: "+14155550199", GB: Acme}}}}
  - {{id: vonage_sms-wrong-secret, plugin: vonage_sms, settings: {{api_key: 5a4db0c1,
      api_secret_env: WIRE_TWILIO_TOKEN, base_url: "{via}/vonage_sms"}}, senders: {{default: "+14155550199"}}}}
  - {{id: telnyx_messaging, plugin: telnyx_messaging, settings: {{api_key_env: WIRE_TELNYX_KEY,
      messaging_profile_id: "{TELNYX_MESSAGING_PROFILE}", base_url: "{via}/telnyx_messaging/v2"}},
     senders: {{default: "+14155550199", GB: Acme}}}}
  - {{id: telnyx_messaging-wrong-key, plugin: telnyx_messaging, settings: {{api_key_env: WIRE_VONAGE_SECRET,
      base_url: "{via}/telnyx_messaging/v2"}}, senders: {{default: "+14155550199"}}}}
  # camara at its default `sim_swap_scope` (sim-swap:check), as a deployment has it: the two-legged token the
  # risk step uses must also serve the `sim_swap_date` action's retrieve-date (drive_camara).
  - {{id: camara, plugin: camara, settings: {{client_id: gateway-sandbox, private_key_env: WIRE_CAMARA_KEY,
      api_root: "{via}/camara", token_url: "{via}/camara/token", authorize_url: "{via}/camara/authorize"}}}}
messages: {{app: Wire, origin_bound: {{host: example.com}}}}
# Every phone start asks camara's SIM Swap first: drive_camara's refused start, and every other drive's starts
# are SIM Swap traffic too (a number never set in the emulator has had its SIM since 2020: not refused).
risk: {{sim_swap: {{provider: camara, max_age_hours: 72, on_recent_swap: refuse}}}}
"""
    config_path = os.path.join(work, "wire.yaml")
    with open(config_path, "w") as f:
        f.write(config)
    os.environ.update(
        WIRE_TWILIO_TOKEN="5a4db0c0sandbox0auth0token000001", WIRE_VONAGE_SECRET="Sandbox0Secret01",
        WIRE_VONAGE_SIGNATURE="sandbox-signature-secret-0000000000000001",
        WIRE_SINCH_SECRET="c2FuZGJveC1zaW5jaC1hcHBsaWNhdGlvbi1zZWNyZXQ=",
        WIRE_FIREBASE_KEY="AIzaSyD-sandbox-verification-gateway001", WIRE_TELNYX_KEY=TELNYX_KEY,
        WIRE_CAMARA_KEY=CAMARA_KEY,
        GATEWAY_VONAGE_CANCEL_WINDOW="0")
    log_path = os.path.join(work, "gateway.log")
    process, base = sandbox_gateway.start(binary, data_dir, port=gateway_port,
                                          extra=["--config", config_path], log_path=log_path)
    driver = Driver(base)
    driver.via = via
    try:
        for name, step in (("twilio", drive_twilio), ("twilio lookup", drive_twilio_lookup), ("twilio push", drive_twilio_push), ("vonage", lambda d: drive_vonage(d, "vonage", "04")),
                           ("vonage-legacy", lambda d: drive_vonage(d, "vonage-legacy", "05")),
                           ("sinch", drive_sinch), ("firebase", drive_firebase), ("telnyx", drive_telnyx),
                           ("twilio_messaging", drive_twilio_messaging), ("vonage_sms", drive_vonage_sms),
                           ("telnyx_messaging", drive_telnyx_messaging), ("camara", drive_camara),
                           ("faults", drive_faults)):
            before = len(recorder.records)
            step(driver)
            print(f"drove {name}: {len(recorder.records) - before} vendor calls recorded")
        time.sleep(0.5)  # callbacks the emulators send on their own are not recorded; let calls in flight end
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        proxy.shutdown()

    totals = {v: {"requests": 0, "answers": 0, "bad_requests": 0, "bad_answers": 0, "allowed": {},
                  "operations": set()} for v in VENDORS}
    failed = False
    grants = camara_grants(recorder.records)  # the CAMARA tokens' scopes (module comment)
    for record in recorder.records:
        vendor, req, ans, allowed = validate(docs, record, grants)
        if vendor is None:
            print("INVALID (no vendor):", req[0])
            failed = True
            continue
        t = totals[vendor]
        t["requests"] += 1
        t["answers"] += 1
        t["operations"].add(f"{record['request']['method']} {vendor_of(record['request']['path'])[1]}"
                            f" -> {record['response']['status']}")
        for entry in allowed:
            t["allowed"][entry] = t["allowed"].get(entry, 0) + 1
        if req:
            t["bad_requests"] += 1
        if ans:
            t["bad_answers"] += 1
        for kind, problems in (("request", req), ("answer", ans)):
            for problem in problems:
                r = record["request"]
                print(f"INVALID {vendor} {kind}: {r['method']} {r['path']} -> {record['response']['status']}: {problem}")
    if args.self_test:  # the broken copies first, so the summary ends the output
        count, missed = self_test(docs, recorder.records)
        vendors_covered = {vendor_of(r["request"]["path"])[0] for _, r, _ in mutations(recorder.records)}
    print()
    width = max(len(v) for v in VENDORS)  # camara-number-verification: the document's own name
    print(f"{'vendor':<{width}} {'requests':>8} {'answers':>8} {'invalid requests':>17} {'invalid answers':>16}  allowed")
    for vendor in VENDORS:
        t = totals[vendor]
        allowed = ", ".join(f"{k} x{n}" for k, n in sorted(t["allowed"].items())) or "-"
        print(f"{vendor:<{width}} {t['requests']:>8} {t['answers']:>8} {t['bad_requests']:>17} {t['bad_answers']:>16}  {allowed}")
        if args.verbose:
            for op in sorted({re.sub(r"/[A-Za-z0-9%+._-]{16,}", "/…", op) for op in t["operations"]}):
                print("    " + op)
        if t["requests"] == 0:
            print(f"FAILED: {vendor} recorded no traffic")
            failed = True
        if t["bad_requests"] or t["bad_answers"]:
            failed = True
    if driver.failures:
        print("\nthe gateway answered unexpectedly (the drive is not a wire finding, but it must work):")
        for failure in driver.failures:
            print("  " + failure[:400])
        failed = True
    if args.self_test:
        print(f"self-test: {count - len(missed)} of {count} broken copies refused "
              f"({', '.join(sorted(vendors_covered))})")
        if missed or count == 0 or len(vendors_covered) < len(VENDORS):
            print("FAILED: the validator accepted a broken request or answer, or a vendor had nothing to break")
            failed = True
    if args.keep or failed:
        dump = os.path.join(work, "traffic.json")
        with open(dump, "w") as f:
            json.dump([{"request": dict(r["request"], body=r["request"]["body"].decode(errors="replace")),
                        "response": dict(r["response"], body=r["response"]["body"].decode(errors="replace"))}
                       for r in recorder.records], f, indent=1)
        print(f"kept {work} (traffic.json, gateway.log)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print("wire check: FAILED")
        return 1
    print("wire check: passed (0 invalid requests, 0 invalid answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
