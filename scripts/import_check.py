#!/usr/bin/env python3
"""Every module a target imports is one it declares in Package.swift: a target of this package (SwiftPM's
`--explicit-target-dependency-import-check error` checks those) or a product of another package (which that
check does not look at: a module reached through another target's dependency builds today and breaks when that
dependency changes).

    python3 scripts/import_check.py     # reads `swift package dump-package`; exits 1 naming each undeclared import

The toolchain's own modules (Foundation, Dispatch, Glibc, Synchronization, Testing, XCTest…) need no declaration.
A product's module is its name, except where MODULES says otherwise.
"""
import glob, json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLCHAIN = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Musl", "Darwin",
    "Synchronization", "Testing", "XCTest", "os", "_Concurrency", "Observation", "RegexBuilder",
}
# Products whose modules are named otherwise (product name -> modules it brings).
MODULES = {}
IMPORT = re.compile(r"^\s*(?:@[\w(). ]+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)",
                    re.M)


def main():
    dump = json.loads(subprocess.check_output(["swift", "package", "dump-package"], cwd=ROOT))
    problems = []
    for target in dump["targets"]:
        if target["type"] in ("system", "plugin", "binary"):
            continue
        declared = set()
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            name = value[0]
            declared.update(MODULES.get(name, [name]) if kind == "product" else [name])
        declared = {name.replace("-", "_") for name in declared}
        default = ("Tests/" if target["type"] == "test" else "Sources/") + target["name"]
        path = os.path.join(ROOT, target.get("path") or default)
        for file in sorted(glob.glob(os.path.join(path, "**", "*.swift"), recursive=True)):
            text = open(file, encoding="utf-8").read()
            for module in IMPORT.findall(text):
                if module not in declared and module not in TOOLCHAIN and module != target["name"]:
                    problems.append(f"{os.path.relpath(file, ROOT)}: imports {module}, "
                                    f"which target {target['name']} does not declare")
    for problem in sorted(set(problems)):
        print(problem)
    if problems:
        sys.exit(1)
    print(f"import check: every import of {len(dump['targets'])} targets is declared")


if __name__ == "__main__":
    main()
