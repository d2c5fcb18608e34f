#!/usr/bin/env python3
"""Agreement check and benchmark of the gateway's phone-number parser against libphonenumber.

    phonecheck.py corpus [--size N] [--seed S] [--out FILE]   draw a corpus
    phonecheck.py agree  [--size N] [--seed S] [--binary B]   corpus -> Swift results -> compare
    phonecheck.py bench  [--size N] [--seed S] [--binary B] [--seconds T]   throughput, both sides
    phonecheck.py fuzz   [--size N] [--seed S] [--binary B]   random strings of phone-ish pieces -> compare
    phonecheck.py cpp    [--size N] [--seed S] [--binary B] --cpp-binary C [--seconds T]
                         throughput beside Google's C++ libphonenumber, and agreement with it

The corpus is drawn at random, with a fixed and recorded seed, from libphonenumber's example numbers of
every type in every region and non-geographic calling code, written in the forms users type (E.164,
international, national with the region, dialled from another region with its international prefix,
IDaaS's `+CC-number`, punctuation, full-width digits, extensions, `tel:` URIs), and from non-example
numbers made from them (digits changed, dropped or added, wrong regions, random digit strings, garbage).

The Swift side is the `phone-benchmark` executable (build it in release mode first, or use run.sh). The
Python side is the `phonenumbers` package, libphonenumber's Python port, with its pattern cache enabled
(its fastest configuration).
"""
import argparse
import collections
import os
import random
import subprocess
import sys
import tempfile
import time

import phonenumbers
from phonenumbers import PhoneNumberFormat, PhoneNumberType
from phonenumbers.phonemetadata import PhoneMetadata
from phonenumbers.phonenumberutil import COUNTRY_CODES_FOR_NON_GEO_REGIONS, SUPPORTED_REGIONS
from phonenumbers.re_util import enable_pattern_cache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BINARY = os.path.join(ROOT, ".build", "release", "phone-benchmark")
DEFAULT_SEED = 20261122
DEFAULT_SIZE = 100_000

TYPE_NAMES = {
    PhoneNumberType.FIXED_LINE: "FIXED_LINE", PhoneNumberType.MOBILE: "MOBILE",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "FIXED_LINE_OR_MOBILE", PhoneNumberType.TOLL_FREE: "TOLL_FREE",
    PhoneNumberType.PREMIUM_RATE: "PREMIUM_RATE", PhoneNumberType.SHARED_COST: "SHARED_COST",
    PhoneNumberType.VOIP: "VOIP", PhoneNumberType.PERSONAL_NUMBER: "PERSONAL_NUMBER",
    PhoneNumberType.PAGER: "PAGER", PhoneNumberType.UAN: "UAN", PhoneNumberType.VOICEMAIL: "VOICEMAIL",
    PhoneNumberType.UNKNOWN: "UNKNOWN",
}
ERROR_NAMES = {0: "INVALID_COUNTRY_CODE", 1: "NOT_A_NUMBER", 2: "TOO_SHORT_AFTER_IDD", 3: "TOO_SHORT_NSN", 4: "TOO_LONG"}
DESC_TYPES = [
    ("fixed_line", PhoneNumberType.FIXED_LINE), ("mobile", PhoneNumberType.MOBILE),
    ("toll_free", PhoneNumberType.TOLL_FREE), ("premium_rate", PhoneNumberType.PREMIUM_RATE),
    ("shared_cost", PhoneNumberType.SHARED_COST), ("voip", PhoneNumberType.VOIP),
    ("personal_number", PhoneNumberType.PERSONAL_NUMBER), ("pager", PhoneNumberType.PAGER),
    ("uan", PhoneNumberType.UAN), ("voicemail", PhoneNumberType.VOICEMAIL),
]
FULL_WIDTH = {str(d): chr(0xFF10 + d) for d in range(10)}
SEPARATORS = [" ", " ", "-", "-", ".", "/", "\u00a0", "\u2013", "\u3000", ""]
EXTENSIONS = [" ext. {}", " x{}", " X{}", ";ext={}", " #{}", " extension {}", ", {}", " ext {}#", " doб {}", " anexo {}"]
GARBAGE = ["", "+", "++", "abc", "call me", "12", "+1", "+0", "00", "N/A", "tel:", "１", "+-", "(((", "0000000000000000000"]


