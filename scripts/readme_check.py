#!/usr/bin/env python3
"""Pastes the README's blocks and the tour's (docs/tour.md) into bash, block by block, against sandbox gateways
of its own, and checks every documented answer.

    python3 scripts/readme_check.py [--gateway .build/debug/gateway] [--readme README.md docs/tour.md …]
                                    [--require-postgres] [--verbose]

Stdlib only; the blocks themselves need bash, curl, jq and openssl (and PostgreSQL's server for the blocks
marked `needs-postgres`). Each file given to --readme (by default README.md, then docs/tour.md) is a run of
its own, as a reader who opens that page in a new terminal: its own temporary working directory (with
`scripts` linked to this repository's, so `scripts/…` in a block works), its own gateways, its own shell
variables. Neither page uses what the other set up: each starts its gateway and sets `KEY` and `BASE` itself.
Within one file, each ```sh block runs in order, in that working directory, each in a fresh `bash` that
starts with the shell variables the blocks before it set (`KEY`, `BASE`, `ID`…), as in one terminal.
`127.0.0.1:PORT` and `localhost:PORT` (and `--port PORT`, `-p PORT`) for the pages' ports 8080, 8081, 8443
and 5433 (PostgreSQL's) become free ports the check picks, in the blocks, the files and the documented
answers alike. `python3` in a block is the Python that runs this script (so a virtual environment's
packages are there).

What is checked for a block that runs: it exits 0 (its last command), and its output (stdout and stderr
together) holds every documented answer, loosely: each answer is
  - a `# {…}`, `# […]` or `# "…"` line in the block (a comment line starting with `{`, `[` or `"`; other
    comments are prose), or a `# name{label="…"} value` line (a Prometheus sample), or
  - the ```json (or plain ```) block that directly follows the block (blank lines between at most).
An answer with `"key": value` pairs needs each pair in the output, whitespace aside, where a value is a
string, a number, true/false/null, `[]` or `{}`, and `…` inside a string stands for any text; a key shown
with a bare `…` as its value need only be present; nested objects are checked pair by pair. An answer
without pairs (`"approved"`, `["twilio"]`, a metrics line) must appear as it is written (`…` = any text).

Markers (an HTML comment on the line just before a block's opening fence; several on consecutive lines all
apply to the block):
  <!-- readme-check: skip REASON -->        not run; the reason is printed
  <!-- readme-check: gateway -->            the block starts the gateway: its last command is
                                            `[VAR=value …] swift run gateway [flags]`, and the check
                                            (re)starts its own binary with those variables and flags, on
                                            the port the block names (8080 by default), with its own data
                                            directory unless the flags name one, and waits for /healthz.
                                            Commands before it (`export NAME="$(swift run gateway
                                            token-key generate)"`) run first, as a block runs, with
                                            `swift run gateway` meaning the check's binary; what they export
                                            is in that gateway's environment.
  <!-- readme-check: file NAME -->         the block is the content of the file NAME (written, not run)
  <!-- readme-check: needs-module NAME -->  run only when `python3` can import NAME; else skipped, saying so
  <!-- readme-check: needs-postgres -->    run only when PostgreSQL's server is installed
                                            (/usr/lib/postgresql/*/bin/initdb, Debian's layout); else
                                            skipped, saying so, or with --require-postgres (as CI runs it) a
                                            failure. When run as root the working directory is opened for
                                            traversal, so a block can run the server as `postgres`.
An unmarked block that builds or tests (`swift build|test|run`) or installs (`pip install`, `apt-get`,
`docker`) is not run: it fails the check until it carries a marker.

Every block has a time limit (--block-timeout, 120 s) and the whole run, every file, one too (--deadline,
900 s). However a file's run ends (passed, failed, timed out, ^C or SIGTERM), its gateways are stopped, and
every PostgreSQL cluster its blocks made under the working directory is stopped (`pg_ctl -m immediate`) and
the directory holding it removed; should the check itself be killed (SIGKILL), a watchdog started beside each
cluster does that. The working directory is removed too, except that a failed run keeps it (the gateways'
logs) and names it. Exits 1 naming the file and line of each block that failed.
"""
import argparse, glob, os, pwd, re, shlex, shutil, signal, ssl, subprocess, sys, tempfile, time
import urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PAGES = ("README.md", os.path.join("docs", "tour.md"))
README_PORTS = (8080, 8081, 8443, 5433)
PORT_PREFIXES = ("127.0.0.1:", "localhost:", "--port ", "-p ")
MARKER = re.compile(r"^<!--\s*readme-check:\s*(skip|gateway|file|needs-module|needs-postgres)\b\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^```(\w*)\s*$")
ASSIGNMENT = re.compile(r"(?:^|[\s;&|(])([A-Z][A-Z0-9_]*)=")
RUNNABLE = {"sh", "bash", "shell"}
UNSAFE = re.compile(r"\bswift\s+(build|test|run)\b|\bpip\s+install\b|\bapt-get\b|\bdocker\b")
ANSWER_LANGUAGES = {"json", ""}


