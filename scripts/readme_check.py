#!/usr/bin/env python3
"""Pastes the README's walk-through into bash, block by block, against a sandbox gateway of its own, and
checks every documented answer.

    python3 scripts/readme_check.py [--gateway .build/debug/gateway] [--readme README.md] [--verbose]

Stdlib only; the blocks themselves need bash, curl, jq and openssl. Each ```sh block runs in order, in one
working directory (a temporary one, with `scripts` linked to this repository's), each in a fresh `bash`
that starts with the shell variables the blocks before it set (`KEY`, `BASE`, `ID`…), as in one terminal.
`127.0.0.1:8080` (and `localhost:8080`, and the TLS example's 8443) become the ports the check's own gateways
listen on, in the blocks, the files and the documented answers alike. `python3` in a block is the Python
that runs this script (so a virtual environment's packages are there).

What is checked for a block that runs: it exits 0 (its last command), and its output (stdout and stderr
together) holds every documented answer, loosely: each answer is
  - a `# {…}`, `# […]` or `# "…"` line in the block (a comment line starting with `{`, `[` or `"`; other
    comments are prose), or a `# name{label="…"} value` line (a Prometheus sample), or
  - the ```json (or plain ```) block that directly follows the block (blank lines between at most).
An answer with `"key": value` pairs needs each pair in the output, whitespace aside, where a value is a
string, a number, true/false/null, `[]` or `{}`, and `…` inside a string stands for any text; a key shown
with a bare `…` as its value need only be present; nested objects are checked pair by pair. An answer
without pairs (`"approved"`, `["twilio"]`, a metrics line) must appear as it is written (`…` = any text).

Markers (an HTML comment on the line just before a block's opening fence):
  <!-- readme-check: skip REASON -->        not run; the reason is printed
  <!-- readme-check: gateway -->            the block starts the gateway (`[VAR=value …] swift run gateway
                                            [flags]`): the check (re)starts its own binary with those
                                            variables and flags, on the port the block names (8080 by
                                            default), with its own data directory, and waits for /healthz
  <!-- readme-check: file NAME -->         the block is the content of the file NAME (written, not run)
  <!-- readme-check: needs-module NAME -->  run only when `python3` can import NAME; else skipped, saying so
An unmarked block that builds or tests (`swift build|test|run`) or installs (`pip install`, `apt-get`,
`docker`) is not run: it fails the check until it carries a marker.

Every block has a time limit (--block-timeout, 120 s) and the whole run one too (--deadline, 900 s); the
gateways are stopped and the working directory removed however it ends, except that a failed run keeps
the directory (the gateways' logs) and names it. Exits 1 naming the README line of each block that failed.
"""
import argparse, os, re, shlex, shutil, signal, socket, ssl, subprocess, sys, tempfile, time
import urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README_PORTS = (8080, 8443)
MARKER = re.compile(r"^<!--\s*readme-check:\s*(skip|gateway|file|needs-module)\b\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
ASSIGNMENT = re.compile(r"(?:^|[\s;&|(])([A-Z][A-Z0-9_]*)=")
RUNNABLE = {"sh", "bash", "shell"}
UNSAFE = re.compile(r"\bswift\s+(build|test|run)\b|\bpip\s+install\b|\bapt-get\b|\bdocker\b")
ANSWER_LANGUAGES = {"json", ""}


class Block:
    def __init__(self, line, language, text, marker):
        self.line, self.language, self.text, self.marker = line, language, text, marker  # line: the opening fence's
        self.answers = []  # (README line, fragment text)
        self.end = line  # 0-based index of the line after the closing fence
        self.is_answer = False


def parse_readme(path):
    """The fenced blocks, each with the marker before it; answers attached to the runnable blocks."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, index, pending_marker = [], 0, None
    while index < len(lines):
        line = lines[index]
        marker = MARKER.match(line)
        if marker:
            pending_marker = (marker.group(1), marker.group(2))
            index += 1
            continue
        fence = FENCE.match(line)
        if fence:
            start, body = index + 1, []
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                body.append(lines[index])
                index += 1
            blocks.append(Block(start, fence.group(1).lower(), "\n".join(body), pending_marker))
            blocks[-1].end = index + 1
            pending_marker = None
        elif line.strip():
            pending_marker = None
        index += 1
    # A json or plain block right after a runnable one (blank lines between at most) is its answer.
    for previous, block in zip(blocks, blocks[1:]):
        if previous.language in RUNNABLE and block.language in ANSWER_LANGUAGES and block.marker is None:
            between = lines[previous.end:block.line - 1]
            if all(not text.strip() for text in between):
                previous.answers.append((block.line, block.text))
                block.is_answer = True
    for block in blocks:
        if block.language in RUNNABLE:
            for offset, text in enumerate(block.text.split("\n")):
                stripped = text.strip()
                if stripped.startswith("# "):
                    comment = stripped[2:].strip()
                    if comment[:1] in ("{", "[", '"') or re.match(r"^[a-z_]+\{", comment):
                        block.answers.append((block.line + 1 + offset, comment))
    return blocks


# ---------------------------------------------------------------------------------------------------------
# Answers, loosely


STRING = r'"(?:[^"\\]|\\.)*"'
SCALAR = r'(?:' + STRING + r'|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|\[\]|\{\}|…)'
PAIR = re.compile(r'(' + STRING + r')\s*:\s*(' + SCALAR + r')')


def pattern_for_string(literal):
    """A regex for a JSON string literal in which `…` stands for any text."""
    pieces = literal[1:-1].split("…")
    return '"' + r'(?:[^"\\]|\\.)*?'.join(re.escape(piece) for piece in pieces) + '"'


def fragment_checks(fragment):
    """[(description, regex)] that the output must match for one documented answer, line by line."""
    checks = []
    for line in fragment.split("\n"):
        pairs = PAIR.findall(line)
        for key, value in pairs:
            key_pattern = re.escape(key) + r'\s*:\s*'
            if value == "…":
                checks.append((f"{key}: present", key_pattern))
            elif value.startswith('"'):
                checks.append((f"{key}: {value}", key_pattern + pattern_for_string(value)))
            elif value in ("[]", "{}"):
                checks.append((f"{key}: {value}", key_pattern + re.escape(value[0]) + r'\s*' + re.escape(value[1])))
            else:
                checks.append((f"{key}: {value}", key_pattern + re.escape(value) + r'(?=[\s,}\]]|$)'))
        text = line.strip()
        if pairs or text.startswith("…") or not re.search(r"\w", text):
            continue
        if text.startswith('"'):
            literal = re.match(STRING, text)
            text = literal.group(0) if literal else text
        elif text.startswith("["):
            text = text[:text.find("]") + 1] if "]" in text else text
        pieces = [re.escape(piece) for piece in text.split("…")]
        checks.append((text, re.sub(r"(\\ )+", r"\\s+", ".*?".join(pieces))))
    return checks


def check_answers(answers, output):
    """The answers' checks the output fails: [(README line, description)]."""
    failed = []
    for line, fragment in answers:
        for description, pattern in fragment_checks(fragment):
            if not re.search(pattern, output, re.DOTALL):
                failed.append((line, description))
    return failed


# ---------------------------------------------------------------------------------------------------------
# Gateways


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateways:
    """The check's gateways, one per README port, all on one data directory (as `./.gateway` would be)."""

    def __init__(self, binary, work, ports):
        self.binary, self.work, self.ports = binary, work, ports
        self.data_dir = os.path.join(work, ".gateway")
        self.running = {}  # README port -> (process, log path)
        self.starts = 0

    def start(self, block_text, deadline):
        command = " ".join(part.rstrip("\\").strip() for part in block_text.split("\n")
                           if part.strip() and not part.strip().startswith("#"))
        words = shlex.split(command, comments=True)
        environment = {}
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            name, value = words.pop(0).split("=", 1)
            environment[name] = value
        if words[:3] != ["swift", "run", "gateway"]:
            raise CheckError(f"a gateway block must be `[VAR=value …] swift run gateway [flags]`, not {command!r}")
        flags = words[3:]
        readme_port = 8080
        if "--port" in flags:
            at = flags.index("--port")
            readme_port = int(flags[at + 1])
            del flags[at:at + 2]
        if readme_port not in self.ports:
            self.ports[readme_port] = free_port()
        port = self.ports[readme_port]
        self.stop(readme_port)
        if "--data-dir" not in flags:
            flags += ["--data-dir", self.data_dir]
        self.starts += 1
        log_path = os.path.join(self.work, f"gateway-{self.starts}-{readme_port}.log")
        log = open(log_path, "w")
        process = subprocess.Popen([self.binary, "--port", str(port), *flags], cwd=self.work,
                                   env=dict(os.environ, **environment), stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        self.running[readme_port] = (process, log_path)
        tls = "--tls-cert" in flags
        url = f"{'https' if tls else 'http'}://127.0.0.1:{port}/healthz"
        context = ssl.create_default_context(cafile=os.path.join(self.work, flags[flags.index("--tls-cert") + 1])) \
            if tls else None
        limit = min(deadline, time.monotonic() + 180)
        while time.monotonic() < limit:
            if process.poll() is not None:
                raise CheckError(f"the gateway exited with {process.returncode}:\n" + tail(log_path))
            try:
                with urllib.request.urlopen(url, timeout=5, context=context) as answer:
                    if answer.status == 200:
                        return f"{'https' if tls else 'http'}://127.0.0.1:{port}"
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise CheckError(f"the gateway did not answer {url} within 180 s:\n" + tail(log_path))

    def stop(self, readme_port):
        process, _ = self.running.pop(readme_port, (None, None))
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT)  # as ^C in its terminal
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)

    def stop_all(self):
        for readme_port in list(self.running):
            self.stop(readme_port)