def load_examples():
    """Every example number of every type: (region or None for non-geographic, number object, type)."""
    PhoneMetadata.load_all()
    examples = []
    for region in sorted(SUPPORTED_REGIONS):
        metadata = PhoneMetadata.metadata_for_region(region)
        for field, _ in DESC_TYPES:
            desc = getattr(metadata, field)
            if desc is not None and desc.example_number:
                examples.append((region, phonenumbers.parse(desc.example_number, region)))
    for code in sorted(COUNTRY_CODES_FOR_NON_GEO_REGIONS):
        metadata = PhoneMetadata.metadata_for_nongeo_region(code)
        for field, _ in DESC_TYPES:
            desc = getattr(metadata, field)
            if desc is not None and desc.example_number:
                examples.append((None, phonenumbers.parse("+%d%s" % (code, desc.example_number))))
    return examples


def nsn(number):
    return phonenumbers.national_significant_number(number)


def sprinkle(rng, text):
    """Random separators between the characters of a digit string."""
    out = []
    for index, char in enumerate(text):
        out.append(char)
        if index < len(text) - 1 and rng.random() < 0.3:
            out.append(rng.choice(SEPARATORS))
    return "".join(out)


def mutate_digits(rng, digits):
    kind = rng.randrange(4)
    digits = list(digits)
    if kind == 0 and digits:  # change 1-3 digits
        for _ in range(rng.randint(1, 3)):
            digits[rng.randrange(len(digits))] = str(rng.randrange(10))
    elif kind == 1 and len(digits) > 1:  # drop 1-3 digits from the end
        del digits[-rng.randint(1, min(3, len(digits) - 1)):]
    elif kind == 2:  # add 1-3 digits
        digits.extend(str(rng.randrange(10)) for _ in range(rng.randint(1, 3)))
    else:  # drop a digit in the middle
        if digits:
            del digits[rng.randrange(len(digits))]
    return "".join(digits)


def draw(rng, examples, regions):
    """One corpus entry: (kind, region or '', input)."""
    region, number = rng.choice(examples)
    cc = number.country_code
    national = nsn(number)
    home = region or ""
    other = rng.choice(regions)
    roll = rng.randrange(100)
    if roll < 8:
        return "e164", rng.choice(["", other]), "+%d%s" % (cc, national)
    if roll < 16:
        return "international", rng.choice(["", other]), phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL)
    if roll < 26 and region:
        return "national", home, phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)
    if roll < 31 and region:
        digits = "".join(c for c in phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL) if c.isdigit())
        return "national_digits", home, digits
    if roll < 34 and region:
        return "national_without_prefix", home, national
    if roll < 40:
        return "dialled_from_other_region", other, phonenumbers.format_out_of_country_calling_number(number, other)
    if roll < 43:
        return "idaas", "", "+%d-%s" % (cc, national)
    if roll < 48:
        return "punctuation", rng.choice(["", home]), "+" + sprinkle(rng, "%d%s" % (cc, national))
    if roll < 50:
        text = phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL)
        return "full_width", "", "".join(FULL_WIDTH.get(c, c) for c in text).replace("+", rng.choice(["+", "\uff0b"]))
    if roll < 54:
        ext = str(rng.randrange(1, 10 ** rng.randint(1, 6)))
        text = phonenumbers.format_number(number, rng.choice([PhoneNumberFormat.INTERNATIONAL, PhoneNumberFormat.E164]))
        return "extension", "", text + rng.choice(EXTENSIONS).format(ext)
    if roll < 56:
        return "rfc3966", "", rng.choice([
            phonenumbers.format_number(number, PhoneNumberFormat.RFC3966),
            "tel:%s;phone-context=+%d" % (national, cc),
        ])
    if roll < 58:
        return "text_around", rng.choice(["", home]), rng.choice(["Tel: ", "phone ", "call "]) + \
            phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL) + rng.choice(["", " ", ".", " (work)"])
    if roll < 60 and region:
        return "cc_without_plus", home, "%d %s" % (cc, national)
    # Non-example numbers.
    if roll < 72:
        return "changed_e164", rng.choice(["", other]), "+%d%s" % (cc, mutate_digits(rng, national))
    if roll < 82 and region:
        return "changed_national", home, phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)[:2] + \
            mutate_digits(rng, national)
    if roll < 86:
        length = rng.randint(1, 18)
        return "random_digits", rng.choice(["", other, other]), "".join(str(rng.randrange(10)) for _ in range(length))
    if roll < 89:
        length = rng.randint(4, 16)
        return "random_plus", "", "+" + "".join(str(rng.randrange(10)) for _ in range(length))
    if roll < 92:
        prefix = rng.choice(["0", "00", "011", "000", "8", "810", "0011", "+0", "+00"])
        return "random_prefix", other, prefix + mutate_digits(rng, "%d%s" % (cc, national))
    if roll < 94:
        return "wrong_region", other, national
    if roll < 96 and region:
        invalid = phonenumbers.invalid_example_number(region)
        if invalid is not None:
            return "invalid_example", rng.choice(["", home]), "+%d%s" % (invalid.country_code, nsn(invalid))
    if roll < 98:
        return "garbage", rng.choice(["", other]), rng.choice(GARBAGE)
    return "e164", "", "+%d%s" % (cc, national)