class Block:
    def __init__(self, line, language, text, markers):
        self.line, self.language, self.text = line, language, text  # line: the opening fence's
        self.markers = dict(markers)  # kind -> argument, from the marker lines just before the fence
        self.answers = []  # (README line, fragment text)
        self.end = line  # 0-based index of the line after the closing fence
        self.is_answer = False


def parse_readme(path):
    """The fenced blocks, each with the marker before it; answers attached to the runnable blocks."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, index, pending_markers = [], 0, []
    while index < len(lines):
        line = lines[index]
        marker = MARKER.match(line)
        if marker:
            pending_markers.append((marker.group(1), marker.group(2)))
            index += 1
            continue
        fence = FENCE.match(line)
        if fence:
            start, body = index + 1, []
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                body.append(lines[index])
                index += 1
            blocks.append(Block(start, fence.group(1).lower(), "\n".join(body), pending_markers))
            blocks[-1].end = index + 1
            pending_markers = []
        elif line.strip():
            pending_markers = []
        index += 1
    # A json or plain block right after a runnable one (blank lines between at most) is its answer.
    for previous, block in zip(blocks, blocks[1:]):
        if previous.language in RUNNABLE and block.language in ANSWER_LANGUAGES and not block.markers:
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
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sandbox_gateway

    return sandbox_gateway.free_port()


def commands(block_text):
    """The block's commands, a backslash-continued line joined to the next; blank and comment lines left out."""
    found, current = [], []
    for line in block_text.split("\n"):
        if not current and (not line.strip() or line.strip().startswith("#")):
            continue
        current.append(line)
        if not line.rstrip().endswith("\\"):
            found.append("\n".join(current))
            current = []
    if current:
        found.append("\n".join(current))
    return found


class Gateways:
    """The check's gateways, one per README port, all on one data directory (as `./.gateway` would be) unless
    a block names its own."""

    def __init__(self, binary, work, ports):
        self.binary, self.work, self.ports = binary, work, ports
        self.data_dir = os.path.join(work, ".gateway")
        self.running = {}  # README port -> (process, log path)
        self.starts = 0

    def start(self, command, environment, deadline):
        """Starts `[VAR=value …] swift run gateway [flags]` with the extra environment; returns its base URL."""
        command = " ".join(part.rstrip("\\").strip() for part in command.split("\n"))
        words = shlex.split(command, comments=True)
        environment = dict(environment)
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            name, value = words.pop(0).split("=", 1)
            environment[name] = value
        if words[:3] != ["swift", "run", "gateway"]:
            raise CheckError(f"a gateway block must end in `[VAR=value …] swift run gateway [flags]`, not {command!r}")
        flags = words[3:]
        readme_port = 8080
        if "--port" in flags:
            at = flags.index("--port")
            readme_port = int(flags[at + 1])
            del flags[at:at + 2]
        if readme_port not in self.ports:
            self.ports[readme_port] = free_port()
        port = self.ports[readme_port]
        # The other ports the flags and variables name (a PostgreSQL URL's) are the check's too.
        flags = [with_ports(flag, self.ports, ("127.0.0.1:", "localhost:")) for flag in flags]
        environment = {name: with_ports(value, self.ports, ("127.0.0.1:", "localhost:"))
                       for name, value in environment.items()}
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
# PostgreSQL clusters the blocks start


