#!/usr/bin/env python3
"""The IDaaS SMS login end to end through a running sandbox gateway, as an app and its backend would run it:

the tenant's area codes (GET /v1/countries?provider=idaas) -> start -> the slider (solved from the puzzle PNGs themselves: the piece's shape is slid over the background
and the darkest fit is the cut-out) -> the SMS (its code read from the sandbox outbox) -> the check -> the
provider tokens -> refresh_id_token -> verify_id_token. Also shows that a wrong slider position sends no SMS.

Stdlib only. Against a gateway you started:  python3 scripts/idaas_walkthrough.py --base http://127.0.0.1:8080 --key $KEY
Or let the script start one:                  python3 scripts/idaas_walkthrough.py
Prints the JSON of each step (images shortened). Exits non-zero on any unexpected answer.
As docs/tour.md's IDaaS walk-through uses it, a solver alone: a verification, or a refused challenge's error, on
stdin; the slider's x on stdout:   curl -s $BASE/v1/verifications/$ID -H "..." | python3 scripts/idaas_walkthrough.py --solve
"""
import argparse, base64, json, os, re, shutil, struct, sys, tempfile, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway  # noqa: E402

NUMBER = "+8613800138000"


def decode_png(data):
    """(width, height, channels, rows of bytes) for an 8-bit RGB/RGBA PNG, any filter, with zlib only."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    offset, idat, width, height, color = 8, b"", 0, 0, 0
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if zlib.crc32(kind + body) & 0xFFFFFFFF != struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])[0]:
            raise ValueError("bad CRC in " + kind.decode())
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            if depth != 8 or color not in (2, 6):
                raise ValueError("only 8-bit RGB/RGBA")
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    channels = 4 if color == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def solve_slider(background_b64, piece_b64):
    """The x where the piece's shape covers the darkest area of the background: the cut-out."""
    width, height, channels, rows = decode_png(base64.b64decode(background_b64))
    piece_width, piece_height, piece_channels, piece_rows = decode_png(base64.b64decode(piece_b64))
    if piece_channels != 4 or piece_height != height:
        raise ValueError("the piece must be an RGBA image as tall as the background")
    mask = [(x, y) for y in range(piece_height) for x in range(piece_width) if piece_rows[y][x * 4 + 3] > 0]
    luminance = [[sum(row[x * channels:x * channels + 3]) for x in range(width)] for row in rows]
    best = min(range(width - piece_width + 1), key=lambda left: sum(luminance[y][left + x] for x, y in mask))
    return best