def escape(text):
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def make_corpus(size, seed):
    rng = random.Random(seed)
    examples = load_examples()
    regions = sorted(SUPPORTED_REGIONS)
    corpus = []
    while len(corpus) < size:
        corpus.append(draw(rng, examples, regions))
    return corpus, len(examples)


def write_corpus(corpus, path):
    with open(path, "w", encoding="utf-8") as out:
        for _, region, text in corpus:
            out.write("%s\t%s\n" % (region, escape(text)))


def python_result(region, text):
    try:
        number = phonenumbers.parse(text, region or None)
    except phonenumbers.NumberParseException as error:
        return ("error", ERROR_NAMES[error.error_type])
    number_type = phonenumbers.number_type(number)
    return (
        "ok", "1" if phonenumbers.is_valid_number(number) else "0",
        phonenumbers.format_number(number, PhoneNumberFormat.E164),
        phonenumbers.region_code_for_number(number) or "-", TYPE_NAMES[number_type],
        "1" if phonenumbers.is_possible_number(number) else "0", number.extension or "",
        phonenumbers.format_number(number, PhoneNumberFormat.INTERNATIONAL),
        phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL),
    )


def unescape_fields(line):
    fields = []
    for field in line.split("\t"):
        out, index = [], 0
        while index < len(field):
            if field[index] == "\\" and index + 1 < len(field):
                out.append({"t": "\t", "n": "\n"}.get(field[index + 1], field[index + 1]))
                index += 2
            else:
                out.append(field[index])
                index += 1
        fields.append("".join(out))
    return tuple(fields)