def postgres_bin(version=None):
    """The newest Debian-layout PostgreSQL bin directory (or the given major version's), or None."""
    found = []
    for initdb in glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        name = os.path.basename(os.path.dirname(os.path.dirname(initdb)))
        if name.isdigit() and (version is None or name == version):
            found.append((int(name), os.path.dirname(initdb)))
    return max(found)[1] if found else None


class Clusters:
    """PostgreSQL data directories under a working directory: stopped, and the directory that holds each
    (the block's `mktemp -d`) removed, when the file's run ends, or by a watchdog if the check is killed."""

    def __init__(self, work):
        self.work = work
        self.watchdogs = {}  # data directory -> watchdog process

    def find(self):
        for directory, subdirectories, files in os.walk(self.work):
            if "PG_VERSION" in files and "postgresql.conf" in files:
                subdirectories[:] = []
                yield directory

    def holder(self, data):
        """The working directory's entry that holds the data directory (what the block made for it)."""
        first = os.path.relpath(data, self.work).split(os.sep)[0]
        return os.path.join(self.work, first)

    def stop_command(self, data):
        version = open(os.path.join(data, "PG_VERSION")).read().strip()
        binary = postgres_bin(version) or postgres_bin()
        command = [os.path.join(binary, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]
        owner = os.stat(data).st_uid
        if os.geteuid() == 0 and owner != 0:
            command = ["runuser", "-u", pwd.getpwuid(owner).pw_name, "--"] + command
        return command

    def watch(self):
        """A watchdog for each cluster started since the last call: it outlives this script only if the script
        dies without cleaning up (SIGKILL), and then stops the cluster and removes its directory."""
        for data in self.find():
            if data in self.watchdogs or not os.path.exists(os.path.join(data, "postmaster.pid")):
                continue
            script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                      f"{shlex.join(self.stop_command(data))} >/dev/null 2>&1; rm -rf {shlex.quote(self.holder(data))}")
            self.watchdogs[data] = subprocess.Popen(["/bin/sh", "-c", script], stdin=subprocess.DEVNULL,
                                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                    start_new_session=True)

    def stop_all(self):
        """Stops every cluster (its server log copied beside the gateways' first) and removes its directory."""
        stopped = 0
        for data in list(self.find()):
            holder = self.holder(data)
            if os.path.exists(os.path.join(data, "postmaster.pid")):
                subprocess.run(self.stop_command(data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=60)
                stopped += 1
            if holder != data and os.path.isdir(holder):
                for name in os.listdir(holder):
                    path = os.path.join(holder, name)
                    if os.path.isfile(path) and name.endswith("log"):
                        shutil.copyfile(path, os.path.join(self.work, f"postgres-{os.path.basename(holder)}-{name}"))
            shutil.rmtree(holder, ignore_errors=True)
        for watchdog in self.watchdogs.values():
            try:
                os.killpg(watchdog.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            watchdog.wait()
        self.watchdogs.clear()
        return stopped


# ---------------------------------------------------------------------------------------------------------
# Running blocks


def with_ports(text, ports, prefixes=PORT_PREFIXES):
    """The pages' ports replaced by the check's."""
    def replace(match):
        port = int(match.group(2))
        if port not in ports:
            ports[port] = free_port()
        return f"{match.group(1)}{ports[port]}"
    return re.sub("(" + "|".join(map(re.escape, prefixes)) + r")(" + "|".join(map(str, README_PORTS)) + r")\b",
                  replace, text)


def run_block(text, work, state_file, variables, timeout, binary=None, environment_file=None):
    """Runs the text in a fresh bash with the saved variables; returns (exit status, output, seconds). With a
    binary, `swift run gateway …` runs it; with an environment file, the shell's environment is written there
    (NUL-separated) when it exits."""
    names = " ".join(sorted(variables))
    on_exit = f"declare -p {names} 2>/dev/null > {shlex.quote(state_file)}"
    if environment_file:
        on_exit += f"; env -0 > {shlex.quote(environment_file)}"
    swift = ""
    if binary:
        swift = ('swift() { if [ "$1" = run ] && [ "$2" = gateway ]; then shift 2; '
                 f'{shlex.quote(binary)} "$@"; else echo "readme check: only \\`swift run gateway\\` runs here" >&2; '
                 'return 127; fi; }\n')
    script = (f"[ -f {shlex.quote(state_file)} ] && source {shlex.quote(state_file)}\n"
              f"trap {shlex.quote(on_exit)} EXIT\n{swift}"
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
    except BaseException:  # ^C or SIGTERM: the block's processes end with the check
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    return process.returncode, output.decode(errors="replace"), time.monotonic() - started


def module_available(name):
    found = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, timeout=60)
    return found.returncode == 0


class Tally:
    def __init__(self):
        self.ran = self.skipped = self.answers_checked = 0
        self.failures = []  # "file:line"


def run_page(page, binary, args, deadline, tally):
    """Runs one page's blocks in a working directory of its own; returns the directory if it was kept."""
    name = os.path.relpath(page, ROOT) if page.startswith(ROOT + os.sep) else page
    blocks = parse_readme(page)
    variables = set()
    for block in blocks:
        if block.language in RUNNABLE:
            variables.update(ASSIGNMENT.findall(block.text))
    work = tempfile.mkdtemp(prefix="gateway-readme-")
    os.symlink(os.path.join(ROOT, "scripts"), os.path.join(work, "scripts"))
    state_file = os.path.join(work, ".readme-check-variables")
    ports = {8080: free_port()}
    gateways = Gateways(binary, work, ports)
    clusters = Clusters(work)
    failures = []

    def report_failure(block, message, output=""):
        failures.append(f"{name}:{block.line}")
        print(f"{name}:{block.line}: FAILED: {message}")
        if output:
            print("  output (last 40 lines):")
            for text in output.rstrip().split("\n")[-40:]:
                print("  | " + text[:300])

    try:
        for block in blocks:
            if block.is_answer:
                continue
            markers = block.markers
            if "file" in markers:
                with open(os.path.join(work, markers["file"]), "w") as file:
                    file.write(with_ports(block.text, ports) + "\n")
                print(f"{name}:{block.line}: wrote {markers['file']}")
                continue
            if block.language not in RUNNABLE:
                continue
            if "skip" in markers:
                tally.skipped += 1
                print(f"{name}:{block.line}: skipped: {markers['skip']}")
                continue
            if "needs-module" in markers and not module_available(markers["needs-module"]):
                tally.skipped += 1
                print(f"{name}:{block.line}: skipped: python3 cannot import {markers['needs-module']}")
                continue
            if "needs-postgres" in markers:
                if postgres_bin() is None:
                    reason = "no PostgreSQL server under /usr/lib/postgresql/*/bin (apt-get install postgresql)"
                    if args.require_postgres:
                        report_failure(block, f"not run: {reason}, and --require-postgres")
                        continue
                    tally.skipped += 1
                    print(f"{name}:{block.line}: skipped: {reason}")
                    continue
                if os.geteuid() == 0:
                    os.chmod(work, 0o711)  # the block runs the server as `postgres`, in a directory under it
            if time.monotonic() > deadline:
                report_failure(block, f"not run: the run's deadline ({args.deadline:.0f} s) passed")
                continue
            if "skip" not in markers and "gateway" not in markers and UNSAFE.search(block.text):
                report_failure(block, "not run: a block that builds, tests or installs packages needs a marker "
                                      "(`<!-- readme-check: skip REASON -->`, or `gateway` for `swift run gateway`)")
                continue
            if "gateway" in markers:
                moment = time.monotonic()
                steps = commands(block.text)
                environment = {}
                if len(steps) > 1:
                    prelude = with_ports("\n".join(steps[:-1]), ports)
                    environment_file = os.path.join(work, ".readme-check-environment")
                    timeout = max(1.0, min(args.block_timeout, deadline - time.monotonic()))
                    status, output, _ = run_block(prelude, work, state_file, variables, timeout, binary=binary,
                                                  environment_file=environment_file)
                    if status != 0:
                        report_failure(block, "the commands before the gateway's "
                                       + ("did not finish" if status is None else f"exited {status}"), output)
                        break
                    exported = dict(entry.split("=", 1) for entry in
                                    open(environment_file, encoding="utf-8", errors="replace").read().split("\0")
                                    if "=" in entry)
                    os.remove(environment_file)
                    environment = {variable: exported[variable] for variable in ASSIGNMENT.findall(prelude)
                                   if variable in exported}
                try:
                    base = gateways.start(steps[-1], environment, deadline)
                except CheckError as error:
                    report_failure(block, str(error))
                    break
                tally.ran += 1
                extra = f", with {', '.join(sorted(environment))} from the block" if environment else ""
                print(f"{name}:{block.line}: gateway at {base} ({time.monotonic() - moment:.1f} s to /healthz{extra})")
                continue
            text = with_ports(block.text, ports)
            answers = [(line, with_ports(fragment, ports)) for line, fragment in block.answers]
            timeout = max(1.0, min(args.block_timeout, deadline - time.monotonic()))
            status, output, seconds = run_block(text, work, state_file, variables, timeout)
            if "needs-postgres" in markers:
                clusters.watch()
            tally.ran += 1
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
            tally.answers_checked += checks
            if failed:
                report_failure(block, "the answer differs from the page:\n" + "\n".join(
                    f"    {name}:{line}: expected {description}" for line, description in failed), output)
                continue
            print(f"{name}:{block.line}: ok ({len(answers)} answer(s), {checks} check(s), {seconds:.1f} s)")
    except BaseException:
        print(f"{name}: interrupted; logs kept in {work}")
        raise
    finally:
        gateways.stop_all()
        stopped = clusters.stop_all()
        if stopped:
            print(f"{name}: stopped {stopped} PostgreSQL server(s) the blocks left running; their directories removed")
    tally.failures += failures
    if failures:
        return work
    shutil.rmtree(work, ignore_errors=True)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gateway", default=os.path.join(ROOT, ".build", "debug", "gateway"),
                        help="the gateway binary (default: .build/debug/gateway, built if absent)")
    parser.add_argument("--readme", nargs="+", default=[os.path.join(ROOT, page) for page in DEFAULT_PAGES],
                        metavar="PAGE", help="the pages to run, each a run of its own "
                                             "(default: README.md docs/tour.md)")
    parser.add_argument("--require-postgres", action="store_true",
                        help="fail, rather than skip, the needs-postgres blocks when PostgreSQL is not installed")
    parser.add_argument("--block-timeout", type=float, default=120.0, help="seconds for one block")
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds for the whole run")
    parser.add_argument("--verbose", action="store_true", help="print every block's output")
    args = parser.parse_args()

    missing = [tool for tool in ("bash", "curl", "jq", "openssl") if shutil.which(tool) is None]
    if missing:
        raise SystemExit("the pages' blocks need " + ", ".join(missing) + " (not found on PATH)")
    binary = args.gateway
    if not os.path.exists(binary):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import sandbox_gateway
        binary = sandbox_gateway.build()
    binary = os.path.abspath(binary)
    pages = [os.path.abspath(page) for page in args.readme]
    # SIGTERM and SIGHUP end the run as ^C does, through the cleanup.
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda received, _: sys.exit(128 + received))

    deadline = time.monotonic() + args.deadline
    started = time.monotonic()
    tally, kept, per_page = Tally(), [], []
    for page in pages:
        before = (tally.ran, tally.skipped)
        work = run_page(page, binary, args, deadline, tally)
        if work:
            kept.append(work)
        name = os.path.relpath(page, ROOT) if page.startswith(ROOT + os.sep) else page
        per_page.append(f"{name} {tally.ran - before[0]} run, {tally.skipped - before[1]} skipped")
    elapsed = time.monotonic() - started
    if tally.failures:
        print(f"readme check: FAILED at {', '.join(tally.failures)} ({tally.ran} blocks run, {tally.skipped} "
              f"skipped: {'; '.join(per_page)}; {elapsed:.0f} s); logs kept in {', '.join(kept)}")
        sys.exit(1)
    print(f"readme check: passed: {tally.ran} blocks run, {tally.skipped} skipped ({'; '.join(per_page)}), "
          f"{tally.answers_checked} documented values found in the answers, {elapsed:.0f} s")


if __name__ == "__main__":
    main()