def shorten(value, key=""):
    """The JSON with the images and tokens cut short, for printing."""
    if isinstance(value, dict):
        return {k: shorten(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten(v) for v in value]
    if isinstance(value, str) and key.endswith("_png_base64"):
        return value[:24] + f"...({len(value)} chars)"
    if isinstance(value, str) and key in ("token", "id_token") and len(value) > 60:
        return value[:40] + "..." + value[-8:]
    return value


def show(title, status, body):
    print(f"\n### {title} -> HTTP {status}")
    print(json.dumps(shorten(body), indent=2, ensure_ascii=False))


def expect(condition, message):
    if not condition:
        raise SystemExit("FAILED: " + message)


def walk(base, key=sandbox_gateway.KEY):
    def call(base, method, path, body=None, key=key):
        return sandbox_gateway.call(base, method, path, body, key=key)
    context = {"ip": "203.0.113.7", "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)",
               "device_id": "walkthrough-device-1"}
    call(base, "DELETE", "/sandbox/outbox", key=None)
    status, countries = call(base, "GET", "/v1/countries")
    served = sorted(c["region"] for c in countries.get("countries", [])
                    if any(p.get("id") == "idaas" for p in c.get("providers", [])))
    print("regions /v1/countries lists for idaas:", served)
    expect("CN" in served and "US" not in served, "idaas must serve CN and not US")

    # The tenant's own area-code list, as the SDK's country picker shows it.
    status, picker = call(base, "GET", "/v1/countries?provider=idaas&lang=zh-CN")
    show("0. the tenant's area codes (GET /v1/countries?provider=idaas&lang=zh-CN)", status, picker)
    entries = picker.get("countries", [])
    expect(status == 200 and sorted(e["region"] for e in entries) == served,
           "the tenant's list must name exactly the regions /v1/countries lists for idaas")
    preferred = [e for e in entries if e["preferred"]]
    expect(len(preferred) == 1 and preferred[0]["region"] == picker["preferred_region"],
           "exactly one entry must be the preferred one")
    china = next(e for e in entries if e["region"] == "CN")
    expect(re.fullmatch(china["mobile_regex"], "+86-13800138000") is not None,
           "the tenant's CN regex must take the dashed form of a CN mobile")
    status, refused = call(base, "GET", "/v1/countries?provider=twilio")
    expect(status == 404 and refused["error"]["code"] == "not_found", "a provider without a list of its own is 404")

    status, body = call(base, "POST", "/v1/verifications",
                        {"to": NUMBER, "provider": "idaas", "locales": ["zh-CN"], "client_context": context})
    show("1. start", status, body)
    expect(status == 201 and body["next_action"]["type"] == "solve_challenge", "start must answer a slider")
    expect(sandbox_gateway.code_for(base, NUMBER) is None, "nothing may be sent before the slider")
    vid = body["id"]

    # A wrong position first: a fresh slider, no SMS.
    challenge = body["next_action"]["solve_challenge"]["data"]
    x = solve_slider(challenge["background_png_base64"], challenge["piece_png_base64"])
    wrong = x + 60 if x < 150 else x - 60
    status, body = call(base, "POST", f"/v1/verifications/{vid}/challenge",
                        {"answer": {"x": wrong}, "client_context": context})
    show(f"2. a wrong slider position (x={wrong})", status, body)
    expect(status == 403 and body["error"]["code"] == "app_verification_failed", "a wrong slider must be refused")
    expect(sandbox_gateway.code_for(base, NUMBER) is None, "a wrong slider must send nothing")
    challenge = body["error"]["next_action"]["solve_challenge"]["data"]

    x = solve_slider(challenge["background_png_base64"], challenge["piece_png_base64"])
    print(f"\nthe cut-out found in the new background PNG at x={x}")
    status, body = call(base, "POST", f"/v1/verifications/{vid}/challenge",
                        {"answer": {"x": x}, "client_context": context})
    show(f"3. the slider solved from the image (x={x})", status, body)
    expect(status == 200 and body["next_action"] is None and body["sends"] == 1, "the solved slider must send the SMS")

    code = sandbox_gateway.code_for(base, NUMBER)
    status, outbox = call(base, "GET", "/sandbox/outbox?to=%2B8613800138000", key=None)
    show("4. the SMS in the sandbox outbox", status, outbox)
    expect(code is not None, "the SMS must be in the outbox")

    status, body = call(base, "POST", f"/v1/verifications/{vid}/check", {"code": code, "client_context": context})
    show("5. check", status, body)
    expect(status == 200 and body["status"] == "approved", "the check must approve")
    tokens = body["provider_tokens"]
    expect(isinstance(tokens.get("expire"), (int, float)) and tokens.get("id_token") and tokens.get("session_token"),
           "the tokens must carry session_token, id_token and a numeric expire")

    status, body = call(base, "POST", "/v1/providers/idaas/actions/refresh_id_token",
                        {"input": {"session_token": tokens["session_token"]}})
    show("6. refresh_id_token", status, body)
    expect(status == 200 and body["output"]["session_token"] != tokens["session_token"], "refresh must rotate")
    status, again = call(base, "POST", "/v1/providers/idaas/actions/refresh_id_token",
                         {"input": {"session_token": tokens["session_token"]}})
    show("7. the old session token again", status, again)
    expect(status == 422 and again["error"]["code"] == "invalid_token", "the rotated token must be refused")

    status, verified = call(base, "POST", "/v1/providers/idaas/actions/verify_id_token",
                            {"input": {"id_token": body["output"]["id_token"]}})
    show("8. verify_id_token", status, verified)
    expect(status == 200 and verified["output"]["valid"] is True, "the refreshed ID token must verify")
    print("\nidaas walkthrough: passed")


def solve_from_stdin():
    """Prints the x of the slider in the verification (or the error's next action) read from stdin."""
    body = json.load(sys.stdin)
    action = body.get("next_action") or body.get("error", {}).get("next_action") or {}
    if action.get("type") != "solve_challenge":
        raise SystemExit("no solve_challenge next action in the JSON on stdin")
    data = action["solve_challenge"]["data"]
    print(solve_slider(data["background_png_base64"], data["piece_png_base64"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", help="a running sandbox gateway; started here when absent")
    parser.add_argument("--key", default=sandbox_gateway.KEY, help="its API key (GATEWAY_SANDBOX_API_KEY)")
    parser.add_argument("--solve", action="store_true",
                        help="only solve the slider in the verification JSON on stdin and print its x")
    args = parser.parse_args()
    if args.solve:
        solve_from_stdin()
        return
    if args.base:
        walk(args.base.rstrip("/"), args.key)
        return
    binary = sandbox_gateway.build()
    work = tempfile.mkdtemp(prefix="gateway-idaas-")
    process, base = sandbox_gateway.start(binary, os.path.join(work, "data"))
    try:
        walk(base)
    finally:
        process.terminate()
        process.wait(timeout=30)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