class CheckError(Exception):
    pass


def tail(path, lines=30):
    try:
        return "\n".join(open(path, errors="replace").read().splitlines()[-lines:])
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------------------
# Running blocks


def with_ports(text, ports):
    """The README's ports replaced by the check's."""
    def replace(match):
        port = int(match.group(2))
        if port not in ports:
            ports[port] = free_port()
        return f"{match.group(1)}{ports[port]}"
    return re.sub(r"(127\.0\.0\.1:|localhost:|--port )(" + "|".join(map(str, README_PORTS)) + r")\b", replace, text)


def run_block(block, text, work, state_file, variables, timeout):
    """Runs the block in a fresh bash with the saved variables; returns (exit status, output, seconds)."""
    names = " ".join(sorted(variables))
    script = (f"[ -f {shlex.quote(state_file)} ] && source {shlex.quote(state_file)}\n"
              f"trap 'declare -p {names} 2>/dev/null > {shlex.quote(state_file)}' EXIT\n"
              f"cd {shlex.quote(work)}\n{text}\n")
    environment = dict(os.environ, TMPDIR=work,
                       PATH=os.path.dirname(os.path.abspath(sys.executable)) + os.pathsep + os.environ["PATH"])
    started = time.monotonic()
    process = subprocess.Popen(["bash", "-c", script], cwd=work, env=environment, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return None, output.decode(errors="replace"), time.monotonic() - started
    return process.returncode, output.decode(errors="replace"), time.monotonic() - started


def module_available(name):
    found = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, timeout=60)
    return found.returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gateway", default=os.path.join(ROOT, ".build", "debug", "gateway"),
                        help="the gateway binary (default: .build/debug/gateway, built if absent)")
    parser.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    parser.add_argument("--block-timeout", type=float, default=120.0, help="seconds for one block")
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds for the whole run")
    parser.add_argument("--verbose", action="store_true", help="print every block's output")
    args = parser.parse_args()

    missing = [tool for tool in ("bash", "curl", "jq", "openssl") if shutil.which(tool) is None]
    if missing:
        raise SystemExit("the README's blocks need " + ", ".join(missing) + " (not found on PATH)")
    binary = args.gateway
    if not os.path.exists(binary):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import sandbox_gateway
        binary = sandbox_gateway.build()
    binary = os.path.abspath(binary)
    readme = os.path.abspath(args.readme)
    name = os.path.relpath(readme, ROOT) if readme.startswith(ROOT + os.sep) else readme

    blocks = parse_readme(readme)
    variables = set()
    for block in blocks:
        if block.language in RUNNABLE:
            variables.update(ASSIGNMENT.findall(block.text))
    work = tempfile.mkdtemp(prefix="gateway-readme-")
    os.symlink(os.path.join(ROOT, "scripts"), os.path.join(work, "scripts"))
    state_file = os.path.join(work, ".readme-check-variables")
    ports = {8080: free_port()}
    gateways = Gateways(binary, work, ports)
    deadline = time.monotonic() + args.deadline
    started = time.monotonic()
    failures, ran, skipped, answers_checked = [], 0, 0, 0

    def report_failure(block, message, output=""):
        failures.append(block.line)
        print(f"{name}:{block.line}: FAILED: {message}")
        if output:
            print("  output (last 40 lines):")
            for text in output.rstrip().split("\n")[-40:]:
                print("  | " + text[:300])

    try:
        for block in blocks:
            if block.is_answer:
                continue
            kind, argument = block.marker or (None, "")
            if kind == "file":
                with open(os.path.join(work, argument), "w") as file:
                    file.write(with_ports(block.text, ports) + "\n")
                print(f"{name}:{block.line}: wrote {argument}")
                continue
            if block.language not in RUNNABLE:
                continue
            if kind == "skip":
                skipped += 1
                print(f"{name}:{block.line}: skipped: {argument}")
                continue
            if kind == "needs-module" and not module_available(argument):
                skipped += 1
                print(f"{name}:{block.line}: skipped: python3 cannot import {argument}")
                continue
            if time.monotonic() > deadline:
                report_failure(block, f"not run: the run's deadline ({args.deadline:.0f} s) passed")
                continue
            if kind is None and UNSAFE.search(block.text):
                report_failure(block, "not run: a block that builds, tests or installs packages needs a marker "
                                      "(`<!-- readme-check: skip REASON -->`, or `gateway` for `swift run gateway`)")
                continue
            if kind == "gateway":
                moment = time.monotonic()
                try:
                    base = gateways.start(block.text, deadline)
                except CheckError as error:
                    report_failure(block, str(error))
                    break
                ran += 1
                print(f"{name}:{block.line}: gateway at {base} ({time.monotonic() - moment:.1f} s to /healthz)")
                continue
            text = with_ports(block.text, ports)
            answers = [(line, with_ports(fragment, ports)) for line, fragment in block.answers]
            timeout = max(1.0, min(args.block_timeout, deadline - time.monotonic()))
            status, output, seconds = run_block(block, text, work, state_file, variables, timeout)
            ran += 1
            if args.verbose:
                print(f"--- {name}:{block.line} output:\n{output}---")
            if status is None:
                report_failure(block, f"did not finish within {timeout:.0f} s", output)
                continue
            if status != 0:
                report_failure(block, f"exited {status}", output)
                continue
            failed = check_answers(answers, output)
            checks = sum(len(fragment_checks(fragment)) for _, fragment in answers)
            answers_checked += checks
            if failed:
                report_failure(block, "the answer differs from the README:\n" + "\n".join(
                    f"    {name}:{line}: expected {description}" for line, description in failed), output)
                continue
            print(f"{name}:{block.line}: ok ({len(answers)} answer(s), {checks} check(s), {seconds:.1f} s)")
    finally:
        gateways.stop_all()
    elapsed = time.monotonic() - started
    if failures:
        print(f"readme check: FAILED at {', '.join(f'{name}:{line}' for line in failures)} "
              f"({ran} blocks run, {skipped} skipped, {elapsed:.0f} s); logs kept in {work}")
        sys.exit(1)
    shutil.rmtree(work, ignore_errors=True)
    print(f"readme check: passed: {ran} blocks run, {skipped} skipped, {answers_checked} documented values "
          f"found in the answers, {elapsed:.0f} s")


if __name__ == "__main__":
    main()