def run_swift(binary, corpus_path):
    with tempfile.NamedTemporaryFile("r", suffix=".tsv", delete=False, encoding="utf-8") as handle:
        results_path = handle.name
    subprocess.run([binary, "results", corpus_path, results_path], check=True, stdout=subprocess.DEVNULL)
    with open(results_path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    os.unlink(results_path)
    return [unescape_fields(line) for line in lines if line]


def agree(args):
    corpus, example_count = make_corpus(args.size, args.seed)
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as handle:
        corpus_path = handle.name
    write_corpus(corpus, corpus_path)
    swift = run_swift(args.binary, corpus_path)
    os.unlink(corpus_path)
    if len(swift) != len(corpus):
        raise SystemExit("Swift wrote %d results for %d inputs" % (len(swift), len(corpus)))

    # The done criterion: same outcome (parsed or not), validity, E.164, region and type.
    agreed = 0
    fields = collections.Counter()
    formats_agreed = 0
    parsed_both = 0
    by_kind = collections.defaultdict(lambda: [0, 0])
    disagreements = []
    for (kind, region, text), ours in zip(corpus, swift):
        theirs = python_result(region, text)
        core_ours = ours[:5] if ours[0] == "ok" else ours[:2]
        core_theirs = theirs[:5] if theirs[0] == "ok" else theirs[:2]
        # Errors agree only when they are of the same libphonenumber type.
        same = core_ours == core_theirs
        by_kind[kind][1] += 1
        if same:
            agreed += 1
            by_kind[kind][0] += 1
        else:
            if len(disagreements) < args.show:
                disagreements.append((kind, region, text, core_theirs, core_ours))
        if ours[0] == "ok" and theirs[0] == "ok":
            parsed_both += 1
            for index, name in enumerate(["valid", "e164", "region", "type", "possible", "extension",
                                          "international", "national"], start=1):
                if ours[index] == theirs[index]:
                    fields[name] += 1
            if ours[7:9] == theirs[7:9]:
                formats_agreed += 1

    total = len(corpus)
    print("phonenumbers %s, seed %d, %d inputs drawn from %d example numbers of %d regions and %d "
          "non-geographic codes" % (phonenumbers.__version__, args.seed, total, example_count,
                                     len(SUPPORTED_REGIONS), len(COUNTRY_CODES_FOR_NON_GEO_REGIONS)))
    print("agreement (parse outcome, validity, E.164, region, type): %d / %d = %.3f%%"
          % (agreed, total, 100.0 * agreed / total))
    print("parsed by both: %d; per field among them:" % parsed_both)
    for name in ["valid", "e164", "region", "type", "possible", "extension", "international", "national"]:
        print("  %-14s %.3f%%" % (name, 100.0 * fields[name] / max(1, parsed_both)))
    print("by input kind:")
    for kind in sorted(by_kind):
        good, count = by_kind[kind]
        print("  %-26s %6d / %6d  %.3f%%" % (kind, good, count, 100.0 * good / count))
    for kind, region, text, theirs, ours in disagreements:
        print("DIFF %s region=%r input=%r\n  phonenumbers: %s\n  gateway:      %s" % (kind, region, text, theirs, ours))
    return 0 if agreed * 1000 >= total * 999 else 1


FUZZ_PIECES = list("0123456789") * 6 + list("+\uff0b -.()/x#;,~*") + [
    "ext", "ext.", " ext ", "x", "X", "tel:", ";phone-context=", ";ext=", ";isub=", "anexo", "\u0434\u043e\u0431",
    "\uff45\uff58\uff54", "\uff11", "\u0663", "\u00b2", "a", "Z", "\t", "\n", "_", "\u00a0", "(0)", "00", "011", "+1",
    "+44", "+86-", "\u0131", "\u017f", "\u00df", "\u0301", "\u00f3"]


def fuzz(args):
    """Random strings built from the pieces phone numbers and their decorations are made of: a search for
    inputs where the two parsers part ways, beyond the corpus of the done criterion."""
    rng = random.Random(args.seed)
    PhoneMetadata.load_all()
    regions = sorted(SUPPORTED_REGIONS)
    corpus = []
    for _ in range(args.size):
        text = "".join(rng.choice(FUZZ_PIECES) for _ in range(rng.randint(0, 25)))
        corpus.append(("fuzz", rng.choice(["", "", rng.choice(regions)]), text))
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as handle:
        corpus_path = handle.name
    write_corpus(corpus, corpus_path)
    swift = run_swift(args.binary, corpus_path)
    os.unlink(corpus_path)
    mismatches = 0
    for (_, region, text), ours in zip(corpus, swift):
        theirs = python_result(region, text)
        if theirs != ours:
            mismatches += 1
            if mismatches <= args.show:
                print("DIFF region=%r input=%r\n  phonenumbers: %s\n  gateway:      %s" % (region, text, theirs, ours))
    print("fuzz seed %d: %d / %d inputs agree on every field (%d differ)"
          % (args.seed, len(corpus) - mismatches, len(corpus), mismatches))
    return 0 if mismatches == 0 else 1


def bench(args):
    corpus, _ = make_corpus(args.size, args.seed)
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as handle:
        corpus_path = handle.name
    write_corpus(corpus, corpus_path)
    entries = [(region or None, text) for _, region, text in corpus]

    enable_pattern_cache()
    PhoneMetadata.load_all()

    def one_round(full):
        for region, text in entries:
            try:
                number = phonenumbers.parse(text, region)
            except phonenumbers.NumberParseException:
                continue
            if full:
                phonenumbers.is_valid_number(number)
            phonenumbers.number_type(number)

    results = {}
    for label, full in (("parse + is_valid_number + number_type", True), ("parse + number_type", False)):
        one_round(full)  # warm the pattern cache
        rounds, start = 0, time.perf_counter()
        while True:
            one_round(full)
            rounds += 1
            elapsed = time.perf_counter() - start
            if elapsed >= args.seconds:
                break
        results[label] = rounds * len(entries) / elapsed

    output = subprocess.run([args.binary, "bench", corpus_path, str(args.seconds)], check=True,
                            capture_output=True, text=True).stdout
    os.unlink(corpus_path)
    swift = dict(line.split("\t")[:2] for line in output.strip().split("\n"))
    ours = float(swift["per_second"])
    print("corpus: %d inputs, seed %d (phonenumbers %s, Python %s)" % (len(entries), args.seed,
                                                                       phonenumbers.__version__, sys.version.split()[0]))
    print("gateway (Swift, parse + region + type + validity): %.0f inputs/s (%.2f us each); metadata load %s ms"
          % (ours, 1e6 / ours, swift["metadata_load_ms"]))
    for label, rate in results.items():
        print("phonenumbers (%s): %.0f inputs/s (%.2f us each) -> gateway is %.1fx"
              % (label, rate, 1e6 / rate, ours / rate))
    return 0


def cpp(args):
    """Throughput of the gateway beside Google's C++ libphonenumber (Debian's build, driven by
    cpp_phonebench.cc) on the same corpus, single thread, then agreement with it, reported apart: the
    Debian package carries older metadata than the gateway's (and phonenumbers') version."""
    corpus, _ = make_corpus(args.size, args.seed)
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as handle:
        corpus_path = handle.name
    write_corpus(corpus, corpus_path)

    def timed(binary):
        output = subprocess.run([binary, "bench", corpus_path, str(args.seconds)], check=True,
                                capture_output=True, text=True).stdout
        return dict(line.split("\t")[:2] for line in output.strip().split("\n"))

    ours = float(timed(args.binary)["per_second"])
    theirs = timed(args.cpp_binary)
    full, pared = float(theirs["full_per_second"]), float(theirs["parse_type_per_second"])
    swift = run_swift(args.binary, corpus_path)
    cpp_results = run_swift(args.cpp_binary, corpus_path)  # same `results CORPUS OUT` protocol
    os.unlink(corpus_path)
    agreed, parsed_both, type_differs, valid_differs, error_differs = 0, 0, 0, 0, 0
    examples = []
    for (kind, region, text), a, b in zip(corpus, swift, cpp_results):
        core_a = a[:5] if a[0] == "ok" else a[:2]
        core_b = b[:5] if b[0] == "ok" else b[:2]
        if core_a == core_b:
            agreed += 1
            continue
        if a[0] == "ok" and b[0] == "ok":
            parsed_both += 1
            valid_differs += a[1] != b[1]
            type_differs += a[4] != b[4]
        else:
            error_differs += 1
        if len(examples) < args.show:
            examples.append((kind, region, text, core_b, core_a))
    total = len(corpus)
    print("corpus: %d inputs, seed %d (the same corpus as `run.sh bench`)" % (total, args.seed))
    print("RESULT phone_gateway_per_s %.0f" % ours)
    print("RESULT phone_cpp_full_per_s %.0f" % full)
    print("RESULT phone_cpp_parse_type_per_s %.0f" % pared)
    print("RESULT phone_agree %d %d" % (agreed, total))
    print("gateway (Swift, parse + region + type + validity): %.0f inputs/s (%.2f us each)" % (ours, 1e6 / ours))
    print("C++ libphonenumber (Parse + IsValidNumber + GetNumberType): %.0f inputs/s (%.2f us each) -> gateway is %.2fx"
          % (full, 1e6 / full, ours / full))
    print("C++ libphonenumber (Parse + GetNumberType): %.0f inputs/s (%.2f us each) -> gateway is %.2fx"
          % (pared, 1e6 / pared, ours / pared))
    print("C++ metadata load: %s ms" % theirs["metadata_load_ms"])
    print("agreement with C++ libphonenumber (parse outcome, validity, E.164, region, type): %d / %d = %.3f%%"
          % (agreed, total, 100.0 * agreed / total))
    print("  of the %d that differ: %d parsed by both (validity differs %d, type differs %d), %d differ in "
          "parse outcome or error type" % (total - agreed, parsed_both, valid_differs, type_differs, error_differs))
    for kind, region, text, theirs_fields, ours_fields in examples:
        print("DIFF %s region=%r input=%r\n  C++ libphonenumber: %s\n  gateway:            %s"
              % (kind, region, text, theirs_fields, ours_fields))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["corpus", "agree", "bench", "fuzz", "cpp"])
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--binary", default=DEFAULT_BINARY)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--show", type=int, default=30, help="disagreements to print")
    parser.add_argument("--out", default="phone-corpus.tsv")
    parser.add_argument("--cpp-binary", help="phonebench-cpp, built from cpp_phonebench.cc (run.sh cpp)")
    args = parser.parse_args()
    if args.command == "corpus":
        corpus, _ = make_corpus(args.size, args.seed)
        write_corpus(corpus, args.out)
        print("wrote %d inputs to %s (seed %d)" % (len(corpus), args.out, args.seed))
        return 0
    if args.command == "agree":
        return agree(args)
    if args.command == "fuzz":
        return fuzz(args)
    if args.command == "cpp":
        return cpp(args)
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
